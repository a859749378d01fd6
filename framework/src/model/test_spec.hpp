// The test model: every semantic knob of a test as a named, validated
// parameter (docs/architecture.md). Suites are parsed into these structs, the
// engine runs them and results echo them back verbatim (results/record.hpp),
// so two numbers can always be told apart by what was measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::model {

// Every enum's values run from 0 to its k...Count - 1 and to_string names
// each: the field table (model/flow_fields.hpp) walks them by index to list,
// parse and print a knob's choices.
enum class Pattern : std::uint8_t { latency, bandwidth, message_rate };
inline constexpr std::size_t kPatternCount = 3;
enum class Direction : std::uint8_t { uni, bi };
inline constexpr std::size_t kDirectionCount = 2;
/// streaming: refill the window on every completion (perftest, wait-any).
/// window_ack: post `window` ops back to back, wait for all of them and for
/// the receiver's ack, repeat (OSU, fabtests, the PCIe study; wait-all).
enum class WindowMode : std::uint8_t { streaming, window_ack };
inline constexpr std::size_t kWindowModeCount = 2;
enum class CompletionMode : std::uint8_t { poll, event };
inline constexpr std::size_t kCompletionModeCount = 2;
/// Which buffer slots a bandwidth stream touches. cycle: consecutive posts
/// use consecutive slots of a window-sized ring (perftest's cyclic buffer: no
/// two requests in flight share bytes, the footprint is window x size).
/// single: every post reuses slot 0 on both sides (ucx_perftest, OSU: a
/// cache-resident buffer, the transport's best case). Latency, atomics and
/// write latency always use slot 0.
enum class BufferMode : std::uint8_t { cycle, single };
inline constexpr std::size_t kBufferModeCount = 2;

/// What a flow is in its test. measured: its own length (the test's
/// iterations or duration) and its numbers are the test's point. load: a
/// stream that runs from the measured phase's start until the test's
/// measured flows are done (`until`), the competing traffic they are
/// measured under; its numbers are reported beside theirs.
enum class Role : std::uint8_t { measured, load };
inline constexpr std::size_t kRoleCount = 2;

/// How a flow uses the rails of a config that lists several (`rails:` in
/// the config; docs/rails.md). A config without rails has one, and every
/// policy then runs as a flow always did.
///   bind: the flow's endpoints all on one rail, flow k of a test on rail
///     k mod R (several flows spread over the rails); a bi-directional
///     flow sends each direction on a rail of its own (the initiator's
///     on the flow's rail, the responder's on the next).
///   stripe: each message above `stripe_threshold` split into R equal
///     pieces posted at once, one per rail, each rail with its own window;
///     at or below it, the message goes whole over rail 0. Streams only.
///   round_robin: whole messages alternate across the rails.
enum class RailPolicy : std::uint8_t { bind, stripe, round_robin };
inline constexpr std::size_t kRailPolicyCount = 3;

/// When a stream's interval ends (docs/architecture.md, "When a stream
/// ends"). last_completion: at the last signaled request's completion, as
/// the transport reports it (perftest; over RDMA RC the peer holds the
/// bytes by then, over a socket or UCX's buffered protocols they may still
/// be on their way). delivered: after that, once every endpoint's
/// transport says all it was given is at the peer (Endpoint::flush: UCX's
/// ucp_ep_flush_nbx, a socket's bytes all acknowledged), as ucx_perftest
/// times its streams; SKIPPED where the plugin cannot tell.
enum class StreamEnd : std::uint8_t { last_completion, delivered };
inline constexpr std::size_t kStreamEndCount = 2;

/// What the target of a write stream does between its transport's progress
/// calls. none: nothing else (perftest's ib_write_bw target; a write lands
/// without it). last_byte: it also reads the last byte of the message as it
/// lands in the first slot of its buffer, as ucx_perftest's put_bw receiver
/// waits there for its final sequence number throughout the stream. Every
/// write to that slot then takes the line from the target's cache: over
/// shared memory the writer pays for it (ucx-shm 64 KiB puts, 4-5%:
/// docs/fidelity.md). With `buffers: single` every write lands there.
enum class TargetWatch : std::uint8_t { none, last_byte };
inline constexpr std::size_t kTargetWatchCount = 2;

