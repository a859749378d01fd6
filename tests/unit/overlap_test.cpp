// How long measured intervals ran together (results/overlap.hpp), and what
// a test of concurrent flows records of it (session/record_builder.hpp).
#include "results/overlap.hpp"

#include <gtest/gtest.h>

#include "engine/clock.hpp"
#include "session/record_builder.hpp"

namespace uniperf {
namespace {

using results::MeasuredInterval;

TEST(Overlap, IsTheCommonIntervalOverTheSpan) {
  const MeasuredInterval staggered[] = {{0, 10'000}, {2'000, 12'000}, {1'000, 9'000}};
  const auto o = results::overlap_of(staggered);
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(o->span_us, 12'000);
  EXPECT_DOUBLE_EQ(o->together, 7'000.0 / 12'000.0);  // 2 ms to 9 ms of 0 to 12 ms

  const MeasuredInterval in_turn[] = {{0, 1'000}, {1'500, 2'500}};
  EXPECT_DOUBLE_EQ(results::overlap_of(in_turn)->together, 0);
  const MeasuredInterval alone[] = {{5, 5}};
  EXPECT_DOUBLE_EQ(results::overlap_of(alone)->together, 1);
  EXPECT_FALSE(results::overlap_of({}));
}

TEST(Overlap, OfFlowsNeedsTwoFlowsEachWithItsInterval) {
  results::Record r;
  r.flows.resize(2);
  EXPECT_FALSE(results::flows_overlap(r));  // no intervals: a record before 1.4
  r.flows[0].measured = MeasuredInterval{0, 100};
  r.flows[1].measured = MeasuredInterval{50, 150};
  ASSERT_TRUE(results::flows_overlap(r));
  EXPECT_DOUBLE_EQ(results::flows_overlap(r)->together, 50.0 / 150.0);
  r.flows.pop_back();
  EXPECT_FALSE(results::flows_overlap(r));
}

/// Two bandwidth flows whose measured phases ran from `a` and `b` seconds
/// ago for `length` seconds, on this process's clock.
std::vector<engine::SizeOutcome> two_flows(double a, double b, double length) {
  const engine::Ticks now = engine::now();
  const double per_second = engine::clock_info().ticks_per_us * 1e6;
  auto ago = [&](double seconds) { return now - static_cast<engine::Ticks>(seconds * per_second); };
  std::vector<engine::SizeOutcome> outcomes(2);
  for (int k = 0; k < 2; ++k) {
    auto& o = outcomes[static_cast<std::size_t>(k)];
    const double start = k == 0 ? a : b;
    o.started = ago(start);
    o.finished = ago(start - length);
    o.bytes = o.messages = o.iterations = 1000;
    o.seconds = length;
  }
  return outcomes;
}

TEST(Overlap, FlowsThatRanInTurnAreSaidToInTheRecord) {
  std::vector<engine::FlowPlan> plans(2);
  for (auto& p : plans) p.flow.pattern = model::Pattern::bandwidth;
  results::Record in_turn;
  auto outcomes = two_flows(0.30, 0.15, 0.10);  // 0.30-0.20 s ago, then 0.15-0.05 s ago
  session::fill_results(in_turn, plans, outcomes);
  ASSERT_EQ(in_turn.flows.size(), 2u);
  ASSERT_TRUE(in_turn.flows[0].measured && in_turn.flows[1].measured);
  EXPECT_LT(in_turn.flows[0].measured->to_unix_us, in_turn.flows[1].measured->from_unix_us);
  ASSERT_EQ(in_turn.warnings.size(), 1u);
  EXPECT_NE(in_turn.warnings[0].find("the flows ran together for only 0% of their 250 ms"),
            std::string::npos)
      << in_turn.warnings[0];

  results::Record together;
  outcomes = two_flows(0.30, 0.29, 0.20);  // 95% together
  session::fill_results(together, plans, outcomes);
  EXPECT_TRUE(together.warnings.empty()) << together.warnings[0];
  EXPECT_NEAR(results::flows_overlap(together)->together, 0.19 / 0.21, 0.01);
}

}  // namespace
}  // namespace uniperf
