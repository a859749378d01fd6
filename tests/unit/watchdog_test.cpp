// The session's watchdog says why it stopped a run: the peer's control
// connection closed, a size ran past its deadline, or another flow failed.
#include "session/watchdog.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

namespace uniperf::session {
namespace {

using namespace std::chrono_literals;

/// Waits (bounded) for the watchdog's thread to notice.
bool fires(const Watchdog& watchdog) {
  for (int i = 0; i < 200 && !watchdog.fired(); ++i) std::this_thread::sleep_for(10ms);
  return watchdog.fired();
}

TEST(Watchdog, SaysThePeerClosedTheControlConnection) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Watchdog watchdog(fds[0]);
  EXPECT_FALSE(watchdog.fired());
  ::close(fds[1]);
  ASSERT_TRUE(fires(watchdog));
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::peer_gone);
  EXPECT_NE(watchdog.why().find("the peer closed the control connection"), std::string::npos);
  ::close(fds[0]);
}

TEST(Watchdog, SaysASizeRanPastItsDeadline) {
  Watchdog watchdog(-1);
  watchdog.arm(0s);
  ASSERT_TRUE(fires(watchdog));
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::deadline);
  EXPECT_NE(watchdog.why().find("past its deadline of 0 s"), std::string::npos) << watchdog.why();
}

TEST(Watchdog, TheFirstCauseWins) {
  Watchdog watchdog(-1);
  watchdog.trip();
  EXPECT_TRUE(watchdog.fired());
  watchdog.arm(0s);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::flow_failed);
  EXPECT_EQ(watchdog.why(), "another flow of the test failed");
}

TEST(Watchdog, OnlyThePeersInterruptForTheCurrentEpochStopsTheLoop) {
  std::atomic<int> pending{-1};
  Watchdog watchdog(-1, [&]() -> std::optional<std::uint8_t> {
    const int tag = pending.exchange(-1);
    if (tag < 0) return std::nullopt;
    return static_cast<std::uint8_t>(tag);
  });
  watchdog.begin_epoch(3);
  pending = 2;  // late, from the epoch before
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(watchdog.fired());
  pending = 3;
  ASSERT_TRUE(fires(watchdog));
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::peer_failed);
  EXPECT_EQ(watchdog.why(), "the peer's side of the test failed");
  watchdog.begin_epoch(4);  // the next test starts clean
  EXPECT_FALSE(watchdog.fired());
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::none);
}

TEST(Watchdog, ALoopThatNeverReturnsFromItsAbortIsReportedStuckOnce) {
  std::atomic<int> stuck{0};
  std::string why;
  Watchdog watchdog(
      -1, {},
      [&](const std::string& cause, bool peer_lost) {
        why = cause;
        EXPECT_FALSE(peer_lost);
        ++stuck;
      },
      1s);
  watchdog.arm(0s);
  ASSERT_TRUE(fires(watchdog));
  for (int i = 0; i < 300 && stuck == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(stuck, 1);
  EXPECT_NE(why.find("past its deadline"), std::string::npos) << why;
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(stuck, 1);  // once
}

TEST(Watchdog, ALoopThatReturnsFromItsAbortIsNotStuck) {
  std::atomic<int> stuck{0};
  Watchdog watchdog(
      -1, {}, [&](const std::string&, bool) { ++stuck; }, 1s);
  watchdog.arm(0s);
  ASSERT_TRUE(fires(watchdog));
  watchdog.disarm();  // the session caught the abort
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(stuck, 0);
}

TEST(Watchdog, ADisarmedDeadlineNeverFires) {
  Watchdog watchdog(-1);
  watchdog.arm(3600s);
  watchdog.disarm();
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(watchdog.fired());
  EXPECT_EQ(watchdog.why(), "");
}

}  // namespace
}  // namespace uniperf::session