/// How a pipelined flow's fragments reach their place in the receiver's
/// destination buffer (FlowSpec::fragment > 0; docs/pipeline.md).
///   direct: each fragment is written (op write) at its offset in the
///     target's buffer: a remote-memory interface, no copy at the target.
///   copy: each fragment is sent (op send) into a receive buffer and the
///     receiver copies it into place: an active-message interface, one more
///     copy.
enum class Delivery : std::uint8_t { direct, copy };
inline constexpr std::size_t kDeliveryCount = 2;
/// When a `delivery: copy` receiver copies fragments into place.
///   store_and_forward: all of a message's fragments, once its last has
///     arrived (the receive buffers hold the whole message meanwhile).
///   cut_through: each fragment as soon as it arrives, overlapping the copy
///     with the fragments still in flight.
enum class Reassembly : std::uint8_t { store_and_forward, cut_through };
inline constexpr std::size_t kReassemblyCount = 2;
/// Where a pipelined sender posts fragments from.
///   zero_copy: straight from the (registered) message buffer.
///   staged: each fragment is first copied into a registered bounce buffer
///     (a ring of `window` of them), then posted from there.
enum class Source : std::uint8_t { zero_copy, staged };
inline constexpr std::size_t kSourceCount = 2;
/// The pages a flow's buffers (and a stage-cost measurement's) are mapped
/// with.
///   normal: the kernel's base pages (transparent huge pages as its policy
///     decides; the host's policy is in the provenance), or the plugin's
///     own allocation where it offers one.
///   huge: MAP_HUGETLB pages reserved by vm.nr_hugepages, as itperf asked
///     for large physical pages: fewer TLB misses for the copy, fewer pages
///     for a registration to pin. Where none can be had the test is
///     SKIPPED, naming why.
enum class Pages : std::uint8_t { normal, huge };
inline constexpr std::size_t kPagesCount = 2;
/// What the send buffers (the slots a send, write or atomic reads from, and
/// a read's target) hold when the run starts.
///   pattern: the test's byte pattern, written before anything is timed: the
///     data is real memory, as an application's is.
///   untouched: nothing; uniperf never writes them. Fresh anonymous memory
///     then reads as the kernel's shared zero page: one 4 KiB page, always
///     in cache, however large the message. ucx_perftest's send buffers are
///     such (it writes only a sequence number), and a transport that copies
///     (UCX tcp, shared memory) moves a large message from them faster than
///     from real data: 1 MiB puts over UCX's tcp by some 4% (docs/fidelity.md).
///     Where the transport pins memory to register it (verbs), the pages
///     are real zeroed ones.
enum class SendBuffers : std::uint8_t { pattern, untouched };
inline constexpr std::size_t kSendBuffersCount = 2;

/// When a test of several flows ends its measured phase (the flows always
/// start it together). all_done: each measured flow runs its own length and
/// load flows stop when the last is done. first_done: every flow stops when
/// the first measured flow is done, so that they all ran for the same
/// interval, under each other's load throughout.
enum class StopRule : std::uint8_t { all_done, first_done };
inline constexpr std::size_t kStopRuleCount = 2;

/// Where the flows of a test of several run. shared: as threads of one
/// process pair (session/concurrent_flows.hpp), sharing its address space
/// and, where the plugin allows, its Context. separate: each flow in a
/// process pair of its own (the seed study's two perftest instances): no
/// lock, Context or memory shared, the flows' measured phases started and
/// stopped by the control channel (session/remote_flow_gate.hpp). A job of
/// at least 2N ranks runs a test of N flows so, flow k on ranks 2k and
/// 2k+1; a single pair cannot.
enum class FlowProcesses : std::uint8_t { shared, separate };
inline constexpr std::size_t kFlowProcessesCount = 2;

