// The serving side of a test: the target of one-sided ops, the receiver of
// a stream, the responder of a ping-pong between its echoes. It consumes what
// arrives, re-posts receives, acknowledges windows, and looks at the control
// channel (only when idle) for the initiator's end-of-phase message.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "engine/clock.hpp"
#include "engine/lane.hpp"
#include "engine/peer_protocol.hpp"

namespace uniperf::engine {

class Server {
 public:
  Server(Lanes& lanes, PeerLink& peer) : lanes_(lanes), peer_(peer), flow_(lanes.flow) {}

  /// Serves the peer's traffic until its end-of-phase message arrived and
  /// every receive it announced was consumed; sends window acks where asked.
  /// Where messages can be lost (Lanes::counts_loss) it stops earlier, once
  /// the end-of-phase message is here and nothing has arrived for
  /// kDrainQuietSeconds: what has not come by then is lost.
  /// `Watch`: the flow's target_watch, compiled in (a write stream's target).
  template <LoopMode M, TargetWatch Watch = TargetWatch::none>
  void serve() {
    const bool ack = flow_.window_mode == WindowMode::window_ack && is_two_sided(flow_.op);
    std::uint32_t idle = 0;
    Ticks drained_at = 0;  // when a lossy stream's drain gives up; 0 = not draining
    while (true) {
      bool progressed = false;
      for (Lane& lane : lanes_.all()) {
        const std::size_t n = lanes_.poll(lane, lanes_.serve_batch);
        // A watching target reads after every call that drives the
        // transport (poll does too), as ucx_perftest's receiver reads
        // between its progress calls.
        if constexpr (Watch == TargetWatch::last_byte) watch_last_byte(lane);
        if (n != 0) {
          lanes_.template absorb<M>(lane, n);
          lanes_.refill(lane);
          progressed = true;
        } else {
          lane.endpoint->progress();
          if constexpr (Watch == TargetWatch::last_byte) watch_last_byte(lane);
        }
        if (ack) send_acks<M>(lane);
      }
      if (peer_.done_received() && all_received()) return;
      if (progressed) {
        idle = 0;
        drained_at = 0;
        lanes_.backoff.progressed();
        continue;
      }
      if (lanes_.counts_loss && peer_.done_received()) {
        // Outside the timed interval: the sender has finished.
        const Ticks t = now();
        if (drained_at == 0) drained_at = deadline_after(t, kDrainQuietSeconds);
        if (t >= drained_at) return;
      }
      if (lanes_.abort_requested()) [[unlikely]]
        Lanes::aborted();
      if constexpr (M.event) {
        // Every lane was just polled; sleep on each in turn (Lanes::sleep_on).
        if (!peer_.done_received())
          lanes_.sleep_on(lanes_[++asleep_on_ % lanes_.size()], std::chrono::milliseconds(10));
      } else {
        lanes_.backoff.empty_poll();
      }
      // Asleep between events, a look at the control channel costs little.
      if (!peer_.done_received() && ++idle >= (M.event ? 1 : kControlCheckInterval)) {
        idle = 0;
        if (peer_.message_ready()) peer_.receive_done();
      }
    }
  }

  /// The passive side's wait for the peer inside a ping-pong: one poll (and,
  /// with Progress, a progress call: a write lands in memory without a
  /// completion to poll for), and every kControlCheckInterval idle polls a
  /// look at the control channel for the initiator's end-of-phase message
  /// (duration mode ends on the initiator's clock). False when it came. A
  /// message ping-pong waits for its own receive completion, which poll()
  /// progresses to: a second call per idle loop would only delay seeing it
  /// (one more provider progress pass, a system call on socket providers).
  ///
  /// With Progress and none of its own requests outstanding, the write
  /// ping-pong's passive side has nothing to poll for and makes the progress
  /// call alone: a peer's write that lands during a pass is seen only after
  /// it, and two passes per look made that wait longer (ucx-shm 8 B put
  /// latency, 5-15 ns less one-way: docs/fidelity.md).
  template <LoopMode M, bool Progress>
  bool wait(Lane& lane) {
    if (Progress && lane.completed == lane.posted) {
      lane.endpoint->progress();
    } else {
      const std::size_t n = lanes_.poll(lane, lanes_.poll_batch);
      if (n != 0) {
        lanes_.backoff.progressed();
        lanes_.template absorb<M>(lane, n);
        return true;
      }
      if constexpr (Progress) lane.endpoint->progress();
    }
    // Over several endpoints the echoes take turns: the last echo, on
    // another lane, may not have left yet on a transport that moves bytes
    // only while its endpoint is driven (the tcp plugin's socket took part
    // of an 8 MiB echo); the peer waits for it before pinging this lane.
    if (lanes_.size() > 1) {
      for (Lane& other : lanes_.all()) {
        if (&other != &lane) other.endpoint->progress();
      }
    }
    if (lanes_.abort_requested()) [[unlikely]]
      Lanes::aborted();
    if constexpr (M.event)
      lane.endpoint->wait(std::chrono::milliseconds(10), flow_.cq_moderation);
    else
      lanes_.backoff.empty_poll();
    if (++idle_polls_ % (M.event ? 1 : kControlCheckInterval) == 0 && peer_.message_ready())
        [[unlikely]] {
      peer_.receive_done();
      return false;
    }
    return true;
  }

 private:
  /// target_watch: last_byte. Reads the last byte of the message as it
  /// lands in the first slot (Lanes::rx), as ucx_perftest's put_bw receiver
  /// reads its sequence number there; what the read does is pull the line
  /// into this side's cache, so that the writer's next write must take it
  /// back. The value is kept (watched_) so that the read stays.
  void watch_last_byte(Lane& lane) {
    watched_ += std::atomic_ref<std::uint8_t>(
                    *reinterpret_cast<std::uint8_t*>(lanes_.rx(lane, 0) + lane.length - 1))
                    .load(std::memory_order_acquire);
  }

  /// Idle polls between looks at the control channel on the serving side.
  static constexpr std::uint32_t kControlCheckInterval = 4096;
  /// How long a receiver waits for more of a lossy stream after the sender
  /// finished and nothing arrived: far above a datagram's flight time, even
  /// through a software device on a loaded host.
  static constexpr double kDrainQuietSeconds = 0.2;

  template <LoopMode M>
  void send_acks(Lane& lane) {
    // The initiator posts whole windows only (see policy::whole_windows).
    while ((lane.acks_sent + 1) * flow_.window <= lane.received) {
      lanes_.make_room<M>(lane, 1);
      lanes_.post_ack(lane);
    }
  }

  bool all_received() const {
    if (!is_two_sided(flow_.op)) return true;
    for (const Lane& lane : lanes_.all()) {
      if (lane.received < peer_.peer_posted(lanes_.index_of(lane))) return false;
    }
    return true;
  }

  Lanes& lanes_;
  PeerLink& peer_;
  const FlowSpec& flow_;
  std::uint32_t idle_polls_ = 0;  // wait()'s count between control checks
  std::size_t asleep_on_ = 0;     // serve()'s lane to sleep on next, in event mode
  std::uint8_t watched_ = 0;      // watch_last_byte()'s reads, summed
};

}  // namespace uniperf::engine
