// Ending a run on SIGINT, SIGTERM or SIGHUP: the first signal asks the run
// to stop (it ends cleanly, keeping what finished), a second one ends the
// process at once through a callback that writes what finished. SIGABRT, a
// transport library's own assertion failing (UCX's, libfabric's, glibc's
// assert()), ends it through another callback that does the same: a
// library's abort must not cost the records that finished before it. A
// crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL) writes them too, through a third
// callback, and then ends the process as it would have without uniperf.
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
/// keeps its default action. A crash signal calls `on_crash` (which
/// returns, having written what finished) while the thread that crashed
/// waits, at most kAbortGraceSeconds; then the action installed before
/// (a library's own handler, UCX's backtrace, or the default) takes the
/// crash. Without `on_crash`, or in a build with a sanitizer (whose own
/// handler reports the crash), the crash signals are left alone. Installed
/// after the plugins loaded: some
/// transport libraries install their own SIGINT handler when loaded
/// (libinfinipath, under libfabric, exits).
class StopOnSignals {
 public:
  static constexpr int kAbortGraceSeconds = 10;
  /// Whether `on_crash` is installed at all: not in a build with a
  /// sanitizer, whose own handler reports a crash with its cause.
  static constexpr bool kKeepsCrashes =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
      false;
#else
      true;
#endif

  explicit StopOnSignals(std::function<void()> on_second_signal,
                         std::function<void()> on_abort = {},
                         std::function<void(int signal_number)> on_crash = {});
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  std::function<void()> on_second_;
  std::function<void()> on_abort_;
  std::function<void(int)> on_crash_;
  std::thread waiter_;
};

}  // namespace uniperf::cli
