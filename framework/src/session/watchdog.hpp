// The session's guard against a loop that would wait forever: a thread that
// raises the engine's abort flag when the peer goes away, the peer's side of
// the test failed (its out-of-band interrupt), or a size overruns its
// deadline.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace uniperf::session {

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

  explicit Watchdog(int liveness_fd, InterruptSource interrupts = {}, StuckHandler on_stuck = {},
                    std::chrono::seconds grace = std::chrono::seconds(15))
      : fd_(liveness_fd),
        interrupts_(std::move(interrupts)),
        on_stuck_(std::move(on_stuck)),
        grace_ns_(std::chrono::nanoseconds(grace).count()),
        thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }

  /// Why the abort flag was raised (the first cause wins).
  enum class Cause : std::uint8_t {
    none,
    peer_gone,
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
    limit_s_ = limit.count();
    deadline_ns_ = (SteadyClock::now() + limit).time_since_epoch().count();
  }
  /// The guarded step is over: no deadline, and a loop aborted during it
  /// has returned (it is not stuck).
  void disarm() {
    deadline_ns_ = 0;
    fired_ns_ = 0;
  }
  /// Raised by the engine itself when one of a test's concurrent flows
  /// failed: the others stop at their next idle moment instead of waiting
  /// out their deadlines.
  void trip() { raise(Cause::flow_failed); }
  const std::atomic<bool>& abort() const { return abort_; }
  bool fired() const { return abort_; }
  Cause cause() const { return cause_; }
  /// The cause in words, for a record's reason.
  std::string why() const {
    switch (cause_.load()) {
      case Cause::peer_gone:
        return "the peer closed the control connection (it exited or was killed)";
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

 private:
  void watch() {
    while (!stop_) {
      if (fd_ >= 0) {
        pollfd pfd{fd_, POLLRDHUP | POLLPRI, 0};
        if (::poll(&pfd, 1, 50) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
          raise(Cause::peer_gone);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (interrupts_) {
        const auto tag = interrupts_();
        if (tag && *tag == epoch_tag_.load()) raise(Cause::peer_failed);
      }
      const auto now = SteadyClock::now().time_since_epoch().count();
      const auto deadline = deadline_ns_.load();
      if (deadline != 0 && now > deadline) raise(Cause::deadline);
      const std::atomic<bool>* stop = stop_request_.load();
      if (stop != nullptr && stop->load()) raise(Cause::interrupted);
      const auto fired = fired_ns_.load();
      if (on_stuck_ && fired != 0 && now - fired > grace_ns_ && !stuck_reported_) {
        stuck_reported_ = true;
        on_stuck_(why(), cause_ == Cause::peer_gone);
      }
    }
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
