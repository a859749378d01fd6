// Ending a run on SIGINT, SIGTERM or SIGHUP: the first signal asks the run
// to stop (it ends cleanly, keeping what finished), a second one ends the
// process at once through a callback that writes what finished.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace uniperf::cli {

/// Raised by the first signal once StopOnSignals is installed; what the
/// session's RunSettings::stop_requested points at.
const std::atomic<bool>& stop_requested();

/// Installs the handlers, and a thread that waits for a second signal and
/// calls `on_second_signal` (which must not return). Installed after the
/// plugins loaded: some transport libraries install their own SIGINT
/// handler when loaded (libinfinipath, under libfabric, exits).
class StopOnSignals {
 public:
  explicit StopOnSignals(std::function<void()> on_second_signal);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  std::function<void()> on_second_;
  std::thread waiter_;
};

}  // namespace uniperf::cli
