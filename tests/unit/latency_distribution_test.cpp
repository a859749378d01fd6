// A phase's latency samples in bounded memory: exact up to a bound, then
// folded into a log-linear histogram whose percentiles stay within
// kRelativeError of the exact ones, with min, max, mean and stdev exact.
#include "model/latency_distribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "results/stats.hpp"

namespace uniperf::model {
namespace {

using Distribution = LatencyDistribution;

/// Ping-pong-like latencies: a body near 2 us, a tail to milliseconds.
std::vector<double> latencies(std::size_t n, unsigned seed) {
  std::mt19937_64 generator(seed);
  std::lognormal_distribution<double> body(std::log(2.0), 0.3);
  std::exponential_distribution<double> tail(1.0 / 200.0);
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<double> samples(n);
  for (double& s : samples) s = coin(generator) < 0.01 ? 2.0 + tail(generator) : body(generator);
  return samples;
}

Distribution of(const std::vector<double>& samples, std::size_t exact_limit) {
  Distribution d(exact_limit);
  for (const double s : samples) d.add(s);
  return d;
}

double population_stdev(const std::vector<double>& samples) {
  double mean = 0;
  for (const double s : samples) mean += s;
  mean /= static_cast<double>(samples.size());
  double squares = 0;
  for (const double s : samples) squares += (s - mean) * (s - mean);
  return std::sqrt(squares / static_cast<double>(samples.size()));
}

TEST(LatencyDistribution, UpToItsBoundEverySampleIsKeptAndTheStatisticsAreExact) {
  const auto samples = latencies(1000, 1);
  const Distribution d = of(samples, 1000);
  EXPECT_FALSE(d.folded());
  EXPECT_TRUE(d.complete());
  EXPECT_EQ(d.count(), 1000u);
  EXPECT_TRUE(std::equal(samples.begin(), samples.end(), d.kept().begin(), d.kept().end()));

  std::vector<double> copy = samples;
  const auto exact = results::compute_latency(copy, true);
  const auto from_distribution = results::compute_latency(d, true);
  EXPECT_EQ(from_distribution.p50, exact.p50);
  EXPECT_EQ(from_distribution.p9999, exact.p9999);
  EXPECT_EQ(from_distribution.max, exact.max);
  EXPECT_EQ(from_distribution.percentile_error, 0);
  EXPECT_NEAR(from_distribution.mean, exact.mean, 1e-12 * exact.mean);
  EXPECT_NEAR(from_distribution.stdev, exact.stdev, 1e-9 * exact.stdev);
}

TEST(LatencyDistribution, PastItsBoundEveryPercentileIsWithinTheStatedError) {
  for (const unsigned seed : {2u, 3u, 4u}) {
    const auto samples = latencies(200'000, seed);
    const Distribution d = of(samples, 1000);
    ASSERT_TRUE(d.folded());
    EXPECT_FALSE(d.complete());
    EXPECT_EQ(d.count(), samples.size());
    // The first samples stay, in the order they came.
    ASSERT_EQ(d.kept().size(), 1000u);
    EXPECT_TRUE(std::equal(d.kept().begin(), d.kept().end(), samples.begin()));

    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(d.min(), sorted.front());
    EXPECT_EQ(d.max(), sorted.back());
    const auto stats = results::compute_latency(d, true);
    EXPECT_EQ(stats.samples, samples.size());
    EXPECT_EQ(stats.percentile_error, Distribution::kRelativeError);
    EXPECT_LT(Distribution::kRelativeError, 0.001);  // the 0.1%, with room
    for (const std::uint64_t per_10000 : {1u, 100u, 5000u, 9000u, 9900u, 9990u, 9999u, 10000u}) {
      const std::uint64_t rank = (samples.size() * per_10000 + 9999) / 10000;
      const double exact = sorted[rank - 1];
      const double folded = d.folded_nearest_rank(per_10000, 10000);
      EXPECT_LE(std::abs(folded - exact), Distribution::kRelativeError * exact)
          << "seed " << seed << ", p" << per_10000 / 100.0 << ": " << folded << " vs " << exact;
    }
    EXPECT_NEAR(d.mean(), std::accumulate(samples.begin(), samples.end(), 0.0) / 200'000.0,
                1e-9 * d.mean());
    EXPECT_NEAR(d.stdev(), population_stdev(samples), 1e-9 * d.stdev());
  }
}

TEST(LatencyDistribution, MergingIsAddingTheOthersSamplesAfterOurs) {
  const auto first = latencies(3000, 5), second = latencies(5000, 6);
  std::vector<double> both = first;
  both.insert(both.end(), second.begin(), second.end());
  const Distribution whole = of(both, 4000);

  // A distribution still exact, merged with a folded one: the kept ones
  // stay the first ones in order.
  Distribution merged = of(first, 4000);
  merged.merge(of(second, 4000));
  ASSERT_TRUE(merged.folded());
  EXPECT_EQ(merged.count(), 8000u);
  ASSERT_EQ(merged.kept().size(), 4000u);
  EXPECT_TRUE(std::equal(merged.kept().begin(), merged.kept().end(), both.begin()));
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  EXPECT_NEAR(merged.mean(), whole.mean(), 1e-12 * whole.mean());
  EXPECT_NEAR(merged.stdev(), whole.stdev(), 1e-9 * whole.stdev());
  for (const std::uint64_t per_1000 : {1u, 500u, 990u, 999u, 1000u})
    EXPECT_EQ(merged.folded_nearest_rank(per_1000, 1000),
              whole.folded_nearest_rank(per_1000, 1000));

  // A folded one merged with a folded one: the kept prefix does not grow.
  Distribution folded_first = of(both, 1000);
  const std::vector<double> before(folded_first.kept().begin(), folded_first.kept().end());
  folded_first.merge(of(second, 1000));
  EXPECT_EQ(folded_first.count(), 13'000u);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), folded_first.kept().begin(),
                         folded_first.kept().end()));

  // Merging exact ones that stay under the bound keeps every sample.
  Distribution small = of(latencies(10, 7), 100);
  small.merge(of(latencies(10, 8), 100));
  EXPECT_FALSE(small.folded());
  EXPECT_TRUE(small.complete());
  EXPECT_EQ(small.kept().size(), 20u);
}

TEST(LatencyDistribution, SamplesOutsideTheBucketsReadAsTheExactExtremes) {
  Distribution d(1);
  for (const double s : {0.0, 1e-9, 5.0, 5.0, 1e12}) d.add(s);
  ASSERT_TRUE(d.folded());
  EXPECT_EQ(d.folded_nearest_rank(1, 100), 0.0);
  EXPECT_EQ(d.folded_nearest_rank(100, 100), 1e12);
  EXPECT_NEAR(d.folded_nearest_rank(60, 100), 5.0, 5.0 * Distribution::kRelativeError);
  EXPECT_EQ(Distribution(4).folded_nearest_rank(1, 2), 0.0);  // empty
}

}  // namespace
}  // namespace uniperf::model
