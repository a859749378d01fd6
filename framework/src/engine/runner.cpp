#include "engine/runner.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "engine/lane.hpp"
#include "engine/loops.hpp"
#include "engine/peer_protocol.hpp"
#include "engine/serving.hpp"
#include "engine/validation.hpp"

namespace uniperf::engine {
namespace {

/// Adds one segment of a ping-pong or round-trip phase to `out` from its
/// stamps and returns how many iterations it completed: without a gap
/// stamps[i] began iteration i and the first zero after the last one ends
/// them; with one (`gapped`), stamps[2i] began iteration i and
/// stamps[2i + 1] ended it. A sample is one-way (half the round trip) where
/// out.one_way says so. Over several rails, `rails_of_turn[t]` names the
/// rails turn t's message went over (iteration i takes turn i mod turns),
/// and each of them gets the sample too.
std::uint64_t add_segment(const std::vector<Ticks>& stamps, std::uint64_t cap, bool gapped,
                          std::span<const std::vector<std::uint32_t>> rails_of_turn,
                          SizeOutcome& out) {
  const std::uint64_t per_iteration = gapped ? 2 : 1;
  const auto began = [&](std::uint64_t i) { return stamps[per_iteration * i]; };
  const auto ended = [&](std::uint64_t i) { return gapped ? stamps[2 * i + 1] : stamps[i + 1]; };
  std::uint64_t count = 0;
  while (count < cap && ended(count) != 0) ++count;
  if (count == 0) return 0;
  if (out.iterations == 0) {
    out.started = began(0);
  } else if (!gapped && out.latency.complete() && out.latency.count() < out.latency.exact_limit()) {
    out.latency_resumes_us.emplace_back(out.latency.count(), ticks_to_us(began(0) - out.started));
  }
  const double divisor = out.one_way ? 2.0 : 1.0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const double sample = ticks_to_us(ended(i) - began(i)) / divisor;
    out.latency.add(sample);
    if (!rails_of_turn.empty()) {
      for (const std::uint32_t rail : rails_of_turn[(out.iterations + i) % rails_of_turn.size()])
        out.rails[rail].latency.add(sample);
    }
    // Where each kept sample's iteration began, for the samples of a gap.
    if (gapped && out.latency_begins_us.size() < out.latency.kept().size())
      out.latency_begins_us.push_back(ticks_to_us(began(i) - out.started));
  }
  out.iterations += count;
  out.finished = ended(count - 1);
  out.seconds += ticks_to_us(out.finished - began(0)) / 1e6;
  return count;
}

/// How many bytes at the start of each lane's memory stay unwritten: its
/// send half, where the flow leaves its send buffers untouched.
std::size_t untouched_bytes(const FlowPlan& plan) {
  return plan.flow.send_buffers == SendBuffers::untouched ? plan.buffers.rx_base : 0;
}

/// Whether this side's endpoints take messages: both sides of a ping-pong, a
/// window's acknowledgements and a stream in both directions; only the
/// responder of a one-way stream. (A one-way sender's receives were posted
/// and never used: in a copying pipeline, over the stage ring its own
/// bounce buffers are in.)
bool receives_here(const FlowSpec& flow, int rank) {
  if (!posts_receives(flow)) return false;
  return rank == 1 || flow.direction == Direction::bi || flow.pattern == Pattern::latency ||
         flow.window_mode == WindowMode::window_ack;
}

}  // namespace

struct TestRunner::Impl {
  const std::vector<Context*> rails;  ///< one Context per rail of the config
  bootstrap::Bootstrap& control;
  const FlowPlan plan;
  const FlowSpec& flow = plan.flow;
  const int rank;
  const bool needs_receives;
  PeerLink peer;
  const std::atomic<bool>& aborted;  ///< the session watchdog's flag
  Lanes lanes;
  std::vector<Ticks> stamps;
  std::vector<TraceRow> trace_rows;  ///< the lanes' trace slices (flow.trace > 0)
  FlowGate* const group;             ///< the test's flows, when it has several
  const std::size_t flow_index;      ///< this flow's place in the group
  StopTime own_stop;                 ///< a lone flow's, and every warm-up's, stop time
  FlowGate* grouped = nullptr;       ///< the group, in a measured phase
  Server server;
  Loops loops;
  std::uint64_t size = 0;

  Impl(std::vector<Context*> rail_contexts, bootstrap::Bootstrap& boot, FlowPlan p,
       const std::atomic<bool>& abort, FlowGate* flows, std::size_t flow_index_in_group)
      : rails(std::move(rail_contexts)),
        control(boot),
        plan(std::move(p)),
        rank(boot.rank()),
        needs_receives(receives_here(plan.flow, boot.rank())),
        peer(boot),
        aborted(abort),
        lanes(plan, abort),
        group(flows),
        flow_index(flow_index_in_group),
        server(lanes, peer),
        loops(lanes, server, stamps) {}

