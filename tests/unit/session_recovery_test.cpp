// One failed test does not stop a run: the side that fails tells the other
// (in band, and out of band to stop a loop that reads no control message),
// both tear the test down and meet again at the next test's epoch, and every
// later test runs. Both sides run in this process over the fake transport,
// one of them made to fail its receives from some size on.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fake_session.hpp"

namespace uniperf {
namespace {

using namespace std::chrono_literals;
using results::Status;
using testing::FakeFaults;
using testing::FakeRun;
using testing::has;

/// Both sides in this process; the side of rank `failing_rank` fails every
/// receive of `fail_from` bytes or more, or with `stall` stops completing
/// anything once it posts that many bytes (and a stall ends a test after
/// 1 s, a limit every test here runs under).
FakeRun run_suite(const std::string& tests, int failing_rank, std::uint32_t fail_from,
                  bool stall = false) {
  FakeFaults faults;
  faults.failing_rank = failing_rank;
  (stall ? faults.stall_from : faults.fail_from) = fail_from;
  faults.stall_timeout = 1s;
  return testing::run_fake_suite(tests, faults);
}

const std::string kStreamThenLatency =
    "  - {name: stream, op: send, pattern: bandwidth, sizes: [8, 64, 4096]}\n"
    "  - {name: after, op: send, pattern: latency, sizes: [8, 32]}\n"
    "  - {name: writes, op: write, pattern: bandwidth, sizes: [4096]}\n";

TEST(SessionRecovery, AResponderFailureEndsItsTestAndTheRunGoesOn) {
  const FakeRun run = run_suite(kStreamThenLatency, 1, 64);
  ASSERT_EQ(run.records.size(), 6u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 64, Status::error, "the responder failed: receive"));
  EXPECT_TRUE(has(run, "stream", 64, Status::error, "fake status 5"));
  EXPECT_TRUE(has(run, "stream", 4096, Status::error, "not run: size 64 of this test failed"));
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_TRUE(has(run, "writes", 4096, Status::ok));
  ASSERT_EQ(run.responder_failures.size(), 1u);
  EXPECT_NE(run.responder_failures[0].find("fake status 5"), std::string::npos);
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AnInitiatorFailureStopsTheServingResponder) {
  // The initiator's echo receives fail in the latency test; the responder,
  // waiting between echoes, hears of it on the control channel.
  const FakeRun run = run_suite(kStreamThenLatency, 0, 32);
  ASSERT_EQ(run.records.size(), 6u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 64, Status::ok));  // the initiator only sends here
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::error, "fake status 5"));
  EXPECT_TRUE(has(run, "writes", 4096, Status::ok));
  ASSERT_EQ(run.responder_failures.size(), 1u);
  EXPECT_NE(run.responder_failures[0].find("the initiator failed"), std::string::npos)
      << run.responder_failures[0];
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, APeerFailureStopsALoopThatReadsNoControlMessage) {
  // A ping-pong initiator waits for an echo that never comes: only the
  // responder's out-of-band interrupt ends its wait before the deadline.
  const FakeRun run = run_suite(
      "  - {name: pingpong, op: send, pattern: latency, sizes: [8, 64]}\n"
      "  - {name: after, op: write, pattern: latency, sizes: [64]}\n",
      1, 64);
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_TRUE(has(run, "pingpong", 8, Status::ok));
  EXPECT_TRUE(has(run, "pingpong", 64, Status::error, "the responder failed: receive"));
  EXPECT_TRUE(has(run, "after", 64, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AnInitiatorWhoseTransportStallsEndsThatTestAsStalled) {
  // The initiator's endpoint stops completing anything once it posts 4 KiB:
  // no error, no peer failure, only silence. The test ends after the stall
  // limit (1 s here), not the size's deadline (120 s), and the run goes on.
  const FakeRun run = run_suite(
      "  - {name: stream, op: send, pattern: bandwidth, sizes: [8, 4096]}\n"
      "  - {name: after, op: send, pattern: latency, sizes: [8, 32]}\n",
      0, 4096, true);
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 4096, Status::error, "no completion for 1 s (--stall-timeout)",
                  "stalled"));
  // Where the loop was (the responder, waiting for the stalled initiator's
  // end of phase, may see the stall first and say so from its side).
  EXPECT_TRUE(
      has(run, "stream", 4096, Status::error, " of 4 messages of the warm-up phase", "stalled"));
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AStallOnTheRespondersSideIsAStallToo) {
  // The responder's endpoint stops completing after its first 64-byte echo:
  // both sides wait for a completion that never comes; whichever sees the
  // stall first, the record says stalled, and the next test runs.
  const FakeRun run = run_suite(
      "  - {name: pingpong, op: send, pattern: latency, sizes: [8, 64]}\n"
      "  - {name: after, op: write, pattern: latency, sizes: [32]}\n",
      1, 64, true);
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_TRUE(has(run, "pingpong", 8, Status::ok));
  EXPECT_TRUE(has(run, "pingpong", 64, Status::error, "no completion for 1 s", "stalled"));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, ATargetOfOneSidedOpsIsNotStalledByWaiting) {
  // A write stream's or a read ping-pong's target sees no completion at all
  // (a latency test posts it receives all the same); a test that lasts
  // longer than the stall limit must not count as stalled on its side.
  const FakeRun run = run_suite(
      "  - {name: writes, op: write, pattern: bandwidth, sizes: [64], duration: 3s, warmup: 0}\n"
      "  - {name: reads, op: read, pattern: latency, sizes: [64], duration: 3s, warmup: 0}\n",
      -1, 0, true);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_TRUE(has(run, "writes", 64, Status::ok));
  EXPECT_TRUE(has(run, "reads", 64, Status::ok));
}

}  // namespace
}  // namespace uniperf