/// Which ranks of a launched job (mpirun, srun with more than two ranks)
/// a test pairs, and which pairs run at once (session/rank_pairs.hpp).
/// Outside a launcher, and with two ranks, there is one pair (0 measuring,
/// 1 serving) whatever it says: a bi-directional test is the two-rank
/// neighbors or all_to_all.
/// In every pair the initiator measures; a write or send moves data from
/// it to the responder, a read from the responder to it.
///
/// Disjoint pairs, in rounds (each rank in at most one pair at a time):
///   first: ranks 0 and 1 only (the others idle): a run of a suite written
///     for one pair measures what it measured before.
///   all: every pair of ranks once, the lower rank measuring: n-1 rounds of
///     n/2 pairs (n rounds when n is odd), the node-pair matrix.
///   ring: each rank with the next (and the last with rank 0): 2 rounds,
///     3 when n is odd (neighbours share a rank, so they cannot all run at once).
///   bisection: the lower half of the ranks with the upper half, rank i
///     with i + n/2, every pair at once in one round: the traffic across
///     the job's middle (with an odd n the last rank sits out).
/// Pairs that share ranks, all at once in one round (a rank in several
/// pairs runs each on a thread of its own):
///   incast: every other rank initiates to rank 0 (many senders, one
///     receiver: the storage node's view).
///   fanout: rank 0 initiates to every other rank (one sender, many
///     receivers).
///   neighbors: each rank initiates to the next (the last to rank 0), all
///     at once: every rank sends and receives (a halo exchange's ring).
///   all_to_all: every rank initiates to every other rank, all at once:
///     n(n-1) pairs.
enum class RankPairs : std::uint8_t {
  first,
  all,
  ring,
  bisection,
  incast,
  fanout,
  neighbors,
  all_to_all
};
inline constexpr std::size_t kRankPairsCount = 8;

/// Whether the pattern runs pairs that share a rank at once.
constexpr bool shares_ranks(RankPairs pairs) {
  return pairs >= RankPairs::incast;
}

/// One flow: a stream of one op at one size between two endpoint sets.
/// A pace for a stream (FlowSpec::rate_limit): messages per second, or
/// bits per second, which each size turns into messages.
struct Rate {
  double per_second = 0;  ///< 0: not limited
  bool bits = false;      ///< per_second counts bits (10Gb/s), not messages (100K/s)
  bool operator==(const Rate&) const = default;
};

/// A test holds one or more flows started at one barrier.
struct FlowSpec {
  Op op = Op::send;
  Pattern pattern = Pattern::latency;
  Direction direction = Direction::uni;
  std::uint32_t window = 1;  ///< ops in flight per endpoint (tx depth)
  WindowMode window_mode = WindowMode::streaming;
  std::uint32_t signal_every = 1;   ///< suite default: max(1, window / 2); latency: 1
  std::uint32_t cq_moderation = 1;  ///< completions consumed per poll / wake-up
  CompletionMode completion = CompletionMode::poll;
  std::uint32_t rx_depth = 64;     ///< receives pre-posted; suite default: max(2 * window, 64)
  std::uint32_t rx_replenish = 1;  ///< re-post receives in batches of this many
  std::uint32_t post_list = 1;     ///< work requests per post call
  std::uint32_t inline_size = 0;   ///< payloads <= this are posted inline
  std::uint32_t endpoints = 1;     ///< endpoints (QPs) per flow
  BufferMode buffers = BufferMode::cycle;
  bool validate = false;  ///< fill and check payload patterns
  /// The most of a stream's messages an unreliable transport may lose
  /// (lost / sent) before its record is an error; 1 = loss is only reported.
  double max_loss = 1;
  /// Per-request trace (docs/traces.md): 0 = none; N = every Nth request
  /// this side posts in the measured phase, from the first, is stamped when
  /// posted and when its completion is polled.
  std::uint32_t trace = 0;
  /// The most trace rows a flow keeps per size (memory allocated before the
  /// loop: 48 bytes a row); requests past it are counted, not kept.
  std::uint32_t trace_max = 1u << 20;
  Role role = Role::measured;
  /// This flow's own message size, run at every size of the test (a test
  /// of several flows: an elephant of 64 MiB writes beside a mouse of 1 MiB
  /// ones); 0: the test's sizes.
  std::uint32_t size = 0;
  /// This flow's own run length in a test of several flows (an elephant
  /// that runs 200 ms beside a mouse's 1000 iterations): measured
  /// iterations, or seconds; 0 (both): the test's.
  std::uint32_t iterations = 0;
  double seconds = 0;
  /// Seconds this flow's measured phase starts after the test's flows were
  /// released together (docs/traces.md): a flow that joins a running one.
  double start_offset = 0;
  /// Seconds the initiator of a latency test waits between one iteration's
  /// end and the next one's start (perftest's --latency_gap): ping-pongs
  /// spaced out rather than back to back. The pause is in no sample.
  double latency_gap = 0;
  /// The most a stream posts, per flow (perftest's software --rate_limit):
  /// the engine holds each post back until the pace allows it, outside the
  /// transport's post path. The record's rates are what was achieved.
  Rate rate_limit;
  /// Keep every latency sample, in the order the iterations ran, in the
  /// run's samples file (perftest's -H prints them): a histogram, a CDF and
  /// the latency over time can then be drawn from them.
  bool keep_samples = false;
  /// How the flow uses a config's rails (RailPolicy), and the size above
  /// which `stripe` splits a message (the PCI Express study's 8 KiB).
  RailPolicy rail_policy = RailPolicy::bind;
  std::uint32_t stripe_threshold = 8192;
  /// A pipelined transfer (docs/pipeline.md): each message goes as
  /// fragments of this many bytes (the last one shorter), `window` of them
  /// in flight per endpoint; 0: every message is one operation.
  std::uint32_t fragment = 0;
  Delivery delivery = Delivery::direct;
  Reassembly reassembly = Reassembly::cut_through;
  Source source = Source::zero_copy;
  Pages pages = Pages::normal;
  /// Streams: when the interval ends (StreamEnd).
  StreamEnd stream_end = StreamEnd::last_completion;
  /// Write streams: what the target watches (TargetWatch).
  TargetWatch target_watch = TargetWatch::none;
  /// What the send buffers hold (SendBuffers).
  SendBuffers send_buffers = SendBuffers::pattern;
};

