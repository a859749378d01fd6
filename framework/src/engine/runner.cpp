#include "engine/runner.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/clock.hpp"

namespace uniperf::engine {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kPageSize = 4096;
/// Buffer slots per direction and endpoint: consecutive ops touch different
/// bytes (as perftest's cyclic buffer does) without unbounded memory.
constexpr std::uint32_t kMaxSlots = 16;
constexpr std::size_t kMaxBufferBytes = std::size_t{256} << 20;
/// Upper bound on latency samples kept in duration mode (8 bytes each).
constexpr std::uint64_t kMaxDurationSamples = std::uint64_t{8} << 20;
/// Idle polls between looks at the control channel on the serving side.
constexpr std::uint32_t kControlCheckInterval = 4096;
/// Looks at a polled byte between transport polls (write latency).
constexpr std::uint32_t kSpinsBetweenPolls = 64;
constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

bool is_two_sided(Op op) {
  return op == Op::send || op == Op::write_imm;
}
bool is_atomic(Op op) {
  return op == Op::fetch_add || op == Op::cswap;
}

/// Byte `index` of the validation pattern for messages of `size` bytes. Never
/// zero, so a receive buffer cleared to zero shows what did not arrive.
inline std::uint8_t pattern_byte(std::uint64_t size, std::size_t index) {
  return static_cast<std::uint8_t>((index * 131 + size * 7) % 255 + 1);
}

struct AlignedBuffer {
  std::byte* data = nullptr;
  std::size_t size = 0;
  explicit AlignedBuffer(std::size_t bytes)
      : size((bytes + kPageSize - 1) / kPageSize * kPageSize) {
    data = static_cast<std::byte*>(std::aligned_alloc(kPageSize, size));
    if (data == nullptr) throw TransportError("cannot allocate " + std::to_string(size) + " bytes");
    std::memset(data, 0, size);  // touch every page before anything is timed
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
};

[[noreturn]] void throw_aborted() {
  throw TransportError("run aborted: the peer is gone or the test passed its deadline");
}

}  // namespace

// ---------------------------------------------------------------------------
// Capability checks
// ---------------------------------------------------------------------------

std::string skip_reason(const TestSpec& test, const FlowSpec& flow, const Capabilities& caps,
                        std::uint64_t size) {
  (void)test;  // flow-independent checks (concurrent flows) are the session's
  const Support op_support = caps.op(flow.op);
  if (op_support == Support::none) {
    return "plugin does not support op " + std::string(to_string(flow.op));
  }
  if (flow.completion == CompletionMode::event && caps.completion_events == Support::none) {
    return "plugin has no completion events (completion: event)";
  }
  if (flow.pattern == Pattern::latency && flow.op == Op::write) {
    if (!caps.ordered_write_visibility) {
      return "write latency polls the last byte of the target buffer, and this plugin does not "
             "guarantee writes become visible in address order";
    }
    if (flow.completion == CompletionMode::event) {
      return "write latency polls memory for the peer's write; there is no completion to sleep "
             "on (completion: event)";
    }
  }
  if (flow.signal_every > 1 && caps.selective_completion == Support::none) {
    return "plugin cannot suppress completions (signal_every > 1)";
  }
  if (flow.window_mode == WindowMode::window_ack && flow.direction == Direction::bi) {
    return "window_ack is unidirectional: the receiver acknowledges each window";
  }
  if (caps.max_message != 0 && size > caps.max_message) {
    return "size " + std::to_string(size) + " exceeds the plugin's max_message " +
           std::to_string(caps.max_message);
  }
  if (flow.pattern == Pattern::latency && flow.op == Op::write && size < 1) {
    return "write latency needs at least one byte";
  }
  return {};
}

FlowSpec effective_flow(const FlowSpec& flow, const Capabilities& caps) {
  FlowSpec effective = flow;
  effective.inline_size =
      static_cast<std::uint32_t>(std::min<std::size_t>(flow.inline_size, caps.max_inline));
  return effective;
}

std::vector<std::string> emulated_features(const FlowSpec& flow, const Capabilities& caps) {
  std::vector<std::string> emulated;
  if (caps.op(flow.op) == Support::emulated)
    emulated.push_back("op:" + std::string(to_string(flow.op)));
  if (flow.signal_every > 1 && caps.selective_completion == Support::emulated) {
    emulated.emplace_back("selective_completion");
  }
  if (flow.completion == CompletionMode::event && caps.completion_events == Support::emulated) {
    emulated.emplace_back("completion_events");
  }
  if (flow.post_list > 1 && caps.post_list == Support::emulated) emulated.emplace_back("post_list");
  return emulated;
}

// ---------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------

struct TestRunner::Impl {
  /// One endpoint with its buffer halves, prebuilt requests and counters.
  struct Lane {
    std::unique_ptr<AlignedBuffer> buffer;  // null when the plugin allocated
    std::unique_ptr<MemoryRegion> memory;
    std::byte* base = nullptr;  // the lane's memory, whoever allocated it
    std::size_t bytes = 0;
    std::unique_ptr<Endpoint> endpoint;
    std::unique_ptr<RemoteRegion> remote;
    std::vector<WorkRequest> chain;        // post_list requests, rewritten per post
    std::vector<RecvRequest> receives;     // rx_replenish requests, rewritten per re-post
    std::vector<std::uint32_t> rx_length;  // bytes last received per rx slot
    // Request ids grow for the endpoint's whole life, so a completion that
    // arrives late can never be mistaken for one of a later phase.
    std::uint64_t posted = 0;       // work requests posted (= next id)
    std::uint64_t completed = 0;    // covered by signaled completions
    std::uint64_t phase_start = 0;  // `posted` when the current phase began
    std::uint64_t received = 0;     // receives consumed in the current phase
    std::uint64_t recv_ids = 0;     // next receive id (persists across sizes)
    std::uint32_t replenish_pending = 0;
    std::uint64_t acks_sent = 0;  // window_ack: acknowledgements sent
    std::uint64_t target = 0;     // id after the last request of the phase
    std::uint32_t to_signal = 1;  // posts until the next signaled one
    std::uint8_t marker = 0;      // write latency: the last iteration marker

