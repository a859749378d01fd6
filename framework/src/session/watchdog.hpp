// The session's guard against a loop that would wait forever: a thread that
// raises the engine's abort flag when the peer goes away or stops answering
// (its heartbeat), the peer's side of the test failed (its out-of-band
// interrupt), or a size overruns its deadline.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace uniperf::session {

/// The heartbeat connection (bootstrap::Bootstrap::heartbeat_fd), read
/// and written by the watchdog's thread only: one byte to the peer every
/// `period`, and any byte from it a sign of life. When nothing came for
/// `timeout` (after the socket was drained, so a watchdog that was not
/// scheduled for a while does not blame its peer), the abort flag is
/// raised as peer_stopped and `on_lost` is called once with why(): the
/// session severs the control connection with it, so a wait on the
/// control channel ends too. `timeout` 0: beats are sent, silence is not
/// watched.
struct WatchdogHeartbeat {
  int fd = -1;
  std::chrono::milliseconds period{1000};
  std::chrono::milliseconds timeout{5000};
  std::function<void(const std::string& why)> on_lost;
};

/// How a stall's reason starts ("no completion for 10 s (--stall-timeout)"),
/// in this side's words or the peer's: a record whose reason holds it is
/// marked stalled.
inline constexpr std::string_view kStalledWords = "no completion for ";

/// Raises `abort` when the peer's control connection closes, the peer
/// interrupts the current epoch or the armed deadline passes, so a loop
/// spinning on a transport that will never complete again ends within a
/// fraction of a second.
class Watchdog {
 public:
  using SteadyClock = std::chrono::steady_clock;
  /// Bootstrap::take_interrupt of the control connection (called on the
  /// watchdog's thread).
  using InterruptSource = std::function<std::optional<std::uint8_t>()>;
  /// Called once, on the watchdog's thread, when a loop it aborted has not
  /// returned within the grace period: a transport call that never returns
  /// (a provider spinning on a lock its dead peer held). The run cannot go
  /// on; the handler writes what finished and ends the process. Its
  /// arguments: why the loop was aborted, and whether the peer is gone.
  using StuckHandler = std::function<void(const std::string& why, bool peer_lost)>;

  using Heartbeat = WatchdogHeartbeat;

