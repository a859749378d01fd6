// What competing flows did to each other, from traces with known answers
// (results/competition.hpp): the common interval's shares, the bins, Jain's
// index.
#include "results/competition.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace uniperf::results {
namespace {

constexpr std::int64_t kT0 = 1'700'000'000'000'000;  // µs since the epoch

/// A bandwidth flow measured over [from, to] µs after kT0.
FlowResult flow_over(std::int64_t from_us, std::int64_t to_us,
                     model::Pattern pattern = model::Pattern::bandwidth) {
  FlowResult f;
  f.flow.pattern = pattern;
  f.measured = MeasuredInterval{kT0 + from_us, kT0 + to_us};
  return f;
}

/// A row of flow `k` completed `at_us` after kT0.
TraceRow done_at(std::uint32_t k, double at_us) {
  TraceRow row;
  row.flow = k;
  row.completed_ns = kT0 * 1000 + static_cast<std::int64_t>(at_us * 1000);
  row.posted_ns = row.completed_ns - 1;
  return row;
}

TEST(Competition, JainIsOneForEqualSharesAndOneOverNForOneTakingAll) {
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{9, 0, 0}), 1.0 / 3);
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{3, 1}), 16.0 / 20);
  EXPECT_DOUBLE_EQ(jain_index(std::vector<double>{0, 0}), 1.0);
}

