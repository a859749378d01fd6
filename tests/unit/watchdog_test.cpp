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

/// A socket pair for the heartbeat: [0] the watchdog's end, [1] the peer's.
struct HeartbeatPair {
  int fds[2] = {-1, -1};
  HeartbeatPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~HeartbeatPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

TEST(Watchdog, APeerWhoseHeartbeatStopsIsLostAfterTheTimeout) {
  HeartbeatPair pair;
  std::atomic<int> lost{0};
  std::string lost_why;
  const auto started = std::chrono::steady_clock::now();
  std::atomic<std::int64_t> lost_after_ms{0};
  Watchdog watchdog(-1, {}, {}, 15s, {pair.fds[0], 200ms, 1s, [&](const std::string& why) {
                                        lost_why = why;
                                        lost_after_ms =
                                            std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::steady_clock::now() - started)
                                                .count();
                                        ++lost;
                                      }});
  // Bounded generously (a loaded machine), but far below any deadline.
  for (int i = 0; i < 1000 && !watchdog.fired(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(watchdog.fired());
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::peer_stopped);
  EXPECT_TRUE(watchdog.peer_lost());
  EXPECT_EQ(watchdog.why(), "the peer stopped answering: no heartbeat for 1 s (--heartbeat)");
  for (int i = 0; i < 100 && lost == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(lost_why, watchdog.why());
  EXPECT_GE(lost_after_ms.load(), 1000);
  // A new epoch does not bring the peer back: the next loop stops too.
  watchdog.begin_epoch(1);
  ASSERT_TRUE(fires(watchdog));
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::peer_stopped);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(lost, 1);  // once
  // The watchdog beat while it waited.
  char beats[64];
  EXPECT_GT(::recv(pair.fds[1], beats, sizeof beats, MSG_DONTWAIT), 0);
}

TEST(Watchdog, APeerThatKeepsBeatingIsNotLost) {
  HeartbeatPair pair;
  std::atomic<bool> done{false};
  std::thread peer([&] {
    while (!done) {
      const char beat = 'h';
      (void)::send(pair.fds[1], &beat, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(100ms);
    }
  });
  {
    Watchdog watchdog(-1, {}, {}, 15s, {pair.fds[0], 100ms, 1s, {}});
    std::this_thread::sleep_for(2500ms);
    EXPECT_FALSE(watchdog.fired()) << watchdog.why();
  }
  done = true;
  peer.join();
}

TEST(Watchdog, AClosedHeartbeatConnectionIsAPeerGone) {
  HeartbeatPair pair;
  Watchdog watchdog(-1, {}, {}, 15s, {pair.fds[0], 100ms, 60s, {}});
  ::shutdown(pair.fds[1], SHUT_RDWR);
  ASSERT_TRUE(fires(watchdog));
  EXPECT_EQ(watchdog.cause(), Watchdog::Cause::peer_gone);
}

TEST(Watchdog, AZeroHeartbeatTimeoutDoesNotWatchSilence) {
  HeartbeatPair pair;
  Watchdog watchdog(-1, {}, {}, 15s, {pair.fds[0], 100ms, 0ms, {}});
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(watchdog.fired());
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
