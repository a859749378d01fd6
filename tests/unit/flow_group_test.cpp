// The flows of a test start their measured phases together and stop by the
// test's rule (engine/flow_group.hpp): the group's arithmetic on its own,
// then whole tests over the fake transport.
#include "engine/flow_group.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "engine/errors.hpp"
#include "fake_session.hpp"

namespace uniperf {
namespace {

using engine::FlowGroup;
using engine::kNever;
using model::Role;
using model::StopRule;
using results::Status;

/// Every flow gathers (each on a thread of its own, as in a test).
void gather_all(FlowGroup& group) {
  std::atomic<bool> abort{false};
  std::vector<std::jthread> threads;
  for (std::size_t k = 1; k < group.size(); ++k) threads.emplace_back([&] { group.gather(abort); });
  group.gather(abort);
}

TEST(FlowGroup, FirstDoneStopsEveryOtherFlow) {
  FlowGroup group({Role::measured, Role::measured, Role::load}, StopRule::first_done);
  gather_all(group);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(group.stop_of(k).load(), kNever);
  group.done(1);
  EXPECT_NE(group.stop_of(0).load(), kNever);
  EXPECT_EQ(group.stop_of(1).load(), kNever);  // its own loop has ended
  EXPECT_NE(group.stop_of(2).load(), kNever);
  // A stop time is only ever lowered: a later deadline does not undo it.
  const auto stopped_at = group.stop_of(0).load();
  group.stop_of(0).lower_to(kNever - 1);
  EXPECT_EQ(group.stop_of(0).load(), stopped_at);
  // The next phase starts over.
  gather_all(group);
  EXPECT_EQ(group.stop_of(0).load(), kNever);
}

TEST(FlowGroup, AllDoneStopsTheLoadsWhenTheLastMeasuredFlowIsDone) {
  FlowGroup group({Role::measured, Role::load, Role::measured}, StopRule::all_done);
  gather_all(group);
  group.done(0);
  EXPECT_EQ(group.stop_of(1).load(), kNever);  // flow 3 still runs
  EXPECT_EQ(group.stop_of(2).load(), kNever);
  group.done(1);  // a load's own end changes nothing
  EXPECT_EQ(group.stop_of(2).load(), kNever);
  group.done(2);
  EXPECT_NE(group.stop_of(1).load(), kNever);
  EXPECT_EQ(group.stop_of(0).load(), kNever);  // done already: nothing to stop
}

TEST(FlowGroup, AFlowThatNeverComesDoesNotHoldTheOthers) {
  FlowGroup group({Role::measured, Role::measured}, StopRule::all_done);
  std::atomic<bool> abort{false};
  std::jthread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    abort = true;  // the other flow failed: the watchdog trips the rest
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(group.gather(abort), engine::Aborted);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(StopRules, ALoadRunsUntilTheMeasuredFlowIsDone) {
  const auto run = testing::run_fake_suite(
      "  - name: under_load\n"
      "    sizes: [64]\n"
      "    flows:\n"
      "      - {op: send, pattern: latency}\n"
      "      - {op: send, pattern: bandwidth, window: 8, role: load}\n",
      {});
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records.front();
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_EQ(r.flows.size(), 2u);
  EXPECT_EQ(r.flows[0].iterations_run, 200u);
  EXPECT_EQ(r.flows[1].flow.role, Role::load);
  // The load had no count of its own: it streamed until it was stopped,
  // and every request it posted was covered and delivered.
  ASSERT_TRUE(r.flows[1].bandwidth);
  EXPECT_GT(r.flows[1].bandwidth->messages, 0u);
  EXPECT_EQ(r.corrupted_bytes, 0u);
  // It ended after the measured flow did: the rule stops it then. Whether
  // it began before that is the scheduler's call, not the engine's: with a
  // CPU hog per core, the measured flow's 200 round trips once ended 37 us
  // before the load's thread first ran. The record's overlap figure (and
  // its warning) reports that; it is not asserted here.
  ASSERT_TRUE(r.flows[0].measured && r.flows[1].measured);
  EXPECT_GE(r.flows[1].measured->to_unix_us, r.flows[0].measured->to_unix_us);
}

TEST(StopRules, FirstDoneStopsTheOthersShortOfTheirCount) {
  // The same count of round trips takes a ping-pong far longer than a
  // stream with 16 messages in flight takes its messages: the stream is
  // done first, and the ping-pong stops there.
  const auto run = testing::run_fake_suite(
      "  - name: first\n"
      "    sizes: [64]\n"
      "    until: first_done\n"
      "    flows:\n"
      "      - {op: send, pattern: latency}\n"
      "      - {op: send, pattern: bandwidth, window: 16}\n",
      {}, "  warmup: 4\n  iterations: 20000\n  validate: true\n");
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records.front();
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_EQ(r.flows.size(), 2u);
  EXPECT_EQ(r.flows[1].iterations_run, 20000u);
  EXPECT_GT(r.flows[0].iterations_run, 0u);
  EXPECT_LT(r.flows[0].iterations_run, 20000u);
  EXPECT_EQ(r.corrupted_bytes, 0u);
  // The ping-pong's last round trip ended after the stream did.
  ASSERT_TRUE(r.flows[0].measured && r.flows[1].measured);
  EXPECT_GE(r.flows[0].measured->to_unix_us, r.flows[1].measured->to_unix_us);
}

TEST(StopRules, AStreamStoppedEarlyEndsAtASignaledRequest) {
  // Latency first (200 round trips) against a stream of 100000 messages
  // signaled every 4: the stream stops short of its count, at a multiple
  // of 4, every posted message covered and delivered (validated).
  const auto run = testing::run_fake_suite(
      "  - name: first\n"
      "    sizes: [64]\n"
      "    until: first_done\n"
      "    iterations: 200\n"
      "    flows:\n"
      "      - {op: send, pattern: latency}\n"
      "      - {op: send, pattern: bandwidth, window: 1, signal_every: 1}\n"
      "      - {op: send, pattern: bandwidth, window: 8, signal_every: 4, role: load}\n",
      {});
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records.front();
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_EQ(r.flows.size(), 3u);
  ASSERT_TRUE(r.flows[2].bandwidth);
  EXPECT_GT(r.flows[2].bandwidth->messages, 0u);
  EXPECT_EQ(r.flows[2].bandwidth->messages % 4, 0u);
  EXPECT_EQ(r.corrupted_bytes, 0u);
}

}  // namespace
}  // namespace uniperf
