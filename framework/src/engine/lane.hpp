// A lane is one endpoint of a flow with its memory, its prebuilt requests and
// its counters; Lanes are a flow's lanes plus the hot helpers every timed loop
// is made of (post a chain, absorb completions, refill receives). The rules
// those helpers apply (when a request is signaled, when the window has room,
// when receives are re-posted) are the small named functions of `policy`,
// unit-tested on their own.
//
// Everything here runs inside timed loops: no allocation, no logging, no
// branch on the test type; requests are built once per size and only their
// ids, offsets and flags are rewritten.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <uniperf/plugin.hpp>
#include <vector>

#include "engine/clock.hpp"
#include "engine/errors.hpp"
#include "engine/mapped_buffer.hpp"
#include "engine/plan.hpp"
#include "engine/trace.hpp"

namespace uniperf::engine {

inline constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max();

/// How a phase's loops run, fixed before the phase and compiled in: every
/// loop and helper is instantiated per mode, so a loop never branches on
/// it. event: completions by event (sleep until one comes) instead of
/// polling; traced: requests are stamped into the lane's trace (a
/// measured phase of a flow with `trace` set).
struct LoopMode {
  bool event = false;
  bool traced = false;
  /// A pipelined flow's part on this side (docs/pipeline.md): what it
  /// posts (its messages' fragments, from the message buffer or through
  /// bounce buffers) and how it places the fragments it receives (copied
  /// into the message buffer as each lands, or once a message's last has).
  /// A stream's sender only sends and its receiver only places; both sides
  /// of a ping-pong do both.
  enum class Pipe : std::uint8_t {
    none,        ///< whole messages (or a direct pipeline's target)
    send,        ///< fragments from the message buffer (zero_copy)
    send_staged  ///< each fragment copied into a bounce buffer first
  };
  enum class Place : std::uint8_t {
    none,              ///< no fragments to place (received whole, or written in place)
    cut_through,       ///< each fragment copied into place as it lands
    store_and_forward  ///< a message's fragments copied once its last landed
  };
  Pipe pipe = Pipe::none;
  Place place = Place::none;

  constexpr bool sends_fragments() const { return pipe != Pipe::none; }
  constexpr bool pipelined() const { return pipe != Pipe::none || place != Place::none; }
};

namespace policy {

/// Signaling: a request is signaled when `signal_every` posts have passed
/// since the last signaled one, and always when it ends its burst (the last
/// of a phase or window), so every posted request is covered by a
/// completion. A countdown instead of a modulo: no division on the hot path.
inline bool take_signal(std::uint32_t& countdown, std::uint32_t signal_every, bool ends_burst) {
  const bool due = --countdown == 0;
  countdown = due ? signal_every : countdown;
  return due || ends_burst;
}

/// Streaming window: a chain of `chain` requests may go out while no more
/// than `window` would then be outstanding.
inline bool window_has_room(std::uint64_t posted, std::uint64_t completed, std::uint32_t chain,
                            std::uint32_t window) {
  return posted + chain - completed <= window;
}

/// The send queue: `need` more requests fit under `send_depth` outstanding.
inline bool send_queue_has_room(std::uint64_t posted, std::uint64_t completed, std::uint64_t need,
                                std::uint32_t send_depth) {
  return posted + need - completed <= send_depth;
}

/// Receive replenish: consumed receives are re-posted in whole batches of
/// `rx_replenish`; fewer pending wait for more.
inline bool replenish_due(std::uint32_t pending, std::uint32_t rx_replenish) {
  return pending >= rx_replenish;
}

/// window_ack: a phase is whole windows, since the receiver acknowledges
/// every `window` messages.
inline std::uint64_t whole_windows(std::uint64_t total, std::uint32_t window) {
  return total == kUnbounded ? total : (total + window - 1) / window * window;
}

/// Latency spreads `total` iterations round-robin over `lanes` endpoints:
/// endpoint `k`'s share.
inline std::uint64_t latency_share(std::uint64_t total, std::size_t lanes, std::size_t k) {
  return total == kUnbounded ? total : total / lanes + (k < total % lanes ? 1 : 0);
}

/// Duration mode stops a stream at the next signaled request after the
/// deadline, so every posted request is covered by a completion: the id that
/// ends the stream, counted from the phase start.
inline std::uint64_t stop_after_signal(std::uint64_t phase_posted, std::uint32_t signal_every) {
  return (phase_posted + signal_every - 1) / signal_every * signal_every;
}

}  // namespace policy

/// A flow's sign of life for the session's watchdog (another thread): how
/// many polls found completions, and whether this side now waits for any
/// (an odd `phase`: inside a phase where completions must come; the target
/// of one-sided ops waits for none). One writer, the flow's thread.
///
/// progressed() is a relaxed load and store of a counter on the cache line
/// the backoff's own counter already dirties: a plain add on x86 and
/// AArch64, no locked instruction, no fence. The watchdog reads it about 20
/// times a second, so the line moves between cores that often, not per
/// completion (measured: docs/architecture.md, "A stalled transport").
struct ProgressMeter {
  std::atomic<std::uint64_t> completions{0};
  std::atomic<std::uint32_t> phase{0};