  explicit Watchdog(int liveness_fd, InterruptSource interrupts = {}, StuckHandler on_stuck = {},
                    std::chrono::seconds grace = std::chrono::seconds(15), Heartbeat heartbeat = {})
      : fd_(liveness_fd),
        interrupts_(std::move(interrupts)),
        on_stuck_(std::move(on_stuck)),
        grace_ns_(std::chrono::nanoseconds(grace).count()),
        heartbeat_(std::move(heartbeat)),
        thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }

  /// Why the abort flag was raised (the first cause wins).
  enum class Cause : std::uint8_t {
    none,
    peer_gone,
    peer_stopped,
    stalled,
    deadline,
    flow_failed,
    peer_failed,
    interrupted
  };

  /// A new epoch (docs/architecture.md, "Recovering from a failed test"):
  /// the abort flag and its cause are cleared, and only the peer's
  /// interrupts tagged `tag` count from now on (a late one for an earlier
  /// epoch is dropped). Called between tests, when no loop is running.
  void begin_epoch(std::uint8_t tag) {
    disarm();
    epoch_tag_ = tag;
    cause_ = Cause::none;
    fired_ns_ = 0;
    abort_ = false;
  }

  /// While set, `stop` raised (a Ctrl-C) aborts the loop as `interrupted`;
  /// null: it does not (run-forever tests stop at their window boundary).
  void abort_on(const std::atomic<bool>* stop) { stop_request_ = stop; }

  void arm(std::chrono::seconds limit) {
    {
      std::lock_guard lock(progress_mutex_);
      ++progress_generation_;  // the stall clock starts again with the step
    }
    limit_s_ = limit.count();
    deadline_ns_ = (SteadyClock::now() + limit).time_since_epoch().count();
  }
  /// The guarded step is over: no deadline, and a loop aborted during it
  /// has returned (it is not stuck).
  void disarm() {
    deadline_ns_ = 0;
    fired_ns_ = 0;
  }
  /// A flow's sign of life (engine::ProgressMeter): its count of polls
  /// that found completions, and its phase, odd while it waits for some.
  struct ProgressSource {
    const std::atomic<std::uint64_t>* completions;
    const std::atomic<std::uint32_t>* phase;
  };
  /// The flows of the current test, sampled while a step is armed: one that
  /// waits for completions and saw none for the stall limit raises
  /// `stalled`. An empty list: none (the test is over).
  void watch_progress(std::vector<ProgressSource> sources) {
    std::lock_guard lock(progress_mutex_);
    sources_ = std::move(sources);
    samples_.assign(sources_.size(), {});
    ++progress_generation_;
  }
  /// No completion for this long while a flow waits for one is a stall
  /// (--stall-timeout); 0: never.
  void stall_after(std::chrono::milliseconds limit) { stall_ns_ = limit.count() * 1'000'000; }

  /// Raised by the engine itself when one of a test's concurrent flows
  /// failed: the others stop at their next idle moment instead of waiting
  /// out their deadlines.
  void trip() { raise(Cause::flow_failed); }
  const std::atomic<bool>& abort() const { return abort_; }
  bool fired() const { return abort_; }
  Cause cause() const { return cause_; }
  /// The peer is lost (it closed the connection or stopped answering): the
  /// run ends, as opposed to a test that failed.
  bool peer_lost() const {
    const Cause cause = cause_;
    return cause == Cause::peer_gone || cause == Cause::peer_stopped;
  }
  /// The cause in words, for a record's reason.
  std::string why() const { return why_of(cause_.load()); }

 private:
  std::string why_of(Cause cause) const {
    switch (cause) {
      case Cause::peer_gone:
        return "the peer closed the control connection (it exited or was killed)";
      case Cause::peer_stopped:
        return "the peer stopped answering: no heartbeat for " + seconds(heartbeat_.timeout) +
               " (--heartbeat)";
      case Cause::stalled:
        return std::string(kStalledWords) +
               seconds(std::chrono::milliseconds(stall_ns_ / 1'000'000)) + " (--stall-timeout)";
      case Cause::deadline:
        return "the size ran past its deadline of " + std::to_string(limit_s_.load()) +
               " s (--timeout plus its duration)";
      case Cause::flow_failed:
        return "another flow of the test failed";
      case Cause::peer_failed:
        return "the peer's side of the test failed";
      case Cause::interrupted:
        return "interrupted";
      case Cause::none:
        break;
    }
    return "";
  }

  static std::string seconds(std::chrono::milliseconds t) {
    const auto ms = t.count();
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
    return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
  }

  void watch() {
    const std::int64_t period_ns = std::chrono::nanoseconds(heartbeat_.period).count();
    const std::int64_t silence_ns = std::chrono::nanoseconds(heartbeat_.timeout).count();
    std::int64_t heard_ns = SteadyClock::now().time_since_epoch().count();
    std::int64_t next_beat_ns = heard_ns;
    std::int64_t last_pass_ns = heard_ns;
    bool hung_up = false;          // the control connection reported its end
    bool heartbeat_ended = false;  // the heartbeat connection closed (or we severed it)
    bool silent = false;           // the peer's heartbeat stopped
    while (!stop_) {
      pollfd pfds[2];
      nfds_t count = 0;
      const bool watch_control = fd_ >= 0 && !hung_up;
      const bool watch_heartbeat = heartbeat_.fd >= 0 && !heartbeat_ended;
      if (watch_control) pfds[count++] = {fd_, POLLRDHUP | POLLPRI, 0};
      if (watch_heartbeat) pfds[count++] = {heartbeat_.fd, POLLIN | POLLRDHUP, 0};
      // A connection that ended stays readable: it is not polled again (the
      // thread would spin), its cause is raised again every pass instead
      // (a new epoch clears the cause; a later loop must still stop).
      if (count == 0 || ::poll(pfds, count, 50) <= 0) {
        if (count == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (auto& p : pfds) p.revents = 0;
      }
      if (watch_control && (pfds[0].revents & (POLLRDHUP | POLLHUP | POLLERR))) hung_up = true;
      if (watch_heartbeat && pfds[count - 1].revents != 0) {
        char beats[64];
        const ssize_t got = ::recv(heartbeat_.fd, beats, sizeof beats, MSG_DONTWAIT);
        if (got > 0) {
          heard_ns = SteadyClock::now().time_since_epoch().count();
        } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
          heartbeat_ended = true;
          hung_up = true;  // the peer process ended (or the connection was severed)
        }
      }
      const auto now = SteadyClock::now().time_since_epoch().count();
      // A pass takes 50 ms at most: a longer gap means this side was
      // stopped or not scheduled (Ctrl-Z on a local pair stops both
      // processes; a suspended laptop): the peer's silence is not its
      // fault, its clock starts again (and so do the stall clocks).
      const bool resumed = now - last_pass_ns > std::max<std::int64_t>(period_ns, 1'000'000'000);
      if (resumed) heard_ns = std::max(heard_ns, now);
      last_pass_ns = now;
      if (heartbeat_.fd >= 0 && !heartbeat_ended && now >= next_beat_ns) {
        const char beat = 'h';
        (void)::send(heartbeat_.fd, &beat, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        next_beat_ns = now + period_ns;
      }
      if (heartbeat_.fd >= 0 && silence_ns > 0 && !silent && !heartbeat_ended &&
          now - heard_ns > silence_ns) {
        silent = true;
        raise(Cause::peer_stopped);
        if (heartbeat_.on_lost) heartbeat_.on_lost(why_of(Cause::peer_stopped));
      }
      if (silent) raise(Cause::peer_stopped);
      if (hung_up) raise(Cause::peer_gone);
      if (interrupts_) {
        const auto tag = interrupts_();
        if (tag && *tag == epoch_tag_.load()) raise(Cause::peer_failed);
      }
      const auto deadline = deadline_ns_.load();
      if (deadline != 0 && now > deadline) raise(Cause::deadline);
      if (deadline != 0 && stalled(now, resumed)) raise(Cause::stalled);
      const std::atomic<bool>* stop = stop_request_.load();
      if (stop != nullptr && stop->load()) raise(Cause::interrupted);
      const auto fired = fired_ns_.load();
      if (on_stuck_ && fired != 0 && now - fired > grace_ns_ && !stuck_reported_) {
        stuck_reported_ = true;
        on_stuck_(why(), peer_lost());
      }
    }
  }

  /// Whether a flow that waits for completions has seen none for the stall
  /// limit (the watchdog's thread; a flow's clock restarts when its count
  /// or phase changes, and for every flow when the list or the step does,
  /// or this side was `resumed` after a stop).
  bool stalled(std::int64_t now, bool resumed) {
    const std::int64_t limit = stall_ns_;
    std::lock_guard lock(progress_mutex_);
    const bool restart = resumed || seen_generation_ != progress_generation_;
    seen_generation_ = progress_generation_;
    bool any = false;
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      const std::uint64_t completions = sources_[i].completions->load(std::memory_order_relaxed);
      const std::uint32_t phase = sources_[i].phase->load(std::memory_order_relaxed);
      Sample& s = samples_[i];
      if (restart || completions != s.completions || phase != s.phase || (phase & 1) == 0) {
        s = {completions, phase, now};
        continue;
      }
      any |= limit > 0 && now - s.since > limit;
    }
    return any;
  }

  void raise(Cause cause) {
    Cause none = Cause::none;
    if (cause_.compare_exchange_strong(none, cause))
      fired_ns_ = SteadyClock::now().time_since_epoch().count();
    abort_ = true;
  }

  int fd_;
  InterruptSource interrupts_;
  StuckHandler on_stuck_;
  const std::int64_t grace_ns_;
  const Heartbeat heartbeat_;
  struct Sample {
    std::uint64_t completions = 0;
    std::uint32_t phase = 0;
    std::int64_t since = 0;  // when either last changed
  };
  std::mutex progress_mutex_;  // the sources and the generation
  std::vector<ProgressSource> sources_;
  std::vector<Sample> samples_;  // the watchdog thread's, one per source
  std::uint64_t progress_generation_ = 0;
  std::uint64_t seen_generation_ = 0;
  std::atomic<std::int64_t> stall_ns_{0};
  std::atomic<std::uint8_t> epoch_tag_{0};
  std::atomic<const std::atomic<bool>*> stop_request_{nullptr};
  std::atomic<std::int64_t> fired_ns_{0};  // when the current abort was raised; 0: none
  bool stuck_reported_ = false;            // the watchdog thread's own
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false};
  std::atomic<std::int64_t> deadline_ns_{0};
  std::atomic<std::int64_t> limit_s_{0};
  std::atomic<Cause> cause_{Cause::none};
  std::thread thread_;
};

}  // namespace uniperf::session