    std::uint64_t phase_posted() const { return posted - phase_start; }
  };

  Context& context;
  bootstrap::Bootstrap& control;
  const TestSpec& test;
  const std::atomic<bool>& abort;
  FlowSpec flow;
  Capabilities caps;
  int rank;

  std::size_t slot_size = 0;
  std::uint32_t slots = 1;
  std::uint64_t slot_mask = 0;
  std::size_t tx_base = 0;  // offset of the tx half in each lane's buffer
  std::size_t rx_base = 0;
  std::uint32_t send_depth = 1;
  std::uint64_t rx_stride = 1;  // receives: a ring of slots, or slot 0 for single buffers
  bool needs_receives = false;
  std::vector<Lane> lanes;
  Completion completions[256];
  std::uint32_t poll_batch = 1;
  // The passive side of a stream drains its receive completions as they
  // come, up to the receive queue (perftest's server polls rx_depth at a
  // time): cq_moderation moderates the sender's completions, not arrivals.
  std::uint32_t serve_batch = 1;
  std::uint32_t idle_polls = 0;  // serve_wait's count between control checks

  // Per-size state.
  std::uint64_t size = 0;
  std::vector<Ticks> stamps;
  bool done_received = false;
  nlohmann::json peer_done;

  Impl(Context& ctx, bootstrap::Bootstrap& boot, const TestSpec& t, const std::atomic<bool>& a)
      : context(ctx), control(boot), test(t), abort(a), rank(boot.rank()) {
    caps = context.capabilities();
    flow = effective_flow(test.flows.front(), caps);
  }

  // ------------------------------------------------------------ setup

  void setup() {
    const std::uint64_t max_size = *std::max_element(test.sizes.begin(), test.sizes.end());
    slot_size =
        std::max<std::size_t>((max_size + kCacheLine - 1) / kCacheLine * kCacheLine, kCacheLine);
    // A power of two, so slot arithmetic is a mask. Atomics give every
    // request that can be in flight a target word of its own (see
    // choose_offsets), so they get as many slots as requests in flight.
    slots = std::bit_floor(std::clamp<std::uint32_t>(flow.window, 2, kMaxSlots));
    if (is_atomic(flow.op)) {
      const std::uint32_t in_flight =
          std::max({flow.window, flow.signal_every, flow.post_list, 1u});
      slots = std::max(slots, std::bit_ceil(in_flight + 1));
    }
    while (slots > 2 && 2 * slots * slot_size > kMaxBufferBytes) slots /= 2;
    slot_mask = slots - 1;
    tx_base = 0;
    rx_base = slots * slot_size;
    send_depth = std::max({flow.window, flow.signal_every, flow.post_list, 1u}) + 1;
    needs_receives = is_two_sided(flow.op) || flow.window_mode == WindowMode::window_ack ||
                     flow.pattern == Pattern::latency;
    poll_batch = std::clamp<std::uint32_t>(flow.cq_moderation, 1, std::size(completions));
    serve_batch = std::clamp<std::uint32_t>(flow.rx_depth, poll_batch, std::size(completions));
    rx_stride = flow.buffers == BufferMode::single ? 0 : 1;

    EndpointParams params;
    params.send_depth = send_depth;
    params.recv_depth = flow.rx_depth;
    params.max_inline = flow.inline_size;
    params.max_message = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_size, UINT32_MAX));
    params.completion_events = flow.completion == CompletionMode::event;

