// The timed loops: one function per pattern, chosen once per phase by the
// runner (run_phase) and specialised at compile time on the loop mode
// (LoopMode: completions by event or polling; traced or not) and the side
// (Initiator), so nothing inside them branches on the test type, allocates
// or logs. The only per-iteration work besides the transport calls is
// counter arithmetic and, in latency tests, one clock read into memory sized
// before the loop; a traced phase adds the trace's stores (engine/trace.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/clock.hpp"
#include "engine/flow_group.hpp"
#include "engine/lane.hpp"
#include "engine/serving.hpp"
#include "model/suite_spec.hpp"

namespace uniperf::engine {

class Loops {
 public:
  Loops(Lanes& lanes, Server& server, std::vector<Ticks>& stamps)
      : lanes_(lanes), server_(server), stamps_(stamps), flow_(lanes.flow) {}

  /// The message size of the phase (write latency polls its last byte).
  void set_size(std::uint64_t size) { size_ = size; }

  /// Whether the latency loops keep one start stamp per iteration (a
  /// measured phase) or reuse one (a warm-up, whose samples are discarded:
  /// its memory then does not grow with its length). A mask, not a branch.
  void keep_samples(bool keep) { stamp_mask_ = keep ? ~std::uint64_t{0} : 0; }

  /// The pause before each iteration of a latency loop (FlowSpec::
  /// latency_gap), in ticks: the loops compiled with Gapped spin it out
  /// before stamping the iteration's start, and stamp its end as well
  /// (stamps[2i] began iteration i, stamps[2i + 1] ended it), so the pause
  /// is in no sample.
  void set_gap(Ticks gap) { gap_ = gap; }

  /// The pace of a stream compiled with Paced (FlowSpec::rate_limit): by
  /// `t` ticks into the phase each lane may have posted 1 + t *
  /// chains_per_tick whole post lists, so the flow's lanes together keep
  /// the rate and a post list is never cut short.
  void set_pace(double lane_chains_per_tick) { lane_chains_per_tick_ = lane_chains_per_tick; }

  /// A stream whose messages are striped over the rails (one piece per
  /// lane) stops every lane at the same count when its stop time comes, so
  /// that no message is left with a piece on one rail only: lanes post at
  /// their own pace (a rail whose window is full falls behind), and each
  /// stopping at its own next signaled request left the rails' shares of a
  /// timed stripe uneven (two shaped hosts: 2883584 and 2621440 bytes).
  void set_stop_together(bool together) { stop_together_ = together; }

  /// Ping-pong over send / write_imm: the initiator sends and waits for the
  /// echo, the responder waits and echoes. stamps[i] is when iteration i
  /// began; stamps[count] when the last one ended.
  template <LoopMode M, bool Initiator, bool Gapped = false>
  void pingpong_message(std::uint64_t total, const StopTime& stop) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    Ticks next_start = 0;
    if constexpr (Initiator) prepare_post<M>(lanes_[next]);
    for (; i < total; ++i) {
      Lane& lane = take_turn(next);
      const std::uint64_t expect = lane.received + 1;
      if constexpr (Initiator) {
        const Ticks begun = begin_iteration<Gapped>(i, next_start);
        lanes_.make_room<M>(lane, 1);
        post_prepared<M>(lane);
        lanes_.refill(lane);            // the previous echo's receive, while the ping flies
        prepare_post<M>(lanes_[next]);  // the next ping, as well
        while (lane.received < expect) lanes_.pump<M, true>(lane);
        end_iteration<Gapped>(i, next_start);
        if (begun >= stop.load()) break;
      } else {
        prepare_post<M>(lane);  // the echo, before the ping comes
        while (lane.received < expect) {
          if (!server_.wait<M, false>(lane)) return;
        }
        lanes_.make_room<M>(lane, 1);
        post_prepared<M>(lane);
        lanes_.refill(lane);
      }
    }
    if constexpr (Initiator && !Gapped) stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// The lanes a striped ping-pong's turns take (FlowPlan::turn_stride,
  /// turn_width): groups of `stride` lanes in turn, the first `width` of a
  /// group posting a piece each.
  void set_turns(std::size_t stride, std::size_t width) {
    turn_stride_ = stride;
    turn_width_ = width;
  }