  void progressed() {
    completions.store(completions.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  /// Around a phase, outside the timed loop.
  void begin_waiting() { phase.store(phase.load(std::memory_order_relaxed) | 1); }
  void end_waiting() {
    const std::uint32_t p = phase.load(std::memory_order_relaxed);
    if (p & 1) phase.store(p + 1);
  }
};

/// Busy polling on a machine with more runnable threads than cores: a side
/// that spins while its peer waits for the same core holds that core for its
/// whole time slice, so a ping-pong between two spinners sharing a core
/// makes one round trip per slice (milliseconds instead of microseconds) and
/// a loaded CI machine runs past its deadlines. After kPollsBeforeYield empty
/// polls in a row a waiter hands the core to whoever is runnable (MPI
/// libraries' yield-when-idle). On an idle machine a wait that long is far
/// off any small message's critical path, and a yield with nothing else to
/// run returns at once.
///
/// The same progressed() call also feeds the flow's ProgressMeter, which
/// the session's watchdog samples from its own thread to tell a stalled
/// transport (no completion for --stall-timeout) from a slow one.
class IdleBackoff {
 public:
  static constexpr std::uint32_t kPollsBeforeYield = 2048;

  void progressed() {
    empty_polls_ = 0;
    meter_.progressed();
  }
  void empty_poll() {
    if (++empty_polls_ == kPollsBeforeYield) [[unlikely]] {
      empty_polls_ = 0;
      std::this_thread::yield();
    }
  }

  ProgressMeter& meter() { return meter_; }
  const ProgressMeter& meter() const { return meter_; }

 private:
  std::uint32_t empty_polls_ = 0;
  ProgressMeter meter_;
};

/// One endpoint with its buffer halves, prebuilt requests and counters.
struct Lane {
  std::unique_ptr<MappedBuffer> own_memory;  // null: the plugin allocated it
  std::unique_ptr<MemoryRegion> memory;
  std::byte* base = nullptr;  // the lane's memory, whoever allocated it
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
  // A ping-pong's chain rewritten ahead (Lanes::prepare_chain): its length,
  // and to_signal once it is posted.
  std::uint64_t prepared = 0;
  std::uint32_t prepared_to_signal = 1;
  std::uint8_t marker = 0;  // write latency: the last iteration marker
  // A bidirectional stream's lane on which the peer sends: the streaming
  // side drains its receives for as long as it streams, also once its own
  // sends on it are complete (or when it has none: a direction per rail).
  bool peer_sends = false;
  std::uint64_t length = 0;  // bytes per request at this size (a stripe's piece)
  // A pipelined flow: the next fragment this side posts, and the next one
  // it places, within their messages (both 0 between phases).
  std::uint64_t fragment_posted = 0;
  std::uint64_t fragment_placed = 0;
  LaneTrace trace;  // traced phases only (LoopMode::traced)

  std::uint64_t phase_posted() const { return posted - phase_start; }
  /// Data requests of this phase (window acks excluded).
  std::uint64_t data_posted() const { return phase_posted() - acks_sent; }
};

/// A flow's lanes and the helpers the loops are built from.
class Lanes {
 public:
  Lanes(const FlowPlan& plan, const std::atomic<bool>& abort)
      : flow(plan.flow),
        geometry(plan.buffers),
        slot_mask(plan.buffers.slots - 1),
        recv_mask(plan.buffers.recv_slots - 1),
        stage_mask(plan.buffers.stage_slots == 0 ? 0 : plan.buffers.stage_slots - 1),
        poll_batch(std::clamp<std::uint32_t>(plan.flow.cq_moderation, 1, kMaxCompletions)),
        serve_batch(std::clamp<std::uint32_t>(plan.flow.rx_depth, poll_batch, kMaxCompletions)),
        // A pipeline's receives hold fragments apart until they are placed.
        rx_stride(plan.flow.buffers == BufferMode::single && !plan.pipelined() ? 0 : 1),
        counts_loss(plan.counts_loss()),
        abort_(abort),
        lanes_(plan.lane_count()) {}

  static constexpr std::uint32_t kMaxCompletions = 256;

  const FlowSpec flow;
  const BufferGeometry geometry;
  const std::uint64_t slot_mask;
  const std::uint64_t recv_mask;   // receive buffers (BufferGeometry::recv_slots)
  const std::uint64_t stage_mask;  // a pipeline's ring (BufferGeometry::stage_slots)
  const std::uint32_t poll_batch;
  // The passive side of a stream drains its receive completions as they
  // come, up to the receive queue (perftest's server polls rx_depth at a
  // time): cq_moderation moderates the sender's completions, not arrivals.
  const std::uint32_t serve_batch;
  const std::uint64_t rx_stride;  // receives: a ring of slots, or slot 0 for single buffers
  // Messages may be lost (FlowPlan::counts_loss): a receiver stops waiting
  // for what the sender announced once nothing more arrives.
  const bool counts_loss;
  IdleBackoff backoff;  // every busy wait of the flow's thread

  std::vector<Lane>& all() { return lanes_; }
  const std::vector<Lane>& all() const { return lanes_; }
  Lane& operator[](std::size_t k) { return lanes_[k]; }
  std::size_t size() const { return lanes_.size(); }
  std::size_t index_of(const Lane& lane) const {
    return static_cast<std::size_t>(&lane - lanes_.data());
  }
  /// Receives consumed in the current phase, over every endpoint.
  std::uint64_t received() const {
    std::uint64_t total = 0;
    for (const Lane& lane : lanes_) total += lane.received;
    return total;
  }

  std::byte* tx(Lane& lane, std::uint64_t slot) const {
    return lane.base + geometry.tx_base + (slot & slot_mask) * geometry.slot_size;
  }
  std::byte* rx(Lane& lane, std::uint64_t slot) const {
    return lane.base + geometry.rx_base + (slot & slot_mask) * geometry.slot_size;
  }

  [[noreturn]] static void aborted() { throw Aborted(); }
  bool abort_requested() const { return abort_.load(std::memory_order_relaxed); }

  void post_receives(Lane& lane, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      RecvRequest& r = lane.receives[i];
      r.id = lane.recv_ids++;
      r.local = lane.memory.get();
      r.offset = geometry.recv_base + ((r.id * rx_stride) & recv_mask) * geometry.recv_slot_size;
      r.length = static_cast<std::uint32_t>(geometry.recv_slot_size);
    }
    lane.endpoint->post_recv(lane.receives.data(), count);
  }

  /// Polls up to `batch` completions into the shared array.
  std::size_t poll(Lane& lane, std::uint32_t batch) {
    return lane.endpoint->poll(completions_, batch);
  }

  /// Consumes the first `count` polled completions: credits the window and
  /// counts receives. Re-posting them is refill()'s job, so each loop
  /// decides when it happens: at once in streaming, after the next post in
  /// a ping-pong (off its critical path).
  template <LoopMode M>
  void absorb(Lane& lane, std::size_t count) {
    Ticks polled_at = 0;
    if constexpr (M.traced) polled_at = now();
    for (std::size_t i = 0; i < count; ++i) {
      const Completion& c = completions_[i];
      if (c.status != 0) [[unlikely]]
        fail(lane, c);
      if (c.type == CompletionType::send) {
        lane.completed = c.id + 1;
        if constexpr (M.traced) lane.trace.completed(c.id, polled_at);
      } else {
        ++lane.received;
        lane.rx_length[(c.id * rx_stride) & recv_mask] = c.length;
        ++lane.replenish_pending;
        if constexpr (M.place == LoopMode::Place::cut_through) place_fragment(lane, c);
        if constexpr (M.place == LoopMode::Place::store_and_forward) place_message(lane, c);
      }
    }
  }

  void refill(Lane& lane) {
    while (policy::replenish_due(lane.replenish_pending, flow.rx_replenish)) {
      post_receives(lane, flow.rx_replenish);
      lane.replenish_pending -= flow.rx_replenish;
    }
  }

  /// Polls once and consumes what came (re-posting receives unless
  /// Deferred); on nothing, lets the waiter idle (spin, yield or sleep).
  template <LoopMode M, bool Deferred = false>
  void pump(Lane& lane) {
    const std::size_t n = poll(lane, poll_batch);
    if (n != 0) {
      backoff.progressed();
      absorb<M>(lane, n);
      if constexpr (!Deferred) refill(lane);
      return;
    }
    if (abort_requested()) [[unlikely]]
      aborted();
    if constexpr (M.event)
      sleep_on(lane, std::chrono::milliseconds(100));
    else
      backoff.empty_poll();
  }

  /// Event mode's sleep once `lane` has nothing to complete: on its
  /// completion channel for up to `alone`. One endpoint's wait sees only
  /// its own completions, so beside other lanes it first drives them and
  /// sleeps at most kSleepBesideOtherLanes: a long sleep on one lane leaves
  /// the rest unserved, and over a transport that moves bytes only while
  /// its endpoint is polled (the tcp plugin) the peer's sends on them wait
  /// too. Both directions over two endpoints, 64 KiB sends, with 100 ms
  /// sleeps against 1 ms: tcp 290-790 against 2700-3600 MB/s, ofi-tcp
  /// 840-1400 against 2500-3500; ucx-tcp alike (3 runs each, 2026-11-28).
  void sleep_on(Lane& lane, std::chrono::milliseconds alone) {
    if (lanes_.size() == 1) {
      lane.endpoint->wait(alone, flow.cq_moderation);
      return;
    }
    for (Lane& other : lanes_) {
      if (&other != &lane) other.endpoint->progress();
    }
    lane.endpoint->wait(std::min(alone, kSleepBesideOtherLanes), flow.cq_moderation);
  }
  static constexpr std::chrono::milliseconds kSleepBesideOtherLanes{1};

  /// Posts one chain of up to post_list requests. `burst_end` is the id
  /// after the last request of the current burst: it is always signaled.
  /// A pipelined sender's requests are its messages' fragments
  /// (point_fragment), anyone else's whole messages (point_message).
  template <LoopMode M>
  void post_chain(Lane& lane, std::uint64_t burst_end) {
    Ticks posting_at = 0;
    if constexpr (M.traced) posting_at = now();
    const std::uint64_t count = rewrite_chain<M>(lane, burst_end, lane.to_signal, posting_at);
    lane.endpoint->post(lane.chain.data(), count);
    if constexpr (M.traced) lane.trace.post_returned(now());
    lane.posted += count;
  }

  /// post_chain in two halves, for a ping-pong (untraced, whole messages):
  /// the chain is rewritten while the loop waits for the peer, and posted
  /// once it may go, so that the rewrite is not between the peer's message
  /// and the reply (ucx-shm 8 B: docs/fidelity.md). Nothing may post on the
  /// lane in between. A prepared chain that is never posted (the loop ended
  /// first) changes nothing: the signal countdown moves when it is posted.
  template <LoopMode M>
  void prepare_chain(Lane& lane, std::uint64_t burst_end) {
    static_assert(!M.traced && !M.sends_fragments(), "a traced or pipelined post is not split");
    lane.prepared_to_signal = lane.to_signal;
    lane.prepared = rewrite_chain<M>(lane, burst_end, lane.prepared_to_signal, 0);
  }
  void post_prepared(Lane& lane) {
    lane.endpoint->post(lane.chain.data(), lane.prepared);
    lane.to_signal = lane.prepared_to_signal;
    lane.posted += lane.prepared;
  }

  /// A copying receiver: how long placing the last message it completed
  /// took after its last fragment arrived (the copy a sender's last
  /// completion does not cover).
  Ticks placing() const { return placing_; }

  /// A pipelined flow's requests at this size: whole messages of
  /// fragments, so a phase stopped after `requests` ends at a message's end.
  std::uint64_t whole_messages(std::uint64_t requests) const {
    return (requests + pipe_.fragments - 1) / pipe_.fragments * pipe_.fragments;
  }

  /// A pipelined flow's fragments per message at this size (prepare).
  std::uint64_t fragments() const { return pipe_.fragments; }

  /// Waits until `need` more requests fit in the send queue.
  template <LoopMode M>
  void make_room(Lane& lane, std::uint64_t need) {
    while (!policy::send_queue_has_room(lane.posted, lane.completed, need, geometry.send_depth))
      pump<M>(lane);
  }

  /// A window acknowledgement: one signaled byte from the tx half.
  void post_ack(Lane& lane) {
    WorkRequest ack;
    ack.id = lane.posted++;
    ack.op = Op::send;
    ack.flags = WorkRequest::kSignaled;
    ack.length = 1;
    ack.local = lane.memory.get();
    ack.local_offset = geometry.tx_base;
    lane.endpoint->post(&ack, 1);
    ++lane.acks_sent;
  }

  /// Builds every lane's request chain for requests of its `length` bytes
  /// (Lane::length, set before) and points the requests for this flow's op
  /// (once per size, before timing). A pipelined flow's messages of
  /// `length` go as fragments, numbered from the first again.
  void prepare();

  /// Slots a stream's requests cycle over: 0 when every request uses slot 0
  /// (latency, single buffers).
  std::uint64_t slot_stride() const { return slot_stride_; }

 private:
  /// Rewrites the lane's next chain of up to post_list requests (ids from
  /// lane.posted, `to_signal` counting down to the next signaled one) and
  /// returns how many it holds.
  template <LoopMode M>
  std::uint64_t rewrite_chain(Lane& lane, std::uint64_t burst_end, std::uint32_t& to_signal,
                              Ticks posting_at) {
    const std::uint64_t count = std::min<std::uint64_t>(flow.post_list, burst_end - lane.posted);
    for (std::uint64_t i = 0; i < count; ++i) {
      WorkRequest& wr = lane.chain[i];
      const std::uint64_t id = lane.posted + i;
      wr.id = id;
      const bool signaled = policy::take_signal(to_signal, flow.signal_every, id + 1 == burst_end);
      if constexpr (M.traced) lane.trace.posted(id, posting_at, signaled);
      if constexpr (M.sends_fragments())
        point_fragment<M>(lane, wr, signaled);
      else
        point_message(lane, wr, signaled);
    }
    return count;
  }

  [[noreturn]] void fail(Lane& lane, const Completion& c) {
    throw TransportError(std::string(c.type == CompletionType::send ? "operation" : "receive") +
                         " " + std::to_string(c.id) +
                         " failed: " + lane.endpoint->describe(c.status));
  }

  /// A whole message's request `wr` (its id set): its slot, and the
  /// per-op data atomics use (a request's ordinal is how many earlier ones
  /// of the phase hit its target word: fetch_add adds it, cswap swaps it ->
  /// it+1; other ops ignore it).
  void point_message(Lane& lane, WorkRequest& wr, bool signaled) const {
    wr.flags = static_cast<std::uint8_t>((wr.flags & ~WorkRequest::kSignaled) |
                                         (signaled ? WorkRequest::kSignaled : 0));
    const std::uint64_t seq = wr.id - lane.phase_start;
    const std::uint64_t ordinal = seq >> ordinal_shift_;
    wr.compare_add = ordinal;
    wr.swap = ordinal + 1;
    const std::uint64_t slot_offset = ((seq * slot_stride_) & slot_mask) * geometry.slot_size;
    wr.local_offset = local_base_ + slot_offset + local_shift_;
    wr.remote_offset = remote_base_ + slot_offset;
  }

  /// A pipelined sender's request `wr` (its id set): the lane's next
  /// fragment, pointed at its offset within the message (the last one of a
  /// message shorter), from the message buffer or (send_staged) from a
  /// bounce buffer it is copied into first, and (direct delivery) to the
  /// same offset of the peer's.
  template <LoopMode M>
  void point_fragment(Lane& lane, WorkRequest& wr, bool signaled) const {
    const std::uint64_t offset = lane.fragment_posted * pipe_.fragment;
    const bool last = lane.fragment_posted + 1 == pipe_.fragments;
    const std::uint32_t length = last ? pipe_.last_fragment : pipe_.fragment;
    lane.fragment_posted = last ? 0 : lane.fragment_posted + 1;
    wr.length = length;
    wr.flags = static_cast<std::uint8_t>((signaled ? WorkRequest::kSignaled : 0) |
                                         (length <= flow.inline_size ? WorkRequest::kInline : 0));
    if constexpr (M.pipe == LoopMode::Pipe::send_staged) {
      // The bounce buffer is free: at most send_depth requests are
      // outstanding, and the ring has a buffer for each.
      const std::uint64_t stage =
          geometry.bounce_base + (wr.id & stage_mask) * geometry.stage_slot_size;
      std::memcpy(lane.base + stage, lane.base + geometry.tx_base + offset, length);
      wr.local_offset = stage;
    } else {
      wr.local_offset = geometry.tx_base + offset;
    }
    wr.remote_offset = geometry.rx_base + offset;
  }

  /// A copying receiver's fragment `c` of the lane's current message, from
  /// its receive buffer to its offset in the message buffer (the rx half).
  void place_fragment(Lane& lane, const Completion& c) {
    const bool last = lane.fragment_placed + 1 == pipe_.fragments;
    const Ticks arrived = last ? now() : 0;
    std::memcpy(lane.base + geometry.rx_base + lane.fragment_placed * pipe_.fragment,
                received_fragment(lane, c.id), c.length);
    lane.fragment_placed = last ? 0 : lane.fragment_placed + 1;
    if (last) placing_ = now() - arrived;
  }

  /// store_and_forward: at a message's last fragment, every fragment of it
  /// into place; their receive buffers were not re-posted meanwhile
  /// (the ring holds a message's fragments beside every posted receive).
  void place_message(Lane& lane, const Completion& c) {
    if (++lane.fragment_placed < pipe_.fragments) return;
    lane.fragment_placed = 0;
    const Ticks arrived = now();
    const std::uint64_t first = c.id + 1 - pipe_.fragments;
    std::byte* out = lane.base + geometry.rx_base;
    for (std::uint64_t k = 0; k + 1 < pipe_.fragments; ++k, out += pipe_.fragment)
      std::memcpy(out, received_fragment(lane, first + k), pipe_.fragment);
    std::memcpy(out, received_fragment(lane, c.id), c.length);
    placing_ = now() - arrived;
  }

  std::byte* received_fragment(Lane& lane, std::uint64_t receive_id) const {
    return lane.base + geometry.recv_base + (receive_id & recv_mask) * geometry.recv_slot_size;
  }

  /// A pipelined flow at this size (prepare).
  struct PipeShape {
    std::uint64_t fragments = 1;  // per message
    std::uint32_t fragment = 0;   // bytes of every fragment but the last
    std::uint32_t last_fragment = 0;
  };

  const std::atomic<bool>& abort_;
  PipeShape pipe_;
  Ticks placing_ = 0;
  std::vector<Lane> lanes_;
  Completion completions_[kMaxCompletions];

  // Where post_chain points requests, set once per size (prepare) so the
  // chain rewrite stays branch-free.
  std::size_t local_base_ = 0, remote_base_ = 0, local_shift_ = 0;
  std::uint64_t slot_stride_ = 1;
  unsigned ordinal_shift_ = 0;  // log2(slots) when requests cycle over the slots, else 0
};

}  // namespace uniperf::engine