    bootstrap::BootstrapPeerChannel channel(control);
    lanes.resize(flow.endpoints);
    for (std::uint32_t index = 0; index < flow.endpoints; ++index) {
      Lane& lane = lanes[index];
      const std::size_t bytes = (2 * slots * slot_size + kPageSize - 1) / kPageSize * kPageSize;
      lane.memory = context.allocate_memory(bytes);
      if (!lane.memory) {
        lane.buffer = std::make_unique<AlignedBuffer>(bytes);
        lane.memory = context.register_memory(lane.buffer->data, lane.buffer->size);
      }
      lane.base = static_cast<std::byte*>(lane.memory->address());
      lane.bytes = lane.memory->length();
      params.index = index;
      lane.endpoint = context.connect(params, channel);

      nlohmann::json mine = {{"address", reinterpret_cast<std::uintptr_t>(lane.base)},
                             {"length", lane.bytes},
                             {"key", nlohmann::json::binary(to_vector(lane.memory->remote_key()))}};
      const auto encoded = nlohmann::json::to_cbor(mine);
      const Bytes reply = control.exchange(std::as_bytes(std::span(encoded)), control.timeout());
      const auto theirs = nlohmann::json::from_cbor(
          std::span(reinterpret_cast<const std::uint8_t*>(reply.data()), reply.size()));
      const auto& key = theirs.at("key").get_binary();
      lane.remote = lane.endpoint->import_region(theirs.at("address").get<std::uint64_t>(),
                                                 theirs.at("length").get<std::uint64_t>(),
                                                 std::as_bytes(std::span(key.data(), key.size())));

      lane.chain.resize(flow.post_list);
      lane.receives.resize(std::max(flow.rx_replenish, flow.rx_depth));
      lane.rx_length.assign(slots, 0);
      if (needs_receives) post_receives(lane, flow.rx_depth);
    }
    control.barrier(control.timeout());
  }

  static std::vector<std::uint8_t> to_vector(const Bytes& bytes) {
    std::vector<std::uint8_t> out(bytes.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

  // ------------------------------------------------------------ hot helpers

  std::byte* tx(Lane& lane, std::uint64_t slot) {
    return lane.base + tx_base + (slot & slot_mask) * slot_size;
  }
  std::byte* rx(Lane& lane, std::uint64_t slot) {
    return lane.base + rx_base + (slot & slot_mask) * slot_size;
  }

  void post_receives(Lane& lane, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      RecvRequest& r = lane.receives[i];
      r.id = lane.recv_ids++;
      r.local = lane.memory.get();
      r.offset = rx_base + ((r.id * rx_stride) & slot_mask) * slot_size;
      r.length = static_cast<std::uint32_t>(slot_size);
    }
    lane.endpoint->post_recv(lane.receives.data(), count);
  }

  [[noreturn]] void fail(Lane& lane, const Completion& c) {
    throw TransportError(std::string(c.type == CompletionType::send ? "operation" : "receive") +
                         " " + std::to_string(c.id) +
                         " failed: " + lane.endpoint->describe(c.status));
  }

  /// Consumes completions: credits the window and counts receives. Re-posting
  /// them is refill()'s job, so each loop decides when it happens: at once
  /// in streaming, after the next post in a ping-pong (off its critical path).
  void absorb(Lane& lane, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      const Completion& c = completions[i];
      if (c.status != 0) [[unlikely]]
        fail(lane, c);
      if (c.type == CompletionType::send) {
        lane.completed = c.id + 1;
      } else {
        ++lane.received;
        lane.rx_length[(c.id * rx_stride) & slot_mask] = c.length;
        ++lane.replenish_pending;
      }
    }
  }

  /// Re-posts consumed receives in batches of rx_replenish.
  void refill(Lane& lane) {
    while (lane.replenish_pending >= flow.rx_replenish) {
      post_receives(lane, flow.rx_replenish);
      lane.replenish_pending -= flow.rx_replenish;
    }
  }

  /// Polls once and consumes what came (re-posting receives unless Deferred);
  /// on nothing, lets the waiter idle (spin or sleep).
  template <bool Event, bool Deferred = false>
  void pump(Lane& lane) {
    const std::size_t n = lane.endpoint->poll(completions, poll_batch);
    if (n != 0) {
      absorb(lane, n);
      if constexpr (!Deferred) refill(lane);
      return;
    }
    if (abort.load(std::memory_order_relaxed)) [[unlikely]]
      throw_aborted();
    if constexpr (Event) lane.endpoint->wait(100ms, flow.cq_moderation);
  }

  /// Posts one chain of up to post_list requests. `burst_end` is the id
  /// after the last request of the current burst: it is always signaled.
  void post_chain(Lane& lane, std::uint64_t burst_end) {
    const std::uint64_t count = std::min<std::uint64_t>(flow.post_list, burst_end - lane.posted);
    for (std::uint64_t i = 0; i < count; ++i) {
      WorkRequest& wr = lane.chain[i];
      const std::uint64_t id = lane.posted + i;
      wr.id = id;
      const std::uint64_t seq = id - lane.phase_start;
      // A countdown instead of a modulo: no division on the hot path.
      const bool due = --lane.to_signal == 0;
      lane.to_signal = due ? flow.signal_every : lane.to_signal;
      const bool signaled = due || id + 1 == burst_end;
      wr.flags = static_cast<std::uint8_t>((wr.flags & ~WorkRequest::kSignaled) |
                                           (signaled ? WorkRequest::kSignaled : 0));
      // Uniform per-op data: atomics use it, other ops ignore it. A request's
      // ordinal is how many earlier ones of the phase hit its target word:
      // fetch_add adds it, cswap swaps it -> it+1.
      const std::uint64_t ordinal = seq >> ordinal_shift;
      wr.compare_add = ordinal;
      wr.swap = ordinal + 1;
      const std::uint64_t slot_offset = ((seq * slot_stride) & slot_mask) * slot_size;
      wr.local_offset = local_base + slot_offset + local_shift;
      wr.remote_offset = remote_base + slot_offset;
    }
    lane.endpoint->post(lane.chain.data(), count);
    lane.posted += count;
  }

  /// Waits until at most `send_depth - need` requests are outstanding.
  template <bool Event>
  void make_room(Lane& lane, std::uint64_t need) {
    while (lane.posted + need - lane.completed > send_depth) pump<Event>(lane);
  }

  // Where post_chain points requests, set once per size so the chain
  // rewrite stays branch-free: sources come from the tx half and land in
  // the peer's rx half; reads fetch the peer's tx half into our rx half;
  // atomics hit a word at the start of the peer's rx slot and return the
  // old value 8 bytes further into the same slot of our own rx half (where,
  // bidirectional, the peer's atomics hit only the first word).
  //
  // Atomics in a stream spread over the slots, one per request in flight:
  // the cswap check (every word ends at the number of requests that hit it)
  // then holds on any transport, in order or not. RC queue pairs execute
  // atomics in posting order; UCP does not promise it, and over rc_verbs
  // reorders them when both sides stream at once.
  std::size_t local_base = 0, remote_base = 0, local_shift = 0;
  std::uint64_t slot_stride = 1;
  unsigned ordinal_shift = 0;  // log2(slots) when requests cycle over the slots, else 0

  void choose_offsets() {
    local_base = flow.op == Op::read || is_atomic(flow.op) ? rx_base : tx_base;
    remote_base = flow.op == Op::read ? tx_base : rx_base;
    // Ping-pong reuses slot 0 (write latency polls its last byte); so does
    // every post of a single-buffer stream.
    slot_stride = flow.pattern == Pattern::latency || flow.buffers == BufferMode::single ? 0 : 1;
    local_shift = is_atomic(flow.op) ? 8 : 0;
    ordinal_shift = slot_stride == 0 ? 0 : static_cast<unsigned>(std::countr_zero(slots));
  }

  void prepare_chain(Lane& lane, Op op, std::uint64_t length) {
    for (WorkRequest& wr : lane.chain) {
      wr = WorkRequest{};
      wr.op = op;
      wr.length = static_cast<std::uint32_t>(length);
      wr.local = lane.memory.get();
      wr.remote = lane.remote.get();
      // Inline carries outgoing payload only: never reads or atomics.
      const bool carries_payload = op == Op::send || op == Op::write || op == Op::write_imm;
      wr.flags = carries_payload && length <= flow.inline_size ? WorkRequest::kInline : 0;
    }
  }

  // ------------------------------------------------------------ loops

  /// Ping-pong posts follow signal_every with the phase's last post always
  /// signaled. A duration-mode phase has no known last post, so there every
  /// post is signaled (the record's params say signal_every as given; the
  /// difference is documented in docs/metrics).
  std::uint64_t burst_end(const Lane& lane) const {
    return lane.target == kUnbounded ? lane.posted + 1 : lane.target;
  }

  /// Ping-pong over send / write_imm: the initiator sends, waits for the
  /// echo; the responder waits, echoes. stamps[i] is when iteration i began.
  template <bool Event>
  void pingpong_message(std::uint64_t total, Ticks deadline) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    for (; i < total; ++i) {
      Lane& lane = lanes[next];
      next = next + 1 == lanes.size() ? 0 : next + 1;
      const std::uint64_t expect = lane.received + 1;
      if (rank == 0) {
        stamps[i] = now();
        make_room<Event>(lane, 1);
        post_chain(lane, burst_end(lane));
        refill(lane);  // the previous echo's receive, while the ping flies
        while (lane.received < expect) pump<Event, true>(lane);
        if (stamps[i] >= deadline) break;
      } else {
        while (lane.received < expect) {
          if (!serve_wait<Event, false>(lane)) return;
        }
        make_room<Event>(lane, 1);
        post_chain(lane, burst_end(lane));
        refill(lane);
      }
    }
    if (rank == 0) stamps[std::min(i + 1, total)] = now();
  }

  /// Ping-pong over RDMA write: each side polls the last byte of its receive
  /// slot for the peer's iteration marker, then writes its own.
  template <bool Event>
  void pingpong_write(std::uint64_t total, Ticks deadline) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    for (; i < total; ++i) {
      Lane& lane = lanes[next];
      next = next + 1 == lanes.size() ? 0 : next + 1;
      // Markers 1..255 in turn; never 0, the cleared buffer's value.
      const std::uint8_t marker = lane.marker = static_cast<std::uint8_t>(lane.marker % 255 + 1);
      std::atomic_ref<std::uint8_t> last(*reinterpret_cast<std::uint8_t*>(rx(lane, 0) + size - 1));
      auto* out = reinterpret_cast<std::uint8_t*>(tx(lane, 0) + size - 1);
      if (rank == 0) {
        stamps[i] = now();
        make_room<Event>(lane, 1);
        *out = marker;
        post_chain(lane, burst_end(lane));
        while (!spin_for(last, marker)) pump<Event>(lane);
        if (stamps[i] >= deadline) break;
      } else {
        while (!spin_for(last, marker)) {
          if (!serve_wait<Event, true>(lane)) return;
        }
        make_room<Event>(lane, 1);
        *out = marker;
        post_chain(lane, burst_end(lane));
      }
    }
    if (rank == 0) stamps[std::min(i + 1, total)] = now();
  }

  /// Watches a byte the peer writes for a while before the caller polls the
  /// transport: a write lands without our help on hardware and shared
  /// memory, and a poll per look would put its cost into every sample.
  /// Software transports still get a poll every kSpinsBetweenPolls looks.
  static bool spin_for(const std::atomic_ref<std::uint8_t>& byte, std::uint8_t value) {
    for (std::uint32_t k = 0; k < kSpinsBetweenPolls; ++k) {
      if (byte.load(std::memory_order_acquire) == value) return true;
    }
    return false;
  }

  /// Round trip of one read or atomic at a time (initiator only).
  template <bool Event>
  void roundtrip(std::uint64_t total, Ticks deadline) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    for (; i < total; ++i) {
      Lane& lane = lanes[next];
      next = next + 1 == lanes.size() ? 0 : next + 1;
      stamps[i] = now();
      post_chain(lane, lane.posted + 1);
      while (lane.completed < lane.posted) pump<Event>(lane);
      if (stamps[i] >= deadline) break;
    }
    stamps[std::min(i + 1, total)] = now();
  }

  /// Streaming window (wait-any): keep up to `window` requests outstanding
  /// per endpoint, refilled as completions arrive. Returns first post ->
  /// last completion.
  template <bool Event>
  Ticks stream(Ticks deadline, Ticks& started) {
    started = now();
    bool stopping = false;
    while (true) {
      bool all_done = true;
      for (Lane& lane : lanes) {
        while (lane.posted < lane.target &&
               lane.posted + flow.post_list - lane.completed <= flow.window) {
          post_chain(lane, lane.target);
        }
        if (lane.completed < lane.target) {
          all_done = false;
          pump<Event>(lane);
        }
      }
      if (all_done) break;
      if (!stopping && now() >= deadline) [[unlikely]] {
        // Duration mode: finish at the next signaled request so every posted
        // one is covered by a completion.
        stopping = true;
        for (Lane& lane : lanes) {
          const std::uint64_t every = flow.signal_every;
          lane.target = lane.phase_start + (lane.phase_posted() + every - 1) / every * every;
        }
      }
    }
    return now();
  }

  /// Window with acknowledgement (wait-all): post `window` back to back,
  /// wait for all of them and (two-sided ops) for the receiver's ack.
  template <bool Event>
  Ticks stream_window_ack(Ticks deadline, Ticks& started) {
    const bool acked = is_two_sided(flow.op);
    started = now();
    bool more = true;
    while (more) {
      more = false;
      for (Lane& lane : lanes) {
        if (lane.posted >= lane.target) continue;
        const std::uint64_t window_end =
            std::min<std::uint64_t>(lane.posted + flow.window, lane.target);
        while (lane.posted < window_end) post_chain(lane, window_end);
        while (lane.completed < lane.posted) pump<Event>(lane);
        if (acked) {
          // One ack per whole window (it may already have arrived while the
          // sends completed).
          const std::uint64_t acks = lane.phase_posted() / flow.window;
          while (lane.received < acks) pump<Event>(lane);
        }
        if (now() >= deadline) [[unlikely]]
          lane.target = lane.posted;
        more |= lane.posted < lane.target;
      }
    }
    return now();
  }

  /// The passive side's wait for the peer inside a ping-pong: one poll (and,
  /// with Progress, a progress call: a write lands in memory without a
  /// completion to poll for), and every kControlCheckInterval idle polls a
  /// look at the control channel for the initiator's "done" (duration mode
  /// ends on the initiator's clock). False when done. A message ping-pong
  /// waits for its own receive completion, which poll() progresses to: a
  /// second call per idle loop would only delay seeing it (one more provider
  /// progress pass, a system call on socket providers).
  template <bool Event, bool Progress>
  bool serve_wait(Lane& lane) {
    const std::size_t n = lane.endpoint->poll(completions, poll_batch);
    if (n != 0) {
      absorb(lane, n);
      return true;
    }
    if constexpr (Progress) lane.endpoint->progress();
    if (abort.load(std::memory_order_relaxed)) [[unlikely]]
      throw_aborted();
    if constexpr (Event) lane.endpoint->wait(10ms, flow.cq_moderation);
    if (++idle_polls % (Event ? 1 : kControlCheckInterval) == 0 && control.message_ready())
        [[unlikely]] {
      receive_done();
      return false;
    }
    return true;
  }

  /// Serves the peer's traffic until its "done" message arrived and every
  /// receive it announced was consumed; sends window acks where asked.
  template <bool Event>
  void serve() {
    const bool ack = flow.window_mode == WindowMode::window_ack && is_two_sided(flow.op);
    std::uint32_t idle = 0;
    while (true) {
      bool progressed = false;
      for (Lane& lane : lanes) {
        const std::size_t n = lane.endpoint->poll(completions, serve_batch);
        if (n != 0) {
          absorb(lane, n);
          refill(lane);
          progressed = true;
        } else {
          lane.endpoint->progress();
        }
        if (ack) send_acks<Event>(lane);
      }
      if (done_received && all_received()) return;
      if (progressed) {
        idle = 0;
        continue;
      }
      if (abort.load(std::memory_order_relaxed)) [[unlikely]]
        throw_aborted();
      if constexpr (Event) {
        if (!done_received) lanes.front().endpoint->wait(10ms, flow.cq_moderation);
      }
      // Asleep between events, a look at the control channel costs little.
      if (!done_received && ++idle >= (Event ? 1 : kControlCheckInterval)) {
        idle = 0;
        if (control.message_ready()) receive_done();
      }
    }
  }

  template <bool Event>
  void send_acks(Lane& lane) {
    // The initiator posts whole windows only (see run_phase).
    while ((lane.acks_sent + 1) * flow.window <= lane.received) {
      make_room<Event>(lane, 1);
      post_ack(lane);
    }
  }

  void post_ack(Lane& lane) {
    WorkRequest ack;
    ack.id = lane.posted++;
    ack.op = Op::send;
    ack.flags = WorkRequest::kSignaled;
    ack.length = 1;
    ack.local = lane.memory.get();
    ack.local_offset = tx_base;
    lane.endpoint->post(&ack, 1);
    ++lane.acks_sent;
  }

  std::uint64_t expected_receives(const Lane& lane) const {
    return is_two_sided(flow.op) ? peer_done_posted(lane) : 0;
  }

  bool all_received() const {
    for (const Lane& lane : lanes) {
      if (lane.received < expected_receives(lane)) return false;
    }
    return true;
  }

  void receive_done() {
    const std::string text = control.receive_text(control.timeout());
    peer_done = nlohmann::json::parse(text);
    if (peer_done.value("kind", "") != "done") {
      throw TransportError("protocol error: expected the peer's end-of-run message, got: " + text);
    }
    done_received = true;
  }

  void send_done(double seconds, std::uint64_t bytes) {
    nlohmann::json posted = nlohmann::json::array();
    for (const Lane& lane : lanes) posted.push_back(lane.phase_posted() - lane.acks_sent);
    control.send_text(nlohmann::json{
        {"kind", "done"},
        {"posted", posted},
        {"seconds", seconds},
        {"bytes", bytes}}.dump());
  }

  // ------------------------------------------------------------ one size

  void reset_counters() {
    for (Lane& lane : lanes) {
      // Outstanding receives stay posted across sizes: they are sized for
      // the largest message of the test.
      std::fill(lane.rx_length.begin(), lane.rx_length.end(), 0);
      std::memset(lane.base + rx_base, 0, slots * slot_size);
      for (std::uint32_t s = 0; s < slots; ++s) {
        std::byte* out = tx(lane, s);
        for (std::size_t b = 0; b < size; ++b) out[b] = std::byte{pattern_byte(size, b)};
      }
      prepare_chain(lane, flow.op, is_atomic(flow.op) ? 8 : size);
    }
    choose_offsets();
    done_received = false;
    peer_done = nullptr;
  }

  /// Runs one phase (warm-up or measured) of `iterations` per endpoint;
  /// a timed phase fills `out`.
  void run_phase(std::uint64_t iterations, double seconds, bool timed, SizeOutcome& out) {
    const bool event = flow.completion == CompletionMode::event;
    const Ticks deadline =
        seconds > 0 ? now() + static_cast<Ticks>(seconds * 1e6 * clock_info().ticks_per_us)
                    : std::numeric_limits<Ticks>::max();
    std::uint64_t total = seconds > 0 ? kUnbounded : iterations;
    if (flow.window_mode == WindowMode::window_ack && total != kUnbounded) {
      // Whole windows only: the receiver acknowledges every `window` messages.
      total = (total + flow.window - 1) / flow.window * flow.window;
    }
    for (std::size_t k = 0; k < lanes.size(); ++k) {
      Lane& lane = lanes[k];
      lane.phase_start = lane.posted;
      lane.received = lane.acks_sent = 0;
      lane.to_signal = flow.signal_every;
      lane.marker = 0;
      // Latency spreads its iterations round-robin over the endpoints;
      // bandwidth runs `total` on each.
      std::uint64_t mine = total;
      if (flow.pattern == Pattern::latency && total != kUnbounded) {
        mine = total / lanes.size() + (k < total % lanes.size() ? 1 : 0);
      }
      lane.target = mine == kUnbounded ? kUnbounded : lane.posted + mine;
      if (flow.op == Op::write && flow.pattern == Pattern::latency) {
        // The iteration markers restart at every phase.
        std::memset(rx(lane, 0) + size - 1, 0, 1);
      }
    }
    done_received = false;
    peer_done = nullptr;
    control.barrier(control.timeout());

    if (flow.pattern == Pattern::latency) {
      const std::uint64_t cap = seconds > 0 ? kMaxDurationSamples : iterations;
      stamps.assign(cap + 1, 0);
      const bool active =
          rank == 0 || flow.op == Op::send || flow.op == Op::write_imm || flow.op == Op::write;
      if (flow.op == Op::write) {
        event ? pingpong_write<true>(cap, deadline) : pingpong_write<false>(cap, deadline);
      } else if (is_two_sided(flow.op)) {
        event ? pingpong_message<true>(cap, deadline) : pingpong_message<false>(cap, deadline);
      } else if (rank == 0) {
        event ? roundtrip<true>(cap, deadline) : roundtrip<false>(cap, deadline);
      }
      // A rendezvous send completes only while its sender progresses: finish
      // our own sends before blocking on the control channel.
      event ? drain<true>() : drain<false>();
      if (rank == 0) {
        send_done(0, 0);
      } else if (!active) {
        event ? serve<true>() : serve<false>();
      } else if (!done_received) {
        receive_done();
      }
      if (rank == 0 && timed) collect_latency(cap, out);
    } else {
      const bool active = rank == 0 || flow.direction == Direction::bi;
      if (active) {
        Ticks started = 0;
        const Ticks finished =
            flow.window_mode == WindowMode::window_ack
                ? (event ? stream_window_ack<true>(deadline, started)
                         : stream_window_ack<false>(deadline, started))
                : (event ? stream<true>(deadline, started) : stream<false>(deadline, started));
        const double secs = ticks_to_us(finished - started) / 1e6;
        if (timed) {
          out.started = started;
          out.finished = finished;
        }
        std::uint64_t ops = 0;
        for (const Lane& lane : lanes) ops += lane.phase_posted() - lane.acks_sent;
        send_done(secs, ops * wire_bytes());
        if (timed) {
          out.seconds = secs;
          out.messages = ops;
          out.bytes = ops * wire_bytes();
          out.iterations = ops;
        }
      }
      if (flow.direction == Direction::bi || rank == 1) {
        event ? serve<true>() : serve<false>();
      } else {
        receive_done();  // the responder's (empty) end-of-run message
      }
      if (timed && flow.direction == Direction::bi && rank == 0) {
        // Both directions: bytes add up, over the longer of the two intervals.
        out.bytes += peer_done.at("bytes").get<std::uint64_t>();
        out.messages += peer_done.at("bytes").get<std::uint64_t>() / wire_bytes();
        out.seconds = std::max(out.seconds, peer_done.at("seconds").get<double>());
      }
    }
    if (rank == 1 && flow.pattern != Pattern::latency && flow.direction == Direction::uni) {
      send_done(0, 0);
    }
    event ? drain<true>() : drain<false>();
    control.barrier(control.timeout());
  }

  /// Every phase ends with its last post signaled; waiting for it leaves no
  /// completion of this phase to surface in the next.
  template <bool Event>
  void drain() {
    for (Lane& lane : lanes) {
      while (lane.completed < lane.posted) pump<Event>(lane);
    }
  }

  std::uint64_t wire_bytes() const { return is_atomic(flow.op) ? 8 : size; }

  void collect_latency(std::uint64_t cap, SizeOutcome& out) {
    std::uint64_t count = 0;
    while (count < cap && stamps[count + 1] != 0) ++count;
    out.iterations = count;
    out.one_way = flow.op == Op::send || flow.op == Op::write || flow.op == Op::write_imm;
    const double divisor = out.one_way ? 2.0 : 1.0;
    out.latency_us.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      out.latency_us[i] = ticks_to_us(stamps[i + 1] - stamps[i]) / divisor;
    }
    out.messages = count;
    out.bytes = count * wire_bytes();
    out.seconds = count ? ticks_to_us(stamps[count] - stamps[0]) / 1e6 : 0;
    out.started = stamps[0];
    out.finished = stamps[count];
  }

  /// Bytes in this side's receive/result slots that differ from what the
  /// peer sent. Only slots that received something at this size are checked.
  std::uint64_t corrupted_bytes() {
    std::uint64_t bad = 0;
    const bool active = rank == 0 || flow.direction == Direction::bi;
    const bool target = rank == 1 || flow.direction == Direction::bi;
    const bool write_latency = flow.op == Op::write && flow.pattern == Pattern::latency;
    // Write latency keeps its iteration marker in the last byte.
    const std::size_t checked = write_latency ? size - 1 : size;
    for (Lane& lane : lanes) {
      if (is_atomic(flow.op)) {
        bad += target ? atomic_word_errors(lane) : 0;
        continue;
      }
      for (std::uint32_t s = 0; s < slots; ++s) {
        bool filled = false;
        switch (flow.op) {
          case Op::send:
            filled = lane.rx_length[s] == size;
            break;
          case Op::write_imm:
            // The data lands where the write pointed, like a write's; the
            // receive that reports it carries no bytes. Ping-pong writes
            // both ways.
            filled = (target || flow.pattern == Pattern::latency) &&
                     s < slots_touched(peer_done_posted(lane));
            break;
          case Op::read:
            filled = active && s < slots_touched(lane.phase_posted());
            break;
          case Op::write:
            filled = write_latency ? s == 0 : target && s < slots_touched(peer_done_posted(lane));
            break;
          default:
            break;
        }
        if (!filled) continue;
        const std::byte* in = rx(lane, s);
        for (std::size_t b = 0; b < checked; ++b) bad += in[b] != std::byte{pattern_byte(size, b)};
      }
    }
    return bad;
  }

  /// How many slots `count` requests of this phase wrote into.
  std::uint64_t slots_touched(std::uint64_t count) const {
    return std::min<std::uint64_t>(count, slot_stride == 0 ? 1 : slots);
  }

  /// Each target word was hit by c of the peer's n requests, with ordinals
  /// 0..c-1: fetch_add added them all (c(c-1)/2), cswap advanced it c times.
  std::uint64_t atomic_word_errors(Lane& lane) {
    const std::uint64_t n = peer_done_posted(lane);
    const std::uint64_t words = slot_stride == 0 ? 1 : slots;
    std::uint64_t bad = 0;
    for (std::uint64_t w = 0; w < words; ++w) {
      const std::uint64_t c = n > w ? (n - w - 1) / words + 1 : 0;
      const std::uint64_t expected = flow.op == Op::fetch_add ? c * (c - 1) / 2 : c;  // 0 at c = 0
      std::uint64_t word = 0;
      std::memcpy(&word, rx(lane, w), 8);
      bad += word == expected ? 0 : 8;
    }
    return bad;
  }

  std::uint64_t peer_done_posted(const Lane& lane) const {
    if (peer_done.is_null()) return 0;
    const auto index = static_cast<std::size_t>(&lane - lanes.data());
    return peer_done.at("posted").at(index).get<std::uint64_t>();
  }

  SizeOutcome run(std::uint64_t message_size) {
    if (message_size > slot_size) {
      throw std::invalid_argument("size " + std::to_string(message_size) +
                                  " is larger than the test's largest size");
    }
    size = message_size;
    reset_counters();
    SizeOutcome out;
    const Duration& d = test.duration;
    if (d.seconds > 0) {
      if (d.margin > 0) run_phase(0, d.margin, false, out);
    } else if (d.warmup_iterations > 0) {
      run_phase(d.warmup_iterations, 0, false, out);
    }
    // Atomics validation needs the target word to start from zero at the
    // measured phase; the other checks look at the last messages only.
    if (is_atomic(flow.op)) {
      for (Lane& lane : lanes) {
        for (std::uint32_t s = 0; s < slots; ++s) std::memset(rx(lane, s), 0, 8);
      }
    }
    control.barrier(control.timeout());
    run_phase(d.seconds > 0 ? 0 : d.iterations, d.seconds, true, out);

    if (flow.validate) {
      const std::uint64_t bad = corrupted_bytes();
      const std::string mine = std::to_string(bad);
      const Bytes theirs = control.exchange(std::as_bytes(std::span(mine)), control.timeout());
      out.corrupted_bytes = bad + std::stoull(std::string(
                                      reinterpret_cast<const char*>(theirs.data()), theirs.size()));
    }
    return out;
  }
};

TestRunner::TestRunner(Context& context, bootstrap::Bootstrap& bootstrap, const TestSpec& test,
                       const std::atomic<bool>& abort)
    : impl_(std::make_unique<Impl>(context, bootstrap, test, abort)) {}

// Lane members are declared buffer, memory, endpoint, remote: they are
// destroyed in the reverse order, as the plugin interface requires.
TestRunner::~TestRunner() = default;

void TestRunner::setup() {
  impl_->setup();
}

SizeOutcome TestRunner::run(std::uint64_t size) {
  return impl_->run(size);
}

}  // namespace uniperf::engine
