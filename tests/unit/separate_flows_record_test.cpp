// The record of a test whose flows ran in process pairs of their own is
// built from each pair's record of its flow (session/separate_flows_record.hpp).
#include "session/separate_flows_record.hpp"

#include <gtest/gtest.h>

#include "results/stats.hpp"
#include "session/remote_flow_gate.hpp"

namespace uniperf::session {
namespace {

using results::Record;
using results::Status;

results::Placement on_ranks(int initiator, int responder) {
  return {.pairs = "first",
          .round = 0,
          .ranks = 4,
          .initiator = {.rank = initiator, .host = "h", .local_rank = initiator, .node = ""},
          .responder = {.rank = responder, .host = "h", .local_rank = responder, .node = ""}};
}

model::TestSpec two_flows() {
  model::TestSpec test;
  test.name = "t";
  test.process = model::FlowProcesses::separate;
  test.sizes = {65536};
  test.flows.resize(2);
  test.flows[0].op = Op::send;
  test.flows[0].pattern = model::Pattern::latency;
  test.flows[0].size = 8;
  test.flows[0].trace = 1;
  test.flows[1].op = Op::write;
  test.flows[1].pattern = model::Pattern::bandwidth;
  test.flows[1].trace = 1;
  return test;
}

/// Flow k's pair's record: `bytes` over [from_us, to_us] of the wall clock.
Record pair_record(const model::TestSpec& test, std::size_t k, std::uint64_t bytes,
                   std::int64_t from_us, std::int64_t to_us) {
  Record r;
  r.config = "c";
  r.test = test.name;
  r.size = 65536;
  r.flow = test.flows[k];
  r.iterations_run = 100;
  r.bandwidth = results::compute_bandwidth(bytes, 100, static_cast<double>(to_us - from_us) / 1e6);
  r.measured = results::MeasuredInterval{.from_unix_us = from_us, .to_unix_us = to_us};
  r.placement = on_ranks(static_cast<int>(2 * k), static_cast<int>(2 * k + 1));
  // Each side busy polling over its own phase.
  const double seconds = static_cast<double>(to_us - from_us) / 1e6;
  r.cpu_time = results::CpuTime{.initiator = {.user_s = seconds, .seconds = seconds},
                                .responder = {.user_s = seconds / 2, .seconds = seconds}};
  // One request a microsecond over the interval, each on flow 0 of its pair.
  for (std::int64_t t = from_us; t < to_us; t += 1) {
    r.trace.push_back({.flow = 0,
                       .id = static_cast<std::uint64_t>(t - from_us),
                       .posted_ns = t * 1000,
                       .completed_ns = t * 1000 + 500,
                       .signaled = true});
  }
  r.trace_count = results::TraceCount{.rows = r.trace.size(), .dropped = 0};
  return r;
}

TEST(SeparateFlowsRecord, EveryFlowWithItsPairAndTheAggregateOverTheirUnion) {
  const auto test = two_flows();
  std::vector<Record> flows;
  flows.push_back(pair_record(test, 0, 800, 1'000'000, 1'000'200));
  flows.push_back(pair_record(test, 1, 6'000'000, 1'000'100, 1'000'400));
  const Record r = separate_flows_record(std::move(flows), 50);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_EQ(r.flows.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(r.flows[k].placement);
    EXPECT_EQ(r.flows[k].placement->initiator.rank, static_cast<int>(2 * k));
    EXPECT_EQ(r.flows[k].flow.op, test.flows[k].op);
  }
  // 6,000,800 bytes over the union, 1,000,000 to 1,000,400 us.
  ASSERT_TRUE(r.bandwidth && r.measured);
  EXPECT_EQ(r.bandwidth->bytes, 6'000'800u);
  EXPECT_DOUBLE_EQ(r.bandwidth->seconds, 400e-6);
  EXPECT_EQ(r.measured->from_unix_us, 1'000'000);
  EXPECT_EQ(r.measured->to_unix_us, 1'000'400);
  EXPECT_EQ(r.iterations_run, 200u);
  // Each flow's pair's CPU, and each side's over the union: 200 + 300 us
  // of one initiator CPU each in 400 us.
  ASSERT_TRUE(r.flows[1].cpu_time && r.cpu_time);
  EXPECT_DOUBLE_EQ(r.flows[1].cpu_time->initiator.seconds, 300e-6);
  EXPECT_DOUBLE_EQ(r.cpu_time->initiator.user_s, 500e-6);
  EXPECT_DOUBLE_EQ(r.cpu_time->initiator.seconds, 400e-6);
  EXPECT_DOUBLE_EQ(r.cpu_time->initiator.cpus_used(), 1.25);
  EXPECT_DOUBLE_EQ(r.cpu_time->responder.cpus_used(), 0.625);
  // The rows, each under its flow now; the competition from them.
  ASSERT_EQ(r.trace.size(), 500u);
  EXPECT_EQ(r.trace.front().flow, 0u);
  EXPECT_EQ(r.trace.back().flow, 1u);
  ASSERT_TRUE(r.trace_count);
  EXPECT_EQ(r.trace_count->rows, 500u);
  ASSERT_TRUE(r.flows[1].common);  // while both ran: 100 to 200 us
  EXPECT_NEAR(r.flows[1].common->seconds, 100e-6, 1e-9);
  // Flow 0 ran 200 of the span's 400 us, half of it beside flow 1: 25%.
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("ran together for only 25%"), std::string::npos)
      << r.warnings.back();
}

// With trials each pair pools its own: bytes and seconds summed, its
// interval from the first trial's start to the last's end, pauses between
// trials included. The aggregate is over the pairs' summed seconds, not that
// interval, and each trial's figures are its pairs' rates summed.
TEST(SeparateFlowsRecord, TrialsAreSummedPerTrialAndThePausesBetweenThemDoNotCount) {
  auto test = two_flows();
  test.flows[0].pattern = model::Pattern::bandwidth;
  std::vector<Record> flows;
  for (std::size_t k = 0; k < 2; ++k) {
    // Two trials of 1 ms each, 10 ms apart: 2 ms of 2 kB over an interval of 11 ms.
    Record pair = pair_record(test, k, 2'000, 1'000'000, 1'011'000);
    pair.bandwidth = results::compute_bandwidth(2'000, 200, 0.002);
    pair.trials = {{.iterations_run = 100, .mb_per_s = 1.0 + static_cast<double>(k)},
                   {.iterations_run = 100, .mb_per_s = 0.5 + static_cast<double>(k)}};
    flows.push_back(std::move(pair));
  }
  const Record r = separate_flows_record(std::move(flows), 50);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.bandwidth);
  EXPECT_EQ(r.bandwidth->bytes, 4'000u);
  EXPECT_DOUBLE_EQ(r.bandwidth->seconds, 0.002);
  EXPECT_DOUBLE_EQ(r.bandwidth->mb_per_s, 2.0);
  ASSERT_EQ(r.trials.size(), 2u);
  EXPECT_DOUBLE_EQ(r.trials[0].mb_per_s, 3.0);  // 1 + 2
  EXPECT_DOUBLE_EQ(r.trials[1].mb_per_s, 2.0);  // 0.5 + 1.5
  EXPECT_EQ(r.trials[1].iterations_run, 200u);
  EXPECT_TRUE(r.ci95.contains("MB_per_s"));
  // The interval still says when: first trial to last.
  EXPECT_EQ(r.measured->to_unix_us - r.measured->from_unix_us, 11'000);
}

TEST(SeparateFlowsRecord, ALatencyFlowsPercentilesWhileEveryFlowRan) {
  const auto test = two_flows();
  std::vector<Record> flows;
  flows.push_back(pair_record(test, 0, 800, 1'000'000, 1'000'200));
  flows.push_back(pair_record(test, 1, 6'000'000, 1'000'100, 1'000'400));
  // Flow 0's round trips, back to back from its start: 10 of 10 us alone,
  // then 20 of 5 us from 100 us on, beside flow 1 (common: 100 to 200 us).
  Record::Iterations& it = flows[0].iterations.emplace();
  it.started_ns = 1'000'000'000;
  it.one_way = false;
  it.samples_us.assign(10, 10.0);
  it.samples_us.insert(it.samples_us.end(), 20, 5.0);
  std::vector<double> sorted = it.samples_us;  // compute_latency sorts its samples
  flows[0].latency = results::compute_latency(sorted, false);
  const Record r = separate_flows_record(std::move(flows), 50);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.flows[0].common_latency);
  EXPECT_EQ(r.flows[0].common_latency->samples, 20u);
  EXPECT_DOUBLE_EQ(r.flows[0].common_latency->max, 5.0);
  EXPECT_DOUBLE_EQ(r.flows[0].latency->max, 10.0);  // the whole run's, alone too
  EXPECT_FALSE(r.flows[1].common_latency);          // a stream: none
}

TEST(SeparateFlowsRecord, TheFlowThatFailedNamesTheTestsFailure) {
  const auto test = two_flows();
  std::vector<Record> flows;
  flows.push_back(pair_record(test, 0, 800, 0, 200));
  flows.push_back(pair_record(test, 1, 800, 0, 200));
  // Flow 1 stopped at the gate because flow 2 could not run: flow 2's
  // reason is the test's, and its status (skipped).
  flows[0].status = Status::error;
  flows[0].reason = std::string("run aborted: ") + kAnotherFlowFailed;
  flows[1].status = Status::skipped;
  flows[1].reason = "plugin does not support op fetch_add";
  const Record r = separate_flows_record(std::move(flows), 50);
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_EQ(r.reason, "flow 2: plugin does not support op fetch_add");
  EXPECT_TRUE(r.flows.empty());
  EXPECT_TRUE(r.trace.empty());
}

TEST(SeparateFlowsRecord, ASizeEveryPairSkippedIsSaidOnce) {
  // Each pair plans the whole test: both skip with the test's reason.
  const auto test = two_flows();
  std::vector<Record> flows;
  flows.push_back(pair_record(test, 0, 800, 0, 200));
  flows.push_back(pair_record(test, 1, 800, 0, 200));
  for (auto& r : flows) {
    r.status = Status::skipped;
    r.reason = "flow 2: plugin does not support op fetch_add";
  }
  const Record r = separate_flows_record(std::move(flows), 50);
  EXPECT_EQ(r.status, Status::skipped);
  EXPECT_EQ(r.reason, "flow 2: plugin does not support op fetch_add");
}

TEST(SeparateFlowsRecord, AnErrorOfItsOwnIsTheTestsError) {
  const auto test = two_flows();
  std::vector<Record> flows;
  flows.push_back(pair_record(test, 0, 800, 0, 200));
  flows.push_back(pair_record(test, 1, 800, 0, 200));
  flows[1].status = Status::error;
  flows[1].reason = "receive failed";
  flows[1].failure = "stalled";
  const Record r = separate_flows_record(std::move(flows), 50);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_EQ(r.reason, "flow 2: receive failed");
  EXPECT_EQ(r.failure, "stalled");
}

}  // namespace
}  // namespace uniperf::session