/// How long a test runs: a fixed number of iterations, or a duration with a
/// margin trimmed at both ends (perftest -D/-f semantics).
struct Duration {
  std::uint64_t iterations = 1000;
  double seconds = 0;  ///< > 0 selects duration mode
  double margin = 0;   ///< seconds excluded at start and end in duration mode
  std::uint64_t warmup_iterations = 0;
  /// Times each size is measured (`trials:`); a record then carries every
  /// trial's summary and the confidence interval of their mean.
  std::uint32_t trials = 1;
  /// `duration: forever` / --run-infinitely: windows of `seconds` each,
  /// repeated until interrupted (Ctrl-C); every window is reported as it
  /// ends and the final record pools them all.
  bool forever = false;
};

struct TestSpec {
  /// Unique within the suite, but for tests that run over disjoint
  /// `configs:` (a tuned suite's sweep points, each for its own config).
  std::string name;
  std::string preset;  ///< "" or perftest / osu / itperf (already applied)
  std::vector<std::uint64_t> sizes;
  Duration duration;
  std::vector<FlowSpec> flows;  ///< at least one
  RankPairs pairs = RankPairs::first;
  StopRule until = StopRule::all_done;
  FlowProcesses process = FlowProcesses::shared;
  /// Per flow: the test whose record measured this (latency) flow alone, to
  /// compare with (`baseline:`); "" for none. Empty when no flow has one.
  std::vector<std::string> baselines;
  /// `configs:`: the names of the configs the test runs over; over any other
  /// config of a run it has no records. Empty: every config.
  std::vector<std::string> configs;
  std::uint32_t source_line = 0;  ///< line in the suite file, for messages
};

/// Whether a test whose `configs:` are `configs` (empty: every config) runs
/// over the config named `config`.
bool runs_over(const std::vector<std::string>& configs, std::string_view config);
/// Whether `test` runs over the config named `config` (its `configs:`).
inline bool runs_over(const TestSpec& test, std::string_view config) {
  return runs_over(test.configs, config);
}

/// How long `flow` of `test` runs: the test's run length, or the flow's own
/// iterations or seconds (the test's margin and warm-up go with a duration,
/// its warm-up with iterations).
Duration run_length_of(const TestSpec& test, const FlowSpec& flow);
/// The longest any flow of `test` may take for one size: its start offset,
/// its duration and both margins (0 when every flow counts iterations).
double longest_timed_seconds(const TestSpec& test);

std::string_view to_string(Pattern);
std::string_view to_string(Direction);
std::string_view to_string(WindowMode);
std::string_view to_string(CompletionMode);
std::string_view to_string(BufferMode);
std::string_view to_string(RankPairs);
std::string_view to_string(Role);
std::string_view to_string(RailPolicy);
std::string_view to_string(StopRule);
std::string_view to_string(FlowProcesses);
std::string_view to_string(Delivery);
std::string_view to_string(Reassembly);
std::string_view to_string(Source);
std::string_view to_string(Pages);
std::string_view to_string(StreamEnd);
std::string_view to_string(SendBuffers);
std::string_view to_string(TargetWatch);

}  // namespace uniperf::model
