// The command line's last words on a crash (cli/stop_signals.hpp): a real
// fault in a child process, whose records callback must run before the
// fault ends it, by the signal it would have died of anyway.
#include "cli/stop_signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using uniperf::cli::StopOnSignals;

/// Writes `signal_number` to `path`, as RunOutput::keep_finished writes the
/// finished records.
void fault_after_installing(const std::string& path) {
  ::signal(SIGSEGV, SIG_DFL);  // whatever a library loaded earlier installed
  StopOnSignals signals([] {}, {},
                        [path](int signal_number) { std::ofstream(path) << signal_number; });
  *static_cast<volatile int*>(nullptr) = 1;  // a real fault, not a sent signal
}

TEST(StopOnSignals, AFaultKeepsWhatFinishedAndStillEndsTheProcessByItsSignal) {
  if (!StopOnSignals::kKeepsCrashes) GTEST_SKIP() << "a sanitizer's handler reports crashes here";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Not named by pid: the threadsafe death test runs this function again
  // in the child it starts, which has a pid of its own.
  const std::string path =
      (std::filesystem::temp_directory_path() / "uniperf-stop-signals-test-kept").string();
  std::filesystem::remove(path);
  EXPECT_EXIT(fault_after_installing(path), testing::KilledBySignal(SIGSEGV), "");
  std::ifstream kept(path);
  int said = 0;
  ASSERT_TRUE(kept >> said) << "the callback did not run before the fault ended the process";
  EXPECT_EQ(said, SIGSEGV);
  std::filesystem::remove(path);
}

}  // namespace
