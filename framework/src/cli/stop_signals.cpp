#include "cli/stop_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <iterator>

namespace uniperf::cli {
namespace {

/// Set by the first SIGINT, SIGTERM or SIGHUP: a run-forever test ends at
/// its window boundary, any other test at once, and the run ends with the
/// records finished so far (session::RunSettings::stop_requested).
std::atomic<bool> g_stop_requested{false};
/// A second signal is written here (the one thing a handler may do) for
/// the thread that ends the process at once with what finished.
int g_second_signal_pipe[2] = {-1, -1};

extern "C" void request_stop(int signal_number) {
  if (g_stop_requested.exchange(true)) {
    const char byte = static_cast<char>(signal_number);
    [[maybe_unused]] const auto written = ::write(g_second_signal_pipe[1], &byte, 1);
  }
}

/// SIGABRT: the byte goes to the thread that waits for a second signal,
/// which ends the process with what finished; the thread that aborted
/// waits here meanwhile, for at most kAbortGraceSeconds. The handler is reset on
/// entry (SA_RESETHAND), so an abort in that thread, or a second one
/// anywhere, is the default action at once. Returning from a handler that
/// abort() raised makes abort() go on to the default action (and one sent
/// with kill goes on with the run, which the waiting thread ends).
extern "C" void end_on_abort(int signal_number) {
  const int saved_errno = errno;
  const char byte = static_cast<char>(signal_number);
  if (::write(g_second_signal_pipe[1], &byte, 1) == 1) {
    timespec left{StopOnSignals::kAbortGraceSeconds, 0};
    while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  errno = saved_errno;
}

/// The synchronous crash signals, and what handled each before uniperf.
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_before_crash[std::size(kCrashSignals)];
std::atomic<bool> g_crashed{false};  // the first crash is being kept
std::atomic<bool> g_kept{false};     // ... and what finished is written

void restore_crash_action(int signal_number) {
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
    if (kCrashSignals[i] == signal_number) ::sigaction(signal_number, &g_before_crash[i], nullptr);
}

/// A crash: the byte goes to the waiting thread, which writes what
/// finished; this thread waits for it (at most kAbortGraceSeconds), then
/// gives the crash to the action installed before. A fault happens again
/// when its instruction runs again, on returning; a signal someone sent is
/// raised again. A crash while the first is being kept (in the waiting
/// thread itself, say) goes to the previous action at once.
extern "C" void keep_on_crash(int signal_number, siginfo_t* info, void*) {
  const int saved_errno = errno;
  if (!g_crashed.exchange(true)) {
    const char byte = static_cast<char>(signal_number);
    if (::write(g_second_signal_pipe[1], &byte, 1) == 1) {
      for (int waited_ms = 0;
           !g_kept.load() && waited_ms < StopOnSignals::kAbortGraceSeconds * 1000;
           waited_ms += 10) {
        timespec slice{0, 10'000'000};
        ::nanosleep(&slice, nullptr);
      }
    }
  }
  restore_crash_action(signal_number);
  errno = saved_errno;
  if (info == nullptr || info->si_code <= 0) ::raise(signal_number);
}

}  // namespace

const std::atomic<bool>& stop_requested() {
  return g_stop_requested;
}

StopOnSignals::StopOnSignals(std::function<void()> on_second_signal, std::function<void()> on_abort,
                             std::function<void(int)> on_crash)
    : on_second_(std::move(on_second_signal)),
      on_abort_(std::move(on_abort)),
      on_crash_(kKeepsCrashes ? std::move(on_crash) : nullptr) {
  if (::pipe2(g_second_signal_pipe, O_CLOEXEC) != 0) return;
  waiter_ = std::thread([this] {
    char byte = 0;
    while (true) {
      const ssize_t n = ::read(g_second_signal_pipe[0], &byte, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1 && byte == SIGABRT) on_abort_();  // does not return
      if (n == 1 && std::find(std::begin(kCrashSignals), std::end(kCrashSignals), byte) !=
                        std::end(kCrashSignals)) {
        on_crash_(byte);
        g_kept = true;  // the crashed thread hands the crash on
        return;
      }
      if (n == 1 && byte != 0) on_second_();  // does not return
      return;                                 // a zero byte: the run ended normally
    }
  });
  struct sigaction action {};
  action.sa_handler = request_stop;
  action.sa_flags = SA_RESTART;
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &action, nullptr);
  if (on_abort_) {
    struct sigaction abort_action {};
    abort_action.sa_handler = end_on_abort;
    abort_action.sa_flags = SA_RESETHAND;
    ::sigaction(SIGABRT, &abort_action, nullptr);
  }
  if (on_crash_) {
    struct sigaction crash_action {};
    crash_action.sa_sigaction = keep_on_crash;
    crash_action.sa_flags = SA_SIGINFO;
    for (std::size_t i = 0; i < std::size(kCrashSignals); ++i)
      ::sigaction(kCrashSignals[i], &crash_action, &g_before_crash[i]);
  }
}

StopOnSignals::~StopOnSignals() {
  // Nothing reads the pipe from here on: an abort later is the default one.
  if (on_abort_) ::signal(SIGABRT, SIG_DFL);
  if (on_crash_)
    for (const int s : kCrashSignals) restore_crash_action(s);
  if (!waiter_.joinable()) return;
  const char done = 0;
  [[maybe_unused]] const auto written = ::write(g_second_signal_pipe[1], &done, 1);
  waiter_.join();
}

}  // namespace uniperf::cli