  /// Ping-pong over send / write_imm of a message striped over the rails:
  /// an iteration posts a piece on each lane of its group (one per rail)
  /// and ends when every piece's echo is back; the responder echoes once
  /// every piece has arrived. Below the threshold a group's first lane
  /// alone carries the whole message. stamps as pingpong_message's.
  template <LoopMode M, bool Initiator>
  void pingpong_striped(std::uint64_t total, const StopTime& stop) {
    const std::size_t groups = lanes_.size() / turn_stride_;
    std::uint64_t expect[model::kMaxRails];
    std::uint64_t i = 0;
    std::size_t group = 0;
    for (; i < total; ++i) {
      Lane* const first = &lanes_[group * turn_stride_];
      group = group + 1 == groups ? 0 : group + 1;
      for (std::size_t k = 0; k < turn_width_; ++k) expect[k] = first[k].received + 1;
      if constexpr (Initiator) {
        const Ticks begun = stamps_[i & stamp_mask_] = now();
        for (std::size_t k = 0; k < turn_width_; ++k) {
          lanes_.make_room<M>(first[k], 1);
          lanes_.template post_chain<M>(first[k], burst_end(first[k]));
          lanes_.refill(first[k]);
        }
        // Every piece's lane in turn: a transport that moves bytes only
        // while its endpoint is driven (the tcp plugin) still has the rest
        // of a large piece to send on the lanes not waited on.
        for (bool waiting = true; waiting;) {
          waiting = false;
          for (std::size_t k = 0; k < turn_width_; ++k) {
            if (first[k].received >= expect[k]) continue;
            waiting = true;
            lanes_.pump<M, true>(first[k]);
          }
        }
        if (begun >= stop.load()) break;
      } else {
        for (std::size_t k = 0; k < turn_width_; ++k) {
          while (first[k].received < expect[k]) {
            if (!server_.wait<M, false>(first[k])) return;
          }
        }
        for (std::size_t k = 0; k < turn_width_; ++k) {
          lanes_.make_room<M>(first[k], 1);
          lanes_.template post_chain<M>(first[k], burst_end(first[k]));
          lanes_.refill(first[k]);
        }
      }
    }
    if constexpr (Initiator) stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// Round trip of a read or atomic striped over the rails (initiator
  /// only): a piece on each lane of the iteration's group, done when all are.
  template <LoopMode M>
  void roundtrip_striped(std::uint64_t total, const StopTime& stop) {
    const std::size_t groups = lanes_.size() / turn_stride_;
    std::uint64_t i = 0;
    std::size_t group = 0;
    for (; i < total; ++i) {
      Lane* const first = &lanes_[group * turn_stride_];
      group = group + 1 == groups ? 0 : group + 1;
      const Ticks begun = stamps_[i & stamp_mask_] = now();
      for (std::size_t k = 0; k < turn_width_; ++k)
        lanes_.template post_chain<M>(first[k], first[k].posted + 1);
      for (bool waiting = true; waiting;) {
        waiting = false;
        for (std::size_t k = 0; k < turn_width_; ++k) {
          if (first[k].completed >= first[k].posted) continue;
          waiting = true;
          lanes_.pump<M>(first[k]);
        }
      }
      if (begun >= stop.load()) break;
    }
    stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// Ping-pong over RDMA write: each side polls the last byte of its receive
  /// slot for the peer's iteration marker, then writes its own.
  template <LoopMode M, bool Initiator, bool Gapped = false>
  void pingpong_write(std::uint64_t total, const StopTime& stop) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    Ticks next_start = 0;
    if constexpr (Initiator) prepare_post<M>(lanes_[next]);
    for (; i < total; ++i) {
      Lane& lane = take_turn(next);
      const std::uint8_t marker = next_marker(lane);
      const std::atomic_ref<std::uint8_t> last = landing_last_byte(lane);
      if constexpr (Initiator) {
        const Ticks begun = begin_iteration<Gapped>(i, next_start);
        lanes_.make_room<M>(lane, 1);
        mark_outgoing(lane, marker);
        post_prepared<M>(lane);
        prepare_post<M>(lanes_[next]);  // the next write, while this one flies
        await_marker<M, true>(lane, last, marker);
        end_iteration<Gapped>(i, next_start);
        lanes_.backoff.progressed();  // the marker came without a completion
        if (begun >= stop.load()) break;
      } else {
        prepare_post<M>(lane);  // the reply, before the peer's write lands
        if (!await_marker<M, false>(lane, last, marker)) return;
        lanes_.backoff.progressed();
        lanes_.make_room<M>(lane, 1);
        mark_outgoing(lane, marker);
        post_prepared<M>(lane);
      }
    }
    if constexpr (Initiator && !Gapped) stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// Ping-pong of a pipelined message (docs/pipeline.md): the initiator
  /// posts the message's fragments, `window` of them in flight; the
  /// responder echoes it the same way once all of it is in its message
  /// buffer - the marker in its last byte written there (direct delivery,
  /// whose writes land in order: plan's skip otherwise) or every fragment
  /// received and copied into place (copy) - and an iteration ends when
  /// the echo is all in the initiator's. stamps as pingpong_message's.
  template <LoopMode M, bool Initiator, bool Gapped = false>
  void pingpong_pipelined(std::uint64_t total, const StopTime& stop) {
    constexpr bool direct = M.place == LoopMode::Place::none;
    const std::uint64_t fragments = lanes_.fragments();
    std::uint64_t i = 0;
    std::size_t next = 0;
    Ticks next_start = 0;
    for (; i < total; ++i) {
      Lane& lane = take_turn(next);
      // Direct: the message is all here when the marker is in its last
      // byte. Copy: when all its fragments are received (and placed).
      const std::uint8_t marker = direct ? next_marker(lane) : 0;
      const std::atomic_ref<std::uint8_t> last = landing_last_byte(lane);
      const std::uint64_t expect = lane.received + fragments;
      if constexpr (Initiator) {
        const Ticks begun = begin_iteration<Gapped>(i, next_start);
        post_fragments_of_message<M>(lane, fragments, marker);
        if constexpr (direct) {
          await_marker<M, true>(lane, last, marker);
          lanes_.backoff.progressed();  // the marker came without a completion
        } else {
          while (lane.received < expect) lanes_.pump<M>(lane);
        }
        end_iteration<Gapped>(i, next_start);
        if (begun >= stop.load()) break;
      } else {
        if constexpr (direct) {
          if (!await_marker<M, false>(lane, last, marker)) return;
          lanes_.backoff.progressed();
        } else {
          while (lane.received < expect) {
            if (!server_.wait<M, false>(lane)) return;
            // A message of more fragments than rx_depth needs its receives
            // back while it arrives.
            lanes_.refill(lane);
          }
        }
        post_fragments_of_message<M>(lane, fragments, marker);
      }
    }
    if constexpr (Initiator && !Gapped) stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// Round trip of one read or atomic at a time (initiator only).
  template <LoopMode M, bool Gapped = false>
  void roundtrip(std::uint64_t total, const StopTime& stop) {
    std::uint64_t i = 0;
    std::size_t next = 0;
    Ticks next_start = 0;
    for (; i < total; ++i) {
      Lane& lane = take_turn(next);
      const Ticks begun = begin_iteration<Gapped>(i, next_start);
      lanes_.template post_chain<M>(lane, lane.posted + 1);
      while (lane.completed < lane.posted) lanes_.pump<M>(lane);
      end_iteration<Gapped>(i, next_start);
      if (begun >= stop.load()) break;
    }
    if constexpr (!Gapped) stamps_[std::min(i + 1, total) & stamp_mask_] = now();
  }

  /// Streaming window (wait-any): keep up to `window` requests outstanding
  /// per endpoint, refilled as completions arrive (a pipeline's requests
  /// are its messages' fragments). Stoppable (duration
  /// mode, and the flows of a test with several) reads the clock and the
  /// stop time once per pass and ends at the next signaled request past it;
  /// a lone flow's iteration count never does. Returns first post -> last
  /// completion.
  template <LoopMode M, bool Stoppable, bool Paced = false>
  Ticks stream(const StopTime& stop, Ticks& started) {
    started = now();
    bool stopping = false;
    std::uint64_t allowed = 0;  // Paced: the posts per lane the pace allows by now
    while (true) {
      if constexpr (Paced)
        allowed =
            flow_.post_list * (1 + static_cast<std::uint64_t>(static_cast<double>(now() - started) *
                                                              lane_chains_per_tick_));
      bool all_done = true;
      for (Lane& lane : lanes_.all()) {
        std::uint64_t end = lane.target;
        if constexpr (Paced) end = std::min(end, lane.phase_start + allowed);
        while (lane.posted < end && policy::window_has_room(lane.posted, lane.completed,
                                                            flow_.post_list, flow_.window)) {
          lanes_.template post_chain<M>(lane, end);
        }
        if (lane.completed < lane.target) {
          all_done = false;
          lanes_.pump<M>(lane);
        } else if (lane.peer_sends) {
          // The peer's direction: its receives, re-posted. Over a transport
          // that moves bytes only while polled (the tcp plugin), a peer
          // still sending on this lane would otherwise wait for this side,
          // while this side waits for the peer on another lane (both
          // directions over two tcp endpoints stalled for 10 s so).
          lanes_.pump<M>(lane);
        }
      }
      if (all_done) break;
      if constexpr (Stoppable) {
        if (!stopping && now() >= stop.load()) [[unlikely]] {
          stopping = true;
          // Together: where the lane furthest ahead stops (the others may
          // still post up to it; their window is the same).
          std::uint64_t furthest = 0;
          if (stop_together_) {
            for (const Lane& lane : lanes_.all())
              furthest = std::max(furthest, lane.phase_posted());
          }
          for (Lane& lane : lanes_.all()) {
            std::uint64_t stop_after = policy::stop_after_signal(
                stop_together_ ? furthest : lane.phase_posted(), flow_.signal_every);
            // A pipeline's last message goes whole; its last fragment
            // ends the burst, so it is signaled.
            if constexpr (M.sends_fragments()) stop_after = lanes_.whole_messages(stop_after);
            lane.target = std::min(lane.target, lane.phase_start + stop_after);
          }
        }
      }
    }
    return now();
  }

  /// Window with acknowledgement (wait-all): post `window` back to back,
  /// wait for all of them and (two-sided ops) for the receiver's ack.
  template <LoopMode M>
  Ticks stream_window_ack(const StopTime& stop, Ticks& started) {
    const bool acked = is_two_sided(flow_.op);
    started = now();
    bool more = true;
    while (more) {
      more = false;
      for (Lane& lane : lanes_.all()) {
        if (lane.posted >= lane.target) continue;
        const std::uint64_t window_end =
            std::min<std::uint64_t>(lane.posted + flow_.window, lane.target);
        while (lane.posted < window_end) lanes_.template post_chain<M>(lane, window_end);
        while (lane.completed < lane.posted) lanes_.pump<M>(lane);
        if (acked) {
          // One ack per whole window (it may already have arrived while the
          // sends completed).
          const std::uint64_t acks = lane.phase_posted() / flow_.window;
          while (lane.received < acks) lanes_.pump<M>(lane);
        }
        if (now() >= stop.load()) [[unlikely]]
          lane.target = lane.posted;
        more |= lane.posted < lane.target;
      }
    }
    return now();
  }

  /// stream_end: delivered. After the stream's last completion, until every
  /// endpoint's transport says what it was given is at the peer
  /// (Endpoint::flush), asking them in turn so that their flushes overlap;
  /// the peer's direction of a bidirectional stream is served meanwhile.
  /// Returns when that was.
  template <LoopMode M>
  Ticks until_delivered() {
    bool delivered = false;
    while (!delivered) {
      delivered = true;
      for (Lane& lane : lanes_.all()) {
        // Asked again once it said yes: a flush with nothing outstanding is
        // one cheap call, and the lanes keep no state for this.
        if (lane.endpoint->flush()) continue;
        delivered = false;
        if (lanes_.abort_requested()) [[unlikely]]
          Lanes::aborted();
        if (!lane.peer_sends) continue;
        // Polled, never slept on: the flush is what this side waits for.
        if (const std::size_t n = lanes_.poll(lane, lanes_.poll_batch); n != 0) {
          lanes_.template absorb<M>(lane, n);
          lanes_.refill(lane);
        }
      }
    }
    return now();
  }

  /// Every phase ends with its last post signaled; waiting for it leaves no
  /// completion of this phase to surface in the next.
  template <LoopMode M>
  void drain() {
    for (Lane& lane : lanes_.all()) {
      while (lane.completed < lane.posted) lanes_.pump<M>(lane);
    }
  }

 private:
  /// Stamps iteration i's start: without a gap the start of one iteration
  /// is the end of the one before (stamps[i]); with one, after spinning
  /// until `next_start` (stamps[2i]). Nothing is outstanding then, so the
  /// spin needs no progress.
  template <bool Gapped>
  Ticks begin_iteration(std::uint64_t i, Ticks next_start) {
    if constexpr (Gapped) {
      Ticks t = now();
      while (t < next_start) t = now();
      return stamps_[(2 * i) & stamp_mask_] = t;
    } else {
      return stamps_[i & stamp_mask_] = now();
    }
  }

  /// With a gap, stamps iteration i's end (stamps[2i + 1]) and sets when
  /// the next may begin.
  template <bool Gapped>
  void end_iteration(std::uint64_t i, Ticks& next_start) {
    if constexpr (Gapped) {
      const Ticks ended = stamps_[(2 * i + 1) & stamp_mask_] = now();
      next_start = ended + gap_;
    }
  }

  /// A pipelined ping-pong's message: its fragments as the send queue
  /// takes them, the last one signaled. Written in place (direct), its last
  /// byte carries the iteration's marker, which the peer polls.
  template <LoopMode M>
  void post_fragments_of_message(Lane& lane, std::uint64_t fragments, std::uint8_t marker) {
    if constexpr (M.place == LoopMode::Place::none) mark_outgoing(lane, marker);
    const std::uint64_t end = lane.posted + fragments;
    while (lane.posted < end) {
      lanes_.make_room<M>(lane, std::min<std::uint64_t>(flow_.post_list, end - lane.posted));
      lanes_.template post_chain<M>(lane, end);
    }
  }

  /// A ping-pong's next post on `lane`, rewritten while the loop waits for
  /// the peer (Lanes::prepare_chain), then posted when its turn comes. A
  /// traced phase stamps its posts as they go, so it rewrites and posts at
  /// once (post_prepared alone).
  template <LoopMode M>
  void prepare_post(Lane& lane) {
    if constexpr (!M.traced) lanes_.template prepare_chain<M>(lane, burst_end(lane));
  }
  template <LoopMode M>
  void post_prepared(Lane& lane) {
    if constexpr (M.traced)
      lanes_.template post_chain<M>(lane, burst_end(lane));
    else
      lanes_.post_prepared(lane);
  }

  /// The lanes in turn, one per iteration: `next`'s, then the one after.
  Lane& take_turn(std::size_t& next) {
    Lane& lane = lanes_[next];
    next = next + 1 == lanes_.size() ? 0 : next + 1;
    return lane;
  }

  /// A lane's iteration markers, 1..255 in turn: never 0, the value of a
  /// cleared buffer, so a marker is always news.
  static std::uint8_t next_marker(Lane& lane) {
    return lane.marker = static_cast<std::uint8_t>(lane.marker % 255 + 1);
  }

  /// The last byte of the lane's message as the peer writes it here, where
  /// its marker lands after every other byte; and of the one it sends.
  std::atomic_ref<std::uint8_t> landing_last_byte(Lane& lane) {
    return std::atomic_ref<std::uint8_t>(
        *reinterpret_cast<std::uint8_t*>(lanes_.rx(lane, 0) + size_ - 1));
  }
  void mark_outgoing(Lane& lane, std::uint8_t marker) {
    *reinterpret_cast<std::uint8_t*>(lanes_.tx(lane, 0) + size_ - 1) = marker;
  }

  /// Until the peer's `marker` is in `last`: the initiator drives the
  /// transport between looks, the responder waits on it (false: the run
  /// ended first). The caller counts the progress (backoff.progressed()),
  /// the initiator's after its iteration's end stamp.
  template <LoopMode M, bool Initiator>
  bool await_marker(Lane& lane, const std::atomic_ref<std::uint8_t>& last, std::uint8_t marker) {
    if constexpr (Initiator) {
      while (!spin_for(last, marker)) lanes_.pump<M>(lane);
    } else {
      while (!spin_for(last, marker)) {
        if (!server_.wait<M, true>(lane)) return false;
      }
    }
    return true;
  }

  /// Looks at a polled byte between transport polls (write latency).
  static constexpr std::uint32_t kSpinsBetweenPolls = 64;

  /// Ping-pong posts follow signal_every with the phase's last post always
  /// signaled. A duration-mode phase has no known last post, so there every
  /// post is signaled (the record's params say signal_every as given; the
  /// difference is documented in docs/results.md).
  static std::uint64_t burst_end(const Lane& lane) {
    return lane.target == kUnbounded ? lane.posted + 1 : lane.target;
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

  Lanes& lanes_;
  Server& server_;
  std::vector<Ticks>& stamps_;
  const FlowSpec& flow_;
  std::uint64_t size_ = 0;
  std::uint64_t stamp_mask_ = ~std::uint64_t{0};
  Ticks gap_ = 0;
  double lane_chains_per_tick_ = 0;
  bool stop_together_ = false;
  std::size_t turn_stride_ = 1, turn_width_ = 1;
};

}  // namespace uniperf::engine
