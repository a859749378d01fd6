// Ending a run on SIGINT, SIGTERM or SIGHUP: the first signal asks the run
// to stop (it ends cleanly, keeping what finished), a second one ends the
// process at once through a callback that writes what finished. SIGABRT, a
// transport library's own assertion failing (UCX's, libfabric's, glibc's
// assert()), ends it through another callback that does the same: a
// library's abort must not cost the records that finished before it.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace uniperf::cli {

/// What an `on_abort` callback says first (cli/run_command.cpp, serve).
inline constexpr const char* kAbortedWords =
    "SIGABRT ended the process (a library's own assertion failing: its words, if any, are "
    "above)";

/// Raised by the first signal once StopOnSignals is installed; what the
/// session's RunSettings::stop_requested points at.
const std::atomic<bool>& stop_requested();

/// Installs the handlers, and a thread that waits for a second signal and
/// calls `on_second_signal`, or for SIGABRT and calls `on_abort` (neither
/// returns). The thread that aborted waits in the handler meanwhile; if the
/// process is still there kAbortGraceSeconds later (the callback itself broke or
/// blocked: the heap or a lock the abort left behind), the abort goes on
/// as the default action: a core, never a hang. Without `on_abort` SIGABRT
/// keeps its default action. Installed after the plugins loaded: some
/// transport libraries install their own SIGINT handler when loaded
/// (libinfinipath, under libfabric, exits).
class StopOnSignals {
 public:
  static constexpr int kAbortGraceSeconds = 10;

  explicit StopOnSignals(std::function<void()> on_second_signal,
                         std::function<void()> on_abort = {});
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  std::function<void()> on_second_;
  std::function<void()> on_abort_;
  std::thread waiter_;
};

}  // namespace uniperf::cli