  // ------------------------------------------------------------ setup

  void setup(LaneMemory mapped) {
    const BufferGeometry& g = plan.buffers;
    if (mapped.empty() && flow.pages == Pages::huge) mapped = map_lane_memory(plan);
    EndpointParams params;
    params.send_depth = g.send_depth;
    params.recv_depth = plan.recv_depth;
    params.max_inline = flow.inline_size;
    params.max_message =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(plan.max_size, UINT32_MAX));
    params.completion_events = flow.completion == CompletionMode::event;

    // A plugin waiting for its peer in setup stops when the watchdog does.
    bootstrap::BootstrapPeerChannel channel(control, &aborted);
    for (std::uint32_t index = 0; index < lanes.size(); ++index) {
      Lane& lane = lanes[index];
      // Both sides connect the lanes in the same order, each on its rail.
      Context& context = *rails.at(plan.lanes[index].rail);
      // The plugin's own allocation where it offers one (on normal pages),
      // else page-aligned memory of ours; either zeroed and touched before
      // anything is timed, but for send buffers the flow leaves untouched.
      if (!mapped.empty()) {
        lane.own_memory = std::move(mapped.at(index));
      } else {
        lane.memory = context.allocate_memory(g.lane_bytes);
        if (lane.memory) {
          fill_but_untouched(static_cast<std::byte*>(lane.memory->address()), g.lane_bytes,
                             untouched_bytes(plan));
        } else {
          lane.own_memory = std::make_unique<MappedBuffer>(g.lane_bytes, Pages::normal,
                                                           std::byte{0}, untouched_bytes(plan));
        }
      }
      if (lane.own_memory)
        lane.memory = context.register_memory(lane.own_memory->data(), g.lane_bytes);
      lane.base = static_cast<std::byte*>(lane.memory->address());
      params.index = index;
      lane.endpoint = context.connect(params, channel);

      const RegionAdvert theirs =
          peer.exchange_region({reinterpret_cast<std::uintptr_t>(lane.base), lane.memory->length(),
                                lane.memory->remote_key()});
      lane.remote = lane.endpoint->import_region(theirs.address, theirs.length, theirs.key);

      lane.chain.resize(flow.post_list);
      lane.receives.resize(std::max(flow.rx_replenish, flow.rx_depth));
      lane.rx_length.assign(g.recv_slots, 0);
      if (needs_receives) lanes.post_receives(lane, flow.rx_depth);
    }
    if (flow.trace > 0) {
      // Every lane gets an equal share of the rows, allocated (and touched)
      // here, before anything is timed.
      const std::uint64_t per_lane = trace_rows_per_lane(flow.trace_max, lanes.size());
      trace_rows.assign(per_lane * lanes.size(), TraceRow{});
      for (std::uint32_t index = 0; index < lanes.size(); ++index)
        lanes[index].trace.attach(trace_rows.data() + index * per_lane, per_lane, index,
                                  flow.trace);
    }
    peer.barrier();
  }

  // ------------------------------------------------------------ one size

  SizeOutcome run(std::uint64_t message_size) {
    // A flow with its own size runs it at every size of the test.
    size = flow.size != 0 ? flow.size : message_size;
    assert(size <= plan.max_size && "sizes come from the plan");
    loops.set_size(size);
    for (Lane& lane : lanes.all()) {
      // Outstanding receives stay posted across sizes: they are sized for
      // the largest message of the test.
      std::fill(lane.rx_length.begin(), lane.rx_length.end(), 0);
      std::memset(lane.base + plan.buffers.rx_base, 0, plan.buffers.slots * plan.buffers.slot_size);
    }
    for (std::size_t k = 0; k < lanes.size(); ++k)
      lanes[k].length = is_atomic(flow.op) ? 8 : plan.lane_length(k, size);
    if (flow.send_buffers == SendBuffers::pattern) fill_pattern(lanes);
    lanes.prepare();

    SizeOutcome out;
    const Duration& d = plan.run;
    // Duration mode cuts the margin at both ends (perftest's -D/-f): traffic
    // runs for the whole duration, and only the middle is measured.
    const bool margins = d.seconds > 0 && d.margin > 0;
    if (margins) {
      run_phase(0, d.margin, false, out);
    } else if (d.seconds == 0 && d.warmup_iterations > 0) {
      run_phase(d.warmup_iterations, 0, false, out);
    }
    zero_atomic_targets();
    run_phase(d.seconds > 0 ? 0 : d.iterations, d.seconds - (margins ? 2 * d.margin : 0), true,
              out);
    if (margins) {
      // The trailing margin; validation then checks its messages, the last.
      zero_atomic_targets();
      run_phase(0, d.margin, false, out);
    }

    if (flow.validate) {
      const std::uint64_t bad = corrupted_after_landing();
      out.corrupted_bytes = bad + peer.exchange_corrupted(bad);
    }
    return out;
  }

  /// Before validation, the target of a write stream keeps progressing
  /// until its buffer holds what the writes carry. A write's completion
  /// says its source may be reused; over sockets (libfabric's tcp provider,
  /// UCX over tcp) that is before the target has placed it, and the
  /// end-of-phase message can overtake the last writes' bytes: a loaded CI
  /// machine found a target 4,099 bytes short. Asking every signaled write
  /// for remote completion instead (FI_DELIVERY_COMPLETE, a UCX flush) cost
  /// ofi-tcp 4 KiB write bandwidth a factor of 6 and parted the figures
  /// from fi_rma_bw's. Over RDMA the bytes are there by the first check.
  /// Bytes that are wrong rather than late stay wrong, and are counted
  /// once kLandingSeconds have passed.
  /// Returns this side's count of corrupted bytes, from the last scan.
  std::uint64_t corrupted_after_landing() {
    const bool writes_here = flow.op == Op::write && flow.pattern != Pattern::latency &&
                             (rank == 1 || flow.direction == Direction::bi);
    std::uint64_t bad = corrupted_bytes(lanes, peer, rank == 0);
    if (!writes_here) return bad;
    const Ticks give_up = deadline_after(now(), kLandingSeconds);
    while (bad != 0 && now() < give_up) {
      // Many progress passes per scan: a scan reads the whole buffer.
      for (int pass = 0; pass < 64; ++pass) {
        for (Lane& lane : lanes.all()) lane.endpoint->progress();
      }
      bad = corrupted_bytes(lanes, peer, rank == 0);
    }
    return bad;
  }

  /// How long a write stream's target waits for late bytes before it
  /// counts them corrupted: far above a socket's flush, even on a loaded
  /// machine, and paid only where validation finds bytes missing.
  static constexpr double kLandingSeconds = 5.0;

  /// Atomics validation needs every target word to start from zero at the
  /// phase it checks (the last); the other checks look at the last messages
  /// only. Both sides zero theirs before the next phase's barrier.
  void zero_atomic_targets() {
    if (is_atomic(flow.op)) {
      for (Lane& lane : lanes.all()) {
        for (std::uint32_t s = 0; s < plan.buffers.slots; ++s) std::memset(lanes.rx(lane, s), 0, 8);
      }
    }
    peer.barrier();
  }

  /// A flow with a start offset joins the test's others that long after
  /// they were released together; both of its sides wait alike, so its
  /// peer needs no message to learn when it starts. Sleeps (the others run
  /// meanwhile) in slices short enough to notice the watchdog.
  void wait_start_offset() const {
    using Steady = std::chrono::steady_clock;
    const auto start = Steady::now() + std::chrono::duration_cast<Steady::duration>(
                                           std::chrono::duration<double>(flow.start_offset));
    for (auto left = start - Steady::now(); left > Steady::duration::zero();
         left = start - Steady::now()) {
      if (aborted.load(std::memory_order_relaxed))
        throw Aborted("waiting out the flow's start_offset");
      std::this_thread::sleep_for(std::min<Steady::duration>(left, std::chrono::milliseconds(20)));
    }
  }

  /// Runs one phase (warm-up or measured) of `iterations` per endpoint;
  /// a timed phase fills `out`.
  void run_phase(std::uint64_t iterations, double seconds, bool timed, SizeOutcome& out) {
    // A load streams until the group stops it.
    const bool load = timed && flow.role == model::Role::load;
    std::uint64_t total = seconds > 0 || load ? kUnbounded : iterations;
    if (flow.window_mode == WindowMode::window_ack)
      total = policy::whole_windows(total, flow.window);
    const bool latency = flow.pattern == Pattern::latency;
    const bool bidirectional = flow.direction == Direction::bi;
    for (std::size_t k = 0; k < lanes.size(); ++k) {
      Lane& lane = lanes[k];
      lane.phase_start = lane.posted;
      lane.received = lane.acks_sent = 0;
      lane.to_signal = flow.signal_every;
      lane.marker = 0;
      // Latency spreads its iterations round-robin over the endpoints;
      // bandwidth runs `total` on each, less over rails that share the
      // messages (FlowPlan::lane_messages), none on a lane this side does
      // not send on (bind: a direction per rail).
      const LanePlan& placed = plan.lanes[k];
      const bool mine_to_send = rank == 0 ? placed.initiator_sends : placed.responder_sends;
      const bool theirs_to_send = rank == 0 ? placed.responder_sends : placed.initiator_sends;
      const std::uint64_t mine = latency         ? latency_iterations(k, total)
                                 : !mine_to_send ? 0
                                                 : plan.lane_messages(k, size, total);
      // A pipeline posts each message as its fragments.
      lane.target = mine == kUnbounded ? kUnbounded : lane.posted + mine * plan.fragments_at(size);
      lane.peer_sends = !latency && bidirectional && theirs_to_send;
      if (flow.op == Op::write && flow.pattern == Pattern::latency) {
        // The iteration markers restart at every phase.
        std::memset(lanes.rx(lane, 0) + size - 1, 0, 1);
      }
    }
    // The flows of a test start their measured phases together, and its
    // stop rule may end them early (engine/flow_group.hpp); a lone flow,
    // and every warm-up, stops at its own deadline only.
    grouped = timed ? group : nullptr;
    StopTime& stop = grouped ? group->stop_of(flow_index) : own_stop;
    peer.forget_done();
    if (grouped) grouped->gather(aborted);
    peer.barrier();
    if (timed && flow.start_offset > 0) wait_start_offset();
    // The duration runs from here, when the loop starts, on every flow
    // alike; a load has none of its own.
    const Ticks deadline = load ? kNever : deadline_after(now(), seconds);
    if (grouped)
      stop.lower_to(deadline);
    else
      stop.at.store(deadline, std::memory_order_relaxed);

    LoopMode mode = pipeline_role();
    mode.event = flow.completion == CompletionMode::event;
    mode.traced = timed && flow.trace > 0;
    if (mode.traced) {
      for (Lane& lane : lanes.all()) lane.trace.restart();
    }
    ProgressMeter& meter = lanes.backoff.meter();
    // The watchdog watches for a stall only while this side waits for
    // completions (not between phases, nor on the target of one-sided ops,
    // which sees none).
    if (waits_for_completions()) meter.begin_waiting();
    const CpuMeter cpu;
    try {
      in_mode(mode, [&]<LoopMode M>() {
        if constexpr (M.sends_fragments() && M.place != LoopMode::Place::none) {
          latency_phase<M>(iterations, seconds, timed, stop, out);  // a copying ping-pong
        } else if constexpr (M.pipelined()) {
          if (flow.pattern == Pattern::latency)
            latency_phase<M>(iterations, seconds, timed, stop, out);  // a direct ping-pong
          else
            stream_phase<M>(seconds, timed, stop, out);
        } else {
          if (flow.pattern == Pattern::latency)
            latency_phase<M>(iterations, seconds, timed, stop, out);
          else
            stream_phase<M>(seconds, timed, stop, out);
        }
      });
    } catch (const Aborted&) {
      meter.end_waiting();
      // Where the loop was, for the record's reason (a stall's above all).
      throw Aborted(progress_text(timed));
    } catch (...) {
      meter.end_waiting();
      throw;
    }
    meter.end_waiting();
    if (timed) {
      const CpuUse mine = cpu.elapsed();
      const CpuUse theirs = peer.exchange_cpu(mine);
      if (rank == 0) {
        out.initiator_cpu = mine;
        out.responder_cpu = theirs;
      }
    }
    peer.barrier();
    if (mode.traced) collect_trace(out);
  }

  /// This side's part of a pipelined flow (LoopMode::Pipe, Place): a
  /// stream's initiator sends fragments and a copying responder places
  /// them; both sides of a ping-pong do both. Nothing otherwise.
  LoopMode pipeline_role() const {
    using Pipe = LoopMode::Pipe;
    using Place = LoopMode::Place;
    if (!plan.pipelined()) return {};
    const Pipe sends = flow.source == model::Source::staged ? Pipe::send_staged : Pipe::send;
    const Place places = flow.delivery == model::Delivery::direct ? Place::none
                         : flow.reassembly == model::Reassembly::cut_through
                             ? Place::cut_through
                             : Place::store_and_forward;
    // Both sides of a ping-pong send the message and place the other's.
    if (flow.pattern == Pattern::latency) return {.pipe = sends, .place = places};
    return rank == 0 ? LoopMode{.pipe = sends} : LoopMode{.place = places};
  }

  /// Runs `phase` compiled for `mode`: LoopMode's two flags (four loops),
  /// times what a side posts (whole messages, fragments, staged fragments)
  /// by how it places received fragments (not, as each lands, per message).
  template <class Phase>
  static void in_mode(LoopMode mode, Phase&& phase) {
    using Pipe = LoopMode::Pipe;
    using Place = LoopMode::Place;
    if (mode.place == Place::none) {
      switch (mode.pipe) {
        case Pipe::none:
          return in_mode<Pipe::none, Place::none>(mode, phase);
        case Pipe::send:
          return in_mode<Pipe::send, Place::none>(mode, phase);
        case Pipe::send_staged:
          return in_mode<Pipe::send_staged, Place::none>(mode, phase);
      }
    }
    const bool cut_through = mode.place == Place::cut_through;
    switch (mode.pipe) {
      case Pipe::none:
        return cut_through ? in_mode<Pipe::none, Place::cut_through>(mode, phase)
                           : in_mode<Pipe::none, Place::store_and_forward>(mode, phase);
      case Pipe::send:
        return cut_through ? in_mode<Pipe::send, Place::cut_through>(mode, phase)
                           : in_mode<Pipe::send, Place::store_and_forward>(mode, phase);
      case Pipe::send_staged:
        return cut_through ? in_mode<Pipe::send_staged, Place::cut_through>(mode, phase)
                           : in_mode<Pipe::send_staged, Place::store_and_forward>(mode, phase);
    }
  }
  template <LoopMode::Pipe P, LoopMode::Place Q, class Phase>
  static void in_mode(LoopMode mode, Phase& phase) {
    if (mode.event) {
      mode.traced ? phase.template operator()<LoopMode{true, true, P, Q}>()
                  : phase.template operator()<LoopMode{true, false, P, Q}>();
    } else {
      mode.traced ? phase.template operator()<LoopMode{false, true, P, Q}>()
                  : phase.template operator()<LoopMode{false, false, P, Q}>();
    }
  }

  /// After a traced phase: every lane's rows, out of the loop's memory.
  void collect_trace(SizeOutcome& out) const {
    out.trace.every = flow.trace;
    out.trace.capacity = trace_rows.size();
    out.trace.rows.clear();
    for (const Lane& lane : lanes.all()) {
      out.trace.rows.insert(out.trace.rows.end(), lane.trace.rows(),
                            lane.trace.rows() + lane.trace.written());
      out.trace.dropped += lane.trace.dropped();
    }
  }

  /// Whether this side's part of a phase waits for completions: every side
  /// that posts (the initiator, both sides of a bi-directional test, both
  /// sides of a ping-pong), and the receiver of two-sided ops; not the
  /// passive target of one-sided ops (reads, atomics, a write stream land
  /// without a completion on its side, though a latency test posts it
  /// receives all the same).
  bool waits_for_completions() const {
    return rank == 0 || flow.direction == Direction::bi || is_two_sided(flow.op) ||
           (flow.pattern == Pattern::latency && flow.op == Op::write);
  }

  /// "after 12 of 200 messages of the measured phase" (sends completed, or
  /// receives for a side that only receives).
  std::string progress_text(bool timed) const {
    std::uint64_t done = 0, total = 0;
    bool bounded = true;
    for (const Lane& lane : lanes.all()) {
      const bool sends = lane.posted > lane.phase_start;
      done += sends ? (lane.completed > lane.phase_start ? lane.completed - lane.phase_start : 0)
                    : lane.received;
      if (lane.target == kUnbounded)
        bounded = false;
      else
        total += lane.target - lane.phase_start;
    }
    return "after " + std::to_string(done) +
           (bounded && total > 0 ? " of " + std::to_string(total) : std::string()) +
           " messages of the " + (timed ? "measured" : "warm-up") + " phase";
  }

  /// A ping-pong or round-trip phase: the loop for the op and side, then the
  /// end-of-phase message from the initiator.
  template <LoopMode M>
  void latency_phase(std::uint64_t iterations, double seconds, bool timed, const StopTime& stop,
                     SizeOutcome& out) {
    // With a gap each iteration keeps two stamps (its start and its end).
    // A warm-up keeps none (its samples are discarded) and runs whole.
    const bool gapped = flow.latency_gap > 0;
    const std::uint64_t total = seconds > 0 ? kUnbounded : iterations;
    // A segment is whole turns of the endpoints: each loop call starts its
    // round-robin at the first, where the responder's one loop goes on.
    const std::uint64_t turns = lanes.size() / plan.turn_stride();
    const std::uint64_t segment =
        timed ? std::min(total, std::max(turns, plan.latency_segment / turns * turns)) : total;
    stamps.assign(timed ? (gapped ? 2 * segment : segment + 1) : 1, 0);
    loops.keep_samples(timed);
    loops.set_gap(static_cast<Ticks>(flow.latency_gap * 1e6 * clock_info().ticks_per_us));
    const bool initiator = rank == 0;
    // Who takes part in the loop: both sides of a ping-pong, only the
    // initiator of a read or atomic round trip. Only the initiator pauses.
    const bool active =
        initiator || flow.op == Op::send || flow.op == Op::write_imm || flow.op == Op::write;
    // Over striped rails the turns are groups of lanes (plan: write latency
    // and a gap are SKIPPED there).
    const bool striped = plan.stripes();
    loops.set_turns(plan.turn_stride(), plan.turn_width(size));
    const auto run_loop = [&](std::uint64_t count) {
      if constexpr (M.pipelined()) {
        !initiator ? loops.pingpong_pipelined<M, false>(count, stop)
        : gapped   ? loops.pingpong_pipelined<M, true, true>(count, stop)
                   : loops.pingpong_pipelined<M, true>(count, stop);
      } else if (striped) {
        if (is_two_sided(flow.op)) {
          initiator ? loops.pingpong_striped<M, true>(count, stop)
                    : loops.pingpong_striped<M, false>(count, stop);
        } else if (initiator) {
          loops.roundtrip_striped<M>(count, stop);
        }
      } else if (flow.op == Op::write) {
        !initiator ? loops.pingpong_write<M, false>(count, stop)
        : gapped   ? loops.pingpong_write<M, true, true>(count, stop)
                   : loops.pingpong_write<M, true>(count, stop);
      } else if (is_two_sided(flow.op)) {
        !initiator ? loops.pingpong_message<M, false>(count, stop)
        : gapped   ? loops.pingpong_message<M, true, true>(count, stop)
                   : loops.pingpong_message<M, true>(count, stop);
      } else if (initiator) {
        gapped ? loops.roundtrip<M, true>(count, stop) : loops.roundtrip<M>(count, stop);
      }
    };
    if (!initiator || !timed) {
      // The responder echoes for the whole phase (segments are the
      // initiator's alone); its loop ends at the initiator's end-of-phase
      // message in duration mode.
      run_loop(total);
    } else {
      out.one_way = flow.op == Op::send || flow.op == Op::write || flow.op == Op::write_imm;
      out.latency = model::LatencyDistribution(plan.exact_samples);
      const std::vector<std::vector<std::uint32_t>> rails_of_turn = turn_rails();
      if (!rails_of_turn.empty()) {
        out.rails.assign(plan.rails,
                         RailTally{.latency = model::LatencyDistribution(plan.exact_samples)});
      }
      for (std::uint64_t done = 0;;) {
        const std::uint64_t count = std::min(segment, total - done);
        run_loop(count);
        const std::uint64_t ran = add_segment(stamps, count, gapped, rails_of_turn, out);
        done += ran;
        if (ran < count || done >= total || now() >= stop.load()) break;
        std::fill(stamps.begin(), stamps.end(), 0);
      }
      out.messages = out.iterations;
      out.bytes = out.iterations * wire_bytes();
      // The iterations went round-robin over the lanes.
      std::vector<std::uint64_t> per_lane(lanes.size());
      for (std::size_t k = 0; k < lanes.size(); ++k)
        per_lane[k] = latency_iterations(k, out.iterations);
      tally_rails(per_lane, out);
      // Per direction, as the messages.
      if constexpr (M.pipelined()) out.fragments = out.iterations * plan.fragments_at(size);
    }
    if (grouped && initiator) grouped->done(flow_index);
    // A rendezvous send completes only while its sender progresses: finish
    // our own sends before the end-of-phase message.
    loops.drain<M>();
    if (initiator) {
      peer.send_done(phase_done());
    } else if (!active) {
      server.serve<M>();
    } else if (!peer.done_received()) {
      // A complete request may still have its tail queued on this side (UCX
      // over tcp: a buffered send or a software put), and the initiator's
      // loop waits for that tail before it speaks (settle()).
      progress_until_peer_speaks();
      peer.receive_done();
    }
    loops.drain<M>();
    settle();
  }

  /// The end of a latency phase. A request may complete only while the
  /// peer's transport moves (a UCX rendezvous send ends with the receiver's
  /// acknowledgement; remote completion for writes, tried and measured in
  /// docs/architecture.md, stalled ucx-tcp write latency here for 10 s),
  /// and each side's last request is in flight when the other's loop ends:
  /// a side that went on to block on the control channel once its own
  /// requests were complete could leave the peer's waiting for ever. Each
  /// side says its requests are complete, then keeps its endpoints moving
  /// until the peer has said the same. A peer that never does is a stall,
  /// which the session's watchdog ends (abort_requested); a dead one closes
  /// the control connection, which message_ready() reports.
  void settle() {
    peer.send_settled();
    progress_until_peer_speaks();
    peer.receive_settled();
  }

  /// Keeps this side's endpoints moving until the peer's next control
  /// message is here, instead of blocking on the control channel while the
  /// peer may still wait for this side's transport to move.
  void progress_until_peer_speaks() {
    while (!peer.message_ready()) {
      for (Lane& lane : lanes.all()) lane.endpoint->progress();
      if (lanes.abort_requested()) [[unlikely]]
        Lanes::aborted();
      lanes.backoff.empty_poll();
    }
  }

  /// The rate limit as post lists (chains of post_list requests) per clock
  /// tick on each of the flow's lanes (a rate in bits counts this size's
  /// messages, wire bytes each); 0 when the flow is not limited.
  double lane_chains_per_tick() const {
    const model::Rate& rate = flow.rate_limit;
    if (rate.per_second <= 0) return 0;
    const double messages_per_s =
        rate.bits ? rate.per_second / (8.0 * static_cast<double>(wire_bytes())) : rate.per_second;
    const double ticks_per_s = clock_info().ticks_per_us * 1e6;
    // Over the lanes that post in this phase (a rail may idle: a stripe's
    // message at or below its threshold goes over the first rail alone).
    std::size_t posting = 0;
    for (const Lane& lane : lanes.all()) posting += lane.target != lane.phase_start;
    // A striped message is a post on every rail.
    const double posts_per_message = plan.striped_at(size) ? plan.rails : 1;
    return messages_per_s * posts_per_message / ticks_per_s /
           static_cast<double>(std::max<std::size_t>(1, posting)) /
           static_cast<double>(flow.post_list);
  }

  /// A bandwidth or message-rate phase: the sending side(s) stream, the
  /// receiving side(s) serve until the sender's end-of-phase message, and
  /// both say how many of the other's messages they received.
  template <LoopMode M>
  void stream_phase(double seconds, bool timed, const StopTime& stop, SizeOutcome& out) {
    const bool bidirectional = flow.direction == Direction::bi;
    const bool sends = rank == 0 || bidirectional;
    const bool serves = rank == 1 || bidirectional;
    if (sends) {
      Ticks started = 0;
      Ticks finished = 0;
      const double pace = lane_chains_per_tick();
      loops.set_pace(pace);
      loops.set_stop_together(plan.striped_at(size));
      const bool stoppable = seconds > 0 || grouped;
      if (flow.window_mode == WindowMode::window_ack) {
        finished = loops.stream_window_ack<M>(stop, started);
      } else if (pace > 0) {
        finished = stoppable ? loops.stream<M, true, true>(stop, started)
                             : loops.stream<M, false, true>(stop, started);
      } else {
        finished = stoppable ? loops.stream<M, true>(stop, started)
                             : loops.stream<M, false>(stop, started);
      }
      // Outside the loop, inside the interval: once per phase.
      if (flow.stream_end == StreamEnd::delivered) finished = loops.until_delivered<M>();
      if (grouped && rank == 0) grouped->done(flow_index);
      const double secs = ticks_to_us(finished - started) / 1e6;
      PhaseDone done = phase_done(secs);
      if constexpr (M.sends_fragments()) {
        done.bytes = plan.messages_of(done.posted, size) * size;  // whole messages
      } else {
        for (const Lane& lane : lanes.all()) done.bytes += lane.data_posted() * lane.length;
      }
      peer.send_done(done);
      if (timed) {
        out.started = started;
        out.finished = finished;
        out.seconds = secs;
        out.messages = plan.messages_of(done.posted, size);
        out.bytes = done.bytes;
        out.iterations = out.messages;
        if constexpr (M.sends_fragments())
          out.fragments = std::accumulate(done.posted.begin(), done.posted.end(), std::uint64_t{0});
        tally_rails(done.posted, out);
      }
    }
    if (serves) {
      if (flow.target_watch == TargetWatch::last_byte)
        server.serve<M, TargetWatch::last_byte>();
      else
        server.serve<M>();
    } else {
      // A sender's completions may come before its last bytes have left:
      // UCX over tcp completes a buffered send with its tail still queued
      // when the socket was full, and sends it only while progressed. The
      // receiver speaks once everything announced has arrived; until then
      // this side keeps moving (blocking on the control channel here left
      // a loaded run's receiver 1 message short until the stall timeout).
      progress_until_peer_speaks();
    }
    // Received here of the peer's messages, and there of ours. A reliable
    // transport delivered everything announced (serve waited for it); on an
    // unreliable one this is the only account of what was lost.
    const std::uint64_t received_here = serves ? lanes.received() : 0;
    const std::uint64_t received_there = peer.exchange_delivered(received_here);
    if (plan.pipelined()) {
      // A pipelined message is done when its last byte is in place at the
      // receiver: a copying receiver places the last message after its
      // last fragment arrived, when the sender's last completion has come.
      // The receiver times that tail on its own clock and the sender adds
      // it to its interval (docs/pipeline.md).
      const double placing = ticks_to_us(rank == 1 ? lanes.placing() : 0) / 1e6;
      const double theirs = peer.exchange_placing(placing);
      if (timed && rank == 0) {
        out.seconds += theirs;
        out.finished += static_cast<Ticks>(theirs * 1e6 * clock_info().ticks_per_us);
      }
    }
    if (timed && rank == 0) {
      if (bidirectional) {
        // Both directions: bytes add up, over the longer of the two intervals.
        const PhaseDone& theirs = peer.peer_done();
        out.bytes += theirs.bytes;
        out.messages += plan.messages_of(theirs.posted, size);
        out.seconds = std::max(out.seconds, theirs.seconds);
        tally_rails(theirs.posted, out);
      }
      if (plan.counts_loss()) {
        // Bandwidth over what arrived; what was sent is kept beside it. A
        // straggler of the previous phase can arrive after its drain gave
        // up, so delivered is held to sent.
        out.messages_sent = out.messages;
        out.messages = std::min(out.messages, received_there + received_here);
        out.bytes = out.messages * wire_bytes();
        out.counts_loss = true;
      }
    }
    loops.drain<M>();
  }

  /// This side's end of a phase: what it posted on each endpoint (the peer
  /// validates against it and waits for as many receives), and for a
  /// stream, its interval and bytes.
  PhaseDone phase_done(double seconds = 0, std::uint64_t bytes = 0) const {
    PhaseDone done;
    for (const Lane& lane : lanes.all()) done.posted.push_back(lane.data_posted());
    done.seconds = seconds;
    done.bytes = bytes;
    return done;
  }

  std::uint64_t wire_bytes() const { return is_atomic(flow.op) ? 8 : size; }

  /// Over several rails, the rails each turn of a ping-pong goes over, in
  /// turn order (the loops take the groups of lanes in turn, from the first
  /// at every segment, and segments are whole turns); empty over one rail.
  std::vector<std::vector<std::uint32_t>> turn_rails() const {
    if (plan.rails == 1) return {};
    const std::size_t stride = plan.turn_stride();
    std::vector<std::vector<std::uint32_t>> turns(lanes.size() / stride);
    for (std::size_t t = 0; t < turns.size(); ++t) {
      for (std::size_t k = 0; k < plan.turn_width(size); ++k) {
        const std::uint32_t rail = plan.lanes[t * stride + k].rail;
        if (std::find(turns[t].begin(), turns[t].end(), rail) == turns[t].end())
          turns[t].push_back(rail);
      }
    }
    return turns;
  }

  /// Iterations of a ping-pong of `total` that lane `k` takes part in:
  /// round-robin over the lanes, or over a stripe's groups.
  std::uint64_t latency_iterations(std::size_t k, std::uint64_t total) const {
    return plan.stripes() ? plan.lane_iterations(k, size, total)
                          : policy::latency_share(total, lanes.size(), k);
  }

  /// Adds `posted` requests per lane (this side's, or the peer's of a
  /// bi-directional stream, whose lanes are laid out alike) to the rails
  /// they went over: bytes, and requests (a striped message's pieces).
  void tally_rails(const std::vector<std::uint64_t>& posted, SizeOutcome& out) const {
    if (plan.rails == 1) return;
    out.rails.resize(plan.rails);
    for (std::size_t k = 0; k < lanes.size() && k < posted.size(); ++k) {
      RailTally& rail = out.rails[plan.lanes[k].rail];
      rail.requests += posted[k];
      rail.bytes += posted[k] * (is_atomic(flow.op) ? 8 : plan.lane_length(k, size));
    }
  }
};

