// The self-tuner's search (results/setting_search.hpp) on synthetic curves
// with known optima and seeded noise: the fragment sizes 256 B .. 64 KiB
// (nine powers of two), bandwidth peaking at one of them.
#include "results/setting_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace uniperf::results {
namespace {

constexpr std::size_t kCandidates = 9;  // 2^8 .. 2^16 bytes

/// A pipeline's bandwidth over log2(fragment): small fragments pay a
/// per-request cost, large ones lose the overlap; highest at `optimum`,
/// with its neighbours 3.4% below it (less than the noise of one
/// measurement), so the search has to repeat to tell them apart.
double curve(std::size_t k, std::size_t optimum) {
  const double d = static_cast<double>(k) - static_cast<double>(optimum);
  return 1000 * std::exp(-d * d / 24.0) + 200;
}

/// Runs a search to its end, measuring the curve with relative Gaussian
/// noise `noise`.
SettingSearch::Outcome search(std::size_t optimum, double noise, std::mt19937_64& rng,
                              std::size_t budget = 60) {
  SettingSearch s(kCandidates, 2, budget);
  std::normal_distribution<double> unit(0, 1);
  for (auto batch = s.next(); !batch.empty(); batch = s.next()) {
    for (const std::size_t k : batch) s.add(k, curve(k, optimum) * (1 + noise * unit(rng)));
  }
  return s.outcome();
}

TEST(SettingSearch, FirstMeasuresEveryCandidateThenOnlyTheContenders) {
  SettingSearch s(3, 2, 100);
  EXPECT_EQ(s.next(), (std::vector<std::size_t>{0, 0, 1, 1, 2, 2}));
  // 0 is far below, 1 and 2 overlap: only those two are measured again.
  for (const double v : {10.0, 10.2}) s.add(0, v);
  for (const double v : {100.0, 104.0}) s.add(1, v);
  for (const double v : {101.0, 103.0}) s.add(2, v);
  const auto again = s.next();
  EXPECT_EQ(again.size(), 2u);
  EXPECT_EQ(std::count(again.begin(), again.end(), 0), 0);
  EXPECT_FALSE(s.done());
}

TEST(SettingSearch, StopsWhenTheBestIsClearOfTheRest) {
  SettingSearch s(3, 2, 100);
  for (const double v : {10.0, 11.0}) s.add(0, v);
  for (const double v : {100.0, 101.0}) s.add(1, v);
  for (const double v : {50.0, 51.0}) s.add(2, v);
  EXPECT_TRUE(s.done());
  const auto out = s.outcome();
  EXPECT_EQ(out.best, 1u);
  EXPECT_EQ(out.runner_up, 2u);
  EXPECT_TRUE(out.separated);
  EXPECT_EQ(out.measurements, 6u);
  EXPECT_NEAR(out.curve[1].ci95.mean, 100.5, 1e-9);
}

// A candidate that cannot run here (its record skipped) is no choice: it is
// measured no more, and the others are searched as if it were not there.
TEST(SettingSearch, AnExcludedCandidateIsNeitherMeasuredAgainNorChosen) {
  SettingSearch s(3, 2, 100);
  s.exclude(2);  // refused at its first run
  EXPECT_EQ(s.next(), (std::vector<std::size_t>{0, 0, 1, 1}));
  for (const double v : {10.0, 11.0}) s.add(0, v);
  for (const double v : {50.0, 51.0}) s.add(1, v);
  EXPECT_TRUE(s.done());
  auto out = s.outcome();
  EXPECT_EQ(out.best, 1u);
  EXPECT_EQ(out.runner_up, 0u);
  EXPECT_TRUE(out.separated);
  EXPECT_TRUE(out.curve[2].excluded);
  EXPECT_FALSE(out.curve[1].excluded);

  // Measured first, then failing: its figures no longer make it the best.
  SettingSearch t(3, 2, 100);
  for (const double v : {10.0, 11.0}) t.add(0, v);
  for (const double v : {100.0, 150.0}) t.add(1, v);
  for (const double v : {116.0, 118.0}) t.add(2, v);
  ASSERT_EQ(t.outcome().best, 1u);
  ASSERT_FALSE(t.done());  // 1 and 2 overlap
  t.exclude(1);
  EXPECT_TRUE(t.done());  // one candidate left
  out = t.outcome();
  EXPECT_EQ(out.best, 2u);
  EXPECT_EQ(out.runner_up, 0u);
  EXPECT_TRUE(t.any_left());

  // Every candidate refused: nothing is left to choose, and nothing to run.
  SettingSearch none(2, 2, 10);
  none.exclude(0);
  none.exclude(1);
  EXPECT_FALSE(none.any_left());
  EXPECT_TRUE(none.next().empty());
}

TEST(SettingSearch, ALatencyGoalChoosesTheLowest) {
  SettingSearch s(3, 2, 100, SettingSearch::Goal::lowest);
  for (const double v : {10.0, 11.0}) s.add(0, v);
  for (const double v : {2.0, 2.1}) s.add(1, v);
  for (const double v : {5.0, 5.1}) s.add(2, v);
  EXPECT_TRUE(s.done());  // 2 us is clear of 5 and 10
  const auto out = s.outcome();
  EXPECT_EQ(out.best, 1u);
  EXPECT_EQ(out.runner_up, 2u);
  EXPECT_TRUE(out.separated);
  // Two that overlap near the lowest are measured again.
  SettingSearch close(2, 2, 100, SettingSearch::Goal::lowest);
  for (const double v : {2.0, 2.4}) close.add(0, v);
  for (const double v : {2.1, 2.3}) close.add(1, v);
  EXPECT_EQ(close.next().size(), 2u);
}

TEST(SettingSearch, NeverSpendsPastItsBudgetAndSaysWhenItCouldNotDecide) {
  std::mt19937_64 rng(7);
  SettingSearch s(kCandidates, 2, 30);
  std::normal_distribution<double> unit(0, 1);
  for (auto batch = s.next(); !batch.empty(); batch = s.next()) {
    for (const std::size_t k : batch) s.add(k, 500 * (1 + 0.05 * unit(rng)));  // flat
  }
  const auto out = s.outcome();
  EXPECT_LE(out.measurements, 30u);
  EXPECT_FALSE(out.separated) << "a flat curve has no clear best";
}

TEST(SettingSearch, FindsTheOptimumWithinOnePowerOfTwoInNineteenOfTwentySeededTrials) {
  // The stated share: at 5% noise (this machine's run-to-run spread of a
  // stream), within one step of the true optimum in at least 95% of 400
  // seeded searches, for every position of the optimum; at most 60
  // measurements each (18 to see every candidate twice).
  std::mt19937_64 rng(20261127);
  std::size_t within = 0, exact = 0, total = 0;
  for (std::size_t trial = 0; trial < 400; ++trial) {
    const std::size_t optimum = trial % kCandidates;
    const auto out = search(optimum, 0.05, rng);
    const auto off = static_cast<long>(out.best) - static_cast<long>(optimum);
    within += std::labs(off) <= 1;
    exact += off == 0;
    ++total;
    EXPECT_LE(out.measurements, 60u);
  }
  EXPECT_GE(within * 100, total * 95) << within << " of " << total;
  // The curve is smooth, so the neighbours are close: most searches still
  // land on the optimum itself.
  EXPECT_GE(exact * 100, total * 60) << exact << " of " << total;
  std::printf("within one step: %zu of %zu; exact: %zu\n", within, total, exact);
}

TEST(SettingSearch, ALoudNoiseStillLandsNearTheOptimumMostOfTheTime) {
  std::mt19937_64 rng(42);
  std::size_t within = 0;
  for (std::size_t trial = 0; trial < 200; ++trial) {
    const auto out = search(4, 0.20, rng);
    within += std::labs(static_cast<long>(out.best) - 4) <= 1;
  }
  EXPECT_GE(within, 180u) << "at 20% noise";
}

}  // namespace
}  // namespace uniperf::results
