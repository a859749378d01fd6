// The session's guard against a loop that would wait forever: a thread that
// raises the engine's abort flag when the peer goes away or a size overruns
// its deadline.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace uniperf::session {

/// Raises `abort` when the peer's control connection closes or the armed
/// deadline passes, so a loop spinning on a transport that will never
/// complete again ends within a fraction of a second.
class Watchdog {
 public:
  using SteadyClock = std::chrono::steady_clock;

  explicit Watchdog(int liveness_fd) : fd_(liveness_fd), thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }

  /// Why the abort flag was raised (the first cause wins).
  enum class Cause : std::uint8_t { none, peer_gone, deadline, flow_failed };

  void arm(std::chrono::seconds limit) {
    limit_s_ = limit.count();
    deadline_ns_ = (SteadyClock::now() + limit).time_since_epoch().count();
  }
  void disarm() { deadline_ns_ = 0; }
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
      case Cause::none:
        break;
    }
    return "";
  }

 private:
  void watch() {
    while (!stop_) {
      if (fd_ >= 0) {
        pollfd pfd{fd_, POLLRDHUP, 0};
        if (::poll(&pfd, 1, 50) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
          raise(Cause::peer_gone);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      const auto deadline = deadline_ns_.load();
      if (deadline != 0 && SteadyClock::now().time_since_epoch().count() > deadline)
        raise(Cause::deadline);
    }
  }

  void raise(Cause cause) {
    Cause none = Cause::none;
    cause_.compare_exchange_strong(none, cause);
    abort_ = true;
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false};
  std::atomic<std::int64_t> deadline_ns_{0};
  std::atomic<std::int64_t> limit_s_{0};
  std::atomic<Cause> cause_{Cause::none};
  std::thread thread_;
};

}  // namespace uniperf::session