LaneMemory map_lane_memory(const FlowPlan& plan) {
  LaneMemory memory;
  for (std::size_t k = 0; k < plan.lanes.size(); ++k)
    memory.push_back(std::make_unique<MappedBuffer>(plan.buffers.lane_bytes, plan.flow.pages,
                                                    std::byte{0}, untouched_bytes(plan)));
  return memory;
}

TestRunner::TestRunner(std::vector<Context*> rails, bootstrap::Bootstrap& control, FlowPlan plan,
                       const std::atomic<bool>& abort, FlowGate* group, std::size_t index)
    : impl_(std::make_unique<Impl>(std::move(rails), control, std::move(plan), abort, group,
                                   index)) {}

TestRunner::TestRunner(Context& context, bootstrap::Bootstrap& control, FlowPlan plan,
                       const std::atomic<bool>& abort, FlowGate* group, std::size_t index)
    : TestRunner(std::vector<Context*>{&context}, control, std::move(plan), abort, group, index) {}

// A Lane's members are declared memory before endpoint before remote: they
// are destroyed in the reverse order, as the plugin interface requires.
TestRunner::~TestRunner() = default;

void TestRunner::setup(LaneMemory mapped) {
  impl_->setup(std::move(mapped));
}

SizeOutcome TestRunner::run(std::uint64_t size) {
  return impl_->run(size);
}

const ProgressMeter& TestRunner::progress() const {
  return impl_->lanes.backoff.meter();
}

}  // namespace uniperf::engine
