// The session's guard against a loop that would wait forever: a thread that
// raises the engine's abort flag when the peer goes away or a size overruns
// its deadline.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
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

  void arm(std::chrono::seconds limit) {
    deadline_ns_ = (SteadyClock::now() + limit).time_since_epoch().count();
  }
  void disarm() { deadline_ns_ = 0; }
  /// Raised by the engine itself when one of a test's concurrent flows
  /// failed: the others stop at their next idle moment instead of waiting
  /// out their deadlines.
  void trip() { abort_ = true; }
  const std::atomic<bool>& abort() const { return abort_; }
  bool fired() const { return abort_; }

 private:
  void watch() {
    while (!stop_) {
      if (fd_ >= 0) {
        pollfd pfd{fd_, POLLRDHUP, 0};
        if (::poll(&pfd, 1, 50) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
          abort_ = true;
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      const auto deadline = deadline_ns_.load();
      if (deadline != 0 && SteadyClock::now().time_since_epoch().count() > deadline) abort_ = true;
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false};
  std::atomic<std::int64_t> deadline_ns_{0};
  std::thread thread_;
};

}  // namespace uniperf::session
