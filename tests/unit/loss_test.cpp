// Loss is a result: over a transport without reliable delivery (verbs UD,
// UC) a stream ends once the sender has finished and the receiver has
// drained what came, and its record counts what was sent, received and
// lost, with the rates over what arrived. max_loss turns too much loss into
// an error, and the run goes on. Both sides run in this process over the
// fake transport, each losing every Nth message it sends.
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
using testing::find_record;
using testing::has;

FakeRun run_lossy(const std::string& tests, std::uint64_t lose_every) {
  return testing::run_fake_suite(tests, FakeFaults{-1, 0, lose_every},
                                 "  warmup: 40\n  iterations: 1000\n  validate: true\n");
}

TEST(Loss, AStreamEndsWithWhatArrivedAndCountsTheRest) {
  const FakeRun run = run_lossy(
      "  - {name: rate, op: send, pattern: message_rate, sizes: [8, 64]}\n"
      "  - {name: bw, op: send, pattern: bandwidth, window: 16, endpoints: 2, sizes: [4096]}\n",
      10);
  ASSERT_EQ(run.records.size(), 3u);
  for (const auto& r : run.records) {
    SCOPED_TRACE(r.test + " " + std::to_string(r.size));
    EXPECT_EQ(r.status, Status::ok) << r.reason;
    ASSERT_TRUE(r.bandwidth);
    const auto& b = *r.bandwidth;
    ASSERT_TRUE(b.messages_sent);
    // Every 10th message of the whole test is lost, warm-up included, so a
    // phase loses a tenth of its messages, give or take one per endpoint.
    const std::uint64_t endpoints = r.flow.endpoints;
    EXPECT_EQ(*b.messages_sent, 1000 * endpoints);
    EXPECT_NEAR(static_cast<double>(b.messages_lost()), 100.0 * endpoints, 1.0 * endpoints);
    EXPECT_EQ(b.messages + b.messages_lost(), *b.messages_sent);
    // The rates are over what arrived.
    EXPECT_EQ(b.bytes, b.messages * r.size);
    EXPECT_NEAR(b.loss_rate(), 0.1, 0.002);
    EXPECT_EQ(r.corrupted_bytes, 0u);  // what arrived is intact
  }
  EXPECT_LT(run.took, 60s);  // no wait for messages that never come
}

TEST(Loss, BothDirectionsCountTheirLoss) {
  const FakeRun run =
      run_lossy("  - {name: bi, op: send, pattern: bandwidth, direction: bi, sizes: [256]}\n", 4);
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records.front();
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.bandwidth && r.bandwidth->messages_sent);
  EXPECT_EQ(*r.bandwidth->messages_sent, 2000u);  // 1000 each way
  EXPECT_NEAR(r.bandwidth->loss_rate(), 0.25, 0.005);
}

TEST(Loss, AboveMaxLossTheRecordIsAnErrorAndTheRunGoesOn) {
  const FakeRun run = run_lossy(
      "  - {name: strict, op: send, pattern: message_rate, max_loss: 5%, sizes: [8]}\n"
      "  - {name: lenient, op: send, pattern: message_rate, max_loss: 0.2, sizes: [8]}\n",
      10);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_TRUE(has(run, "strict", 8, Status::error, "messages (10%), above max_loss 5%"));
  // The error record still carries what was measured.
  const results::Record* strict = find_record(run, "strict", 8);
  ASSERT_TRUE(strict && strict->bandwidth && strict->bandwidth->messages_sent);
  EXPECT_GT(strict->bandwidth->messages, 0u);
  EXPECT_TRUE(has(run, "lenient", 8, Status::ok));
}

TEST(Loss, WindowAckIsSkippedWhereAMessageCanBeLost) {
  const FakeRun run = run_lossy(
      "  - {name: acked, op: send, pattern: bandwidth, window_mode: window_ack, sizes: [64]}\n"
      "  - {name: writes, op: write, pattern: bandwidth, sizes: [64]}\n",
      10);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_TRUE(has(run, "acked", 64, Status::skipped, "reliable_delivery"));
  // One-sided traffic has no receiver to count it: no loss figures.
  const results::Record* writes = find_record(run, "writes", 64);
  ASSERT_TRUE(writes && writes->bandwidth);
  EXPECT_EQ(writes->status, Status::ok) << writes->reason;
  EXPECT_FALSE(writes->bandwidth->messages_sent);
}

TEST(Loss, AReliableTransportReportsNoLossFigures) {
  const FakeRun run = testing::run_fake_suite(
      "  - {name: rate, op: send, pattern: message_rate, sizes: [8]}\n", FakeFaults{});
  ASSERT_EQ(run.records.size(), 1u);
  ASSERT_TRUE(run.records.front().bandwidth);
  EXPECT_FALSE(run.records.front().bandwidth->messages_sent);
}

}  // namespace
}  // namespace uniperf