TEST(Competition, SharesOfTheCommonIntervalAndBinsFromTheTraces) {
  Record r;
  r.size = 1000;  // bytes per request
  // Flow 1 ran 0..100 ms, flow 2 40..60 ms: in common 40..60 ms (20 ms).
  r.flows = {flow_over(0, 100'000), flow_over(40'000, 60'000)};
  // Flow 1 completes a request every ms (100 rows); flow 2, traced 1 in 4,
  // one row every 0.5 ms between 40 and 60 ms (40 rows, 160 requests).
  for (int ms = 0; ms < 100; ++ms) r.trace.push_back(done_at(0, ms * 1000 + 500));
  for (int k = 0; k < 40; ++k) r.trace.push_back(done_at(1, 40'000 + k * 500 + 250));
  const std::vector<FlowSampling> sampling = {{1, 1000}, {4, 1000}};
  fill_competition(r, sampling, 10'000);  // 10 ms bins

  ASSERT_TRUE(r.flows[0].common && r.flows[1].common);
  // Flow 1: 20 requests in the 20 ms both ran; flow 2: 40 rows x 4.
  EXPECT_EQ(r.flows[0].common->messages, 20u);
  EXPECT_EQ(r.flows[0].common->bytes, 20'000u);
  EXPECT_NEAR(r.flows[0].common->seconds, 0.020, 1e-9);
  EXPECT_NEAR(r.flows[0].common->mb_per_s, 1.0, 1e-9);  // 20 kB in 20 ms
  EXPECT_EQ(r.flows[1].common->messages, 160u);
  EXPECT_NEAR(r.flows[1].common->mb_per_s, 8.0, 1e-9);
  ASSERT_TRUE(r.fairness_jain);
  EXPECT_NEAR(*r.fairness_jain, 81.0 / (2 * 65), 1e-12);  // (1+8)^2 / 2(1+64)

  // Bins of 10 ms over the 100 ms span (and one for its end).
  ASSERT_TRUE(r.flows[0].timeline && r.flows[1].timeline);
  EXPECT_DOUBLE_EQ(r.flows[0].timeline->bin_us, 10'000);
  ASSERT_EQ(r.flows[0].timeline->mb_per_s.size(), 11u);
  for (std::size_t b = 0; b < 10; ++b) EXPECT_NEAR(r.flows[0].timeline->mb_per_s[b], 1.0, 1e-9);
  const auto& two = r.flows[1].timeline->mb_per_s;
  for (std::size_t b = 0; b < two.size(); ++b)
    EXPECT_NEAR(two[b], b == 4 || b == 5 ? 8.0 : 0.0, 1e-9) << "bin " << b;
}

TEST(Competition, OnlyTracedFlowsAndOnlyWhenTheFlowsOverlap) {
  Record r;
  r.size = 64;
  r.flows = {flow_over(0, 10'000), flow_over(0, 10'000, model::Pattern::latency)};
  r.trace = {done_at(0, 5'000)};
  fill_competition(r, std::vector<FlowSampling>{{1, 64}, {0, 64}}, 10'000);
  EXPECT_TRUE(r.flows[0].common);
  EXPECT_FALSE(r.flows[1].common);  // not traced
  EXPECT_FALSE(r.flows[1].timeline);
  EXPECT_FALSE(r.fairness_jain);  // one bandwidth flow: nothing to share

  Record apart;
  apart.size = 64;
  apart.flows = {flow_over(0, 10'000), flow_over(20'000, 30'000)};
  apart.trace = {done_at(0, 5'000), done_at(1, 25'000)};
  fill_competition(apart, std::vector<FlowSampling>{{1, 64}, {1, 64}}, 10'000);
  EXPECT_FALSE(apart.flows[0].common);  // they never ran together
  EXPECT_TRUE(apart.flows[0].timeline);
  EXPECT_FALSE(apart.fairness_jain);
}

TEST(Competition, ALongSpanGetsWiderBins) {
  Record r;
  r.size = 8;
  r.flows = {flow_over(0, 100'000'000), flow_over(0, 100'000'000)};  // 100 s
  r.trace = {done_at(0, 1), done_at(1, 99'999'999)};
  fill_competition(r, std::vector<FlowSampling>{{1, 8}, {1, 8}}, 1'000);
  ASSERT_TRUE(r.flows[0].timeline);
  EXPECT_LE(r.flows[0].timeline->mb_per_s.size(), kMostBins + 1);
  EXPECT_GE(r.flows[0].timeline->bin_us, 10'000);
}

TEST(Competition, TheRecordCarriesItAndReadsItBack) {
  Record r;
  r.flows = {flow_over(0, 10), flow_over(0, 10)};
  BandwidthStats common;
  common.bytes = 10;
  common.messages = 1;
  common.seconds = 1;
  common.mb_per_s = 2;
  r.flows[0].common = common;
  r.flows[0].timeline = Timeline{.bin_us = 500, .mb_per_s = {1.5, 2.5}};
  r.fairness_jain = 0.75;
  const auto back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.flows[0].common && back.flows[0].timeline && back.fairness_jain);
  EXPECT_EQ(back.flows[0].common->bytes, 10u);
  EXPECT_DOUBLE_EQ(back.flows[0].timeline->bin_us, 500);
  EXPECT_EQ(back.flows[0].timeline->mb_per_s, (std::vector<double>{1.5, 2.5}));
  EXPECT_DOUBLE_EQ(*back.fairness_jain, 0.75);
  EXPECT_FALSE(back.flows[1].common);
}

TEST(Competition, ALatencyFlowAgainstItselfAlone) {
  LatencyStats beside, alone;
  beside.p50 = 6;
  beside.p99 = 30;
  alone.p50 = 2;
  alone.p99 = 10;
  const AloneBaseline b = compare_with_alone(beside, "t.alone", alone);
  EXPECT_EQ(b.test, "t.alone");
  EXPECT_DOUBLE_EQ(b.slowdown_p50, 3);
  EXPECT_DOUBLE_EQ(b.slowdown_p99, 3);
  EXPECT_DOUBLE_EQ(b.latency.p50, 2);
  alone.p99 = 0;  // no baseline to divide by
  EXPECT_DOUBLE_EQ(compare_with_alone(beside, "t.alone", alone).slowdown_p99, 0);

  Record r;
  r.flows = {flow_over(0, 10, model::Pattern::latency), flow_over(0, 10)};
  r.flows[0].latency = beside;
  r.flows[0].alone = b;
  const auto back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.flows[0].alone);
  EXPECT_EQ(back.flows[0].alone->test, "t.alone");
  EXPECT_DOUBLE_EQ(back.flows[0].alone->latency.p99, 10);
  EXPECT_DOUBLE_EQ(back.flows[0].alone->slowdown_p50, 3);
  EXPECT_FALSE(back.flows[1].alone);
}

// A round-trip ping-pong from 0 µs: iterations of 4, 4, 10, 4, 2, 6 µs end
// at 4, 8, 18, 22, 24, 30. Over [5, 24] only the third to fifth lie wholly
// inside; the second began at 4 and the sixth ended at 30.
TEST(Competition, LatencyWhileAllRanCountsOnlyTheIterationsInsideTheCommonInterval) {
  const std::vector<double> round_trips{4, 4, 10, 4, 2, 6};
  const auto inside = latency_within(round_trips, /*one_way=*/false, 0, 5, 24);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->samples, 3u);
  EXPECT_DOUBLE_EQ(inside->min, 2);
  EXPECT_DOUBLE_EQ(inside->max, 10);
  EXPECT_FALSE(inside->one_way);

  // One-way samples are half their round trip: the same iterations at
  // half the values, the same three inside.
  const std::vector<double> halves{2, 2, 5, 2, 1, 3};
  const auto one_way = latency_within(halves, /*one_way=*/true, 0, 5, 24);
  ASSERT_TRUE(one_way);
  EXPECT_EQ(one_way->samples, 3u);
  EXPECT_DOUBLE_EQ(one_way->max, 5);

  // A flow that started late, at the interval's start: its first iteration counts.
  EXPECT_EQ(latency_within(round_trips, false, 5, 5, 100)->samples, 6u);
  // No iteration wholly inside.
  EXPECT_FALSE(latency_within(round_trips, false, 0, 1, 7));

  // Spaced out by a latency gap (begins given): the same six iterations
  // beginning at 0, 10, 20, 40, 50, 60 end at 4, 14, 30, 44, 52, 66. Over
  // [5, 45] the second to the fourth lie wholly inside.
  const std::vector<double> begins{0, 10, 20, 40, 50, 60};
  const auto spaced = latency_within(round_trips, false, 0, 5, 45, begins);
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->samples, 3u);
  EXPECT_DOUBLE_EQ(spaced->min, 4);
  EXPECT_DOUBLE_EQ(spaced->max, 10);
  // Back to back, the same samples over [5, 45] are the last four (8 to 30).
  EXPECT_EQ(latency_within(round_trips, false, 0, 5, 45)->samples, 4u);

  // In segments (the loop paused before the fourth iteration, which began
  // at 40): 0-4, 4-8, 8-18, then 40-44, 44-46, 46-52. Over [5, 45] the
  // third and the fourth lie wholly inside.
  const std::vector<std::pair<std::uint64_t, double>> resumes{{3, 40.0}};
  const auto resumed = latency_within(round_trips, false, 0, 5, 45, {}, true, resumes);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->samples, 2u);
  EXPECT_DOUBLE_EQ(resumed->min, 4);
  EXPECT_DOUBLE_EQ(resumed->max, 10);
  // Only the phase's first samples (a folded one's kept ones), ending
  // before the interval does: no answer rather than a part of one.
  EXPECT_FALSE(latency_within(round_trips, false, 0, 5, 100, {}, /*all_samples=*/false));
  EXPECT_TRUE(latency_within(round_trips, false, 0, 5, 24, {}, /*all_samples=*/false));

  Record r;
  r.flows = {flow_over(0, 30, model::Pattern::latency), flow_over(5, 24)};
  r.flows[0].common_latency = *inside;
  const auto back = record_from_json(nlohmann::json::parse(to_json(r).dump()));
  ASSERT_TRUE(back.flows[0].common_latency);
  EXPECT_EQ(back.flows[0].common_latency->samples, 3u);
  EXPECT_DOUBLE_EQ(back.flows[0].common_latency->max, 10);
  EXPECT_FALSE(back.flows[1].common_latency);
}

}  // namespace
}  // namespace uniperf::results
