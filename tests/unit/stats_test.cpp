// Latency and bandwidth statistics: nearest-rank percentiles over every
// sample, population standard deviation, decimal rate units.
#include "results/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace uniperf::results {
namespace {

/// 1, 2, ..., n in a shuffled order, so that sorting is really exercised.
std::vector<double> shuffled_one_to(int n) {
  std::vector<double> samples(static_cast<std::size_t>(n));
  std::iota(samples.begin(), samples.end(), 1.0);
  std::mt19937 generator(12345);
  std::shuffle(samples.begin(), samples.end(), generator);
  return samples;
}

/// The population standard deviation of 1..n: sqrt((n^2 - 1) / 12).
double stdev_of_one_to(double n) {
  return std::sqrt((n * n - 1) / 12);
}

TEST(LatencyStats, OneToHundred) {
  auto samples = shuffled_one_to(100);
  const auto s = compute_latency(samples, true);
  EXPECT_EQ(s.samples, 100u);
  EXPECT_TRUE(s.one_way);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.p999, 100);   // ceil(99.9) = 100th
  EXPECT_EQ(s.p9999, 100);  // ceil(99.99) = 100th
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_NEAR(s.stdev, stdev_of_one_to(100), 1e-12);
  EXPECT_NEAR(s.stdev, 28.866070047722118, 1e-12);
}

TEST(LatencyStats, OneToThousand) {
  auto samples = shuffled_one_to(1000);
  const auto s = compute_latency(samples, false);
  EXPECT_FALSE(s.one_way);
  EXPECT_EQ(s.samples, 1000u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p50, 500);
  EXPECT_EQ(s.p90, 900);
  EXPECT_EQ(s.p99, 990);
  EXPECT_EQ(s.p999, 999);
  EXPECT_EQ(s.p9999, 1000);  // ceil(999.9) = 1000th
  EXPECT_EQ(s.max, 1000);
  EXPECT_DOUBLE_EQ(s.mean, 500.5);
  EXPECT_NEAR(s.stdev, stdev_of_one_to(1000), 1e-9);
}

TEST(LatencyStats, TwentyThousandSamplesSeparateTheTailPercentiles) {
  auto samples = shuffled_one_to(20000);
  const auto s = compute_latency(samples, true);
  EXPECT_EQ(s.p99, 19800);
  EXPECT_EQ(s.p999, 19980);
  EXPECT_EQ(s.p9999, 19998);
  EXPECT_EQ(s.max, 20000);
}

TEST(LatencyStats, SingleSampleIsEveryStatistic) {
  std::vector<double> samples = {3.25};
  const auto s = compute_latency(samples, true);
  EXPECT_EQ(s.samples, 1u);
  for (double v : {s.min, s.p50, s.p90, s.p99, s.p999, s.p9999, s.max, s.mean}) {
    EXPECT_EQ(v, 3.25);
  }
  EXPECT_EQ(s.stdev, 0);
}

TEST(LatencyStats, TwoSamples) {
  std::vector<double> samples = {3, 1};
  const auto s = compute_latency(samples, true);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p50, 1);  // ceil(0.5 * 2) = 1st smallest
  EXPECT_EQ(s.p90, 3);  // ceil(1.8) = 2nd
  EXPECT_EQ(s.p99, 3);
  EXPECT_EQ(s.max, 3);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  EXPECT_DOUBLE_EQ(s.stdev, 1);  // population: sqrt(((1-2)^2 + (3-2)^2) / 2)
}

TEST(LatencyStats, AllEqual) {
  std::vector<double> samples(777, 7.25);
  const auto s = compute_latency(samples, true);
  for (double v : {s.min, s.p50, s.p90, s.p99, s.p999, s.p9999, s.max, s.mean}) {
    EXPECT_EQ(v, 7.25);
  }
  EXPECT_EQ(s.stdev, 0);
}

TEST(LatencyStats, NearestRankNeverInterpolates) {
  std::vector<double> samples = {4, 1, 3, 2};
  const auto s = compute_latency(samples, true);
  EXPECT_EQ(s.p50, 2);  // an interpolating definition would say 2.5
}

TEST(LatencyStats, MeanAndPopulationStdev) {
  std::vector<double> samples = {2, 4, 4, 4, 5, 5, 7, 9};
  const auto s = compute_latency(samples, true);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.stdev, 2);  // the sample (n - 1) stdev would be 2.138
}

TEST(LatencyStats, SmallSpreadAroundALargeMean) {
  // A naive sum-of-squares formula loses these digits entirely.
  std::vector<double> samples = {1e9 + 1, 1e9 + 2, 1e9 + 3};
  const auto s = compute_latency(samples, true);
  EXPECT_DOUBLE_EQ(s.mean, 1e9 + 2);
  EXPECT_NEAR(s.stdev, std::sqrt(2.0 / 3.0), 1e-9);
}

TEST(LatencyStats, SortsTheSamplesInPlace) {
  auto samples = shuffled_one_to(50);
  compute_latency(samples, true);
  EXPECT_TRUE(std::is_sorted(samples.begin(), samples.end()));
}

TEST(LatencyStats, NoSamplesGivesZeros) {
  std::vector<double> samples;
  const auto s = compute_latency(samples, false);
  EXPECT_EQ(s.samples, 0u);
  EXPECT_FALSE(s.one_way);
  EXPECT_EQ(s.p50, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.stdev, 0);
}

TEST(BandwidthStats, DecimalUnits) {
  // 10^9 bytes and 10^6 messages in two seconds.
  const auto b = compute_bandwidth(1'000'000'000, 1'000'000, 2.0);
  EXPECT_EQ(b.bytes, 1'000'000'000u);
  EXPECT_EQ(b.messages, 1'000'000u);
  EXPECT_EQ(b.seconds, 2.0);
  EXPECT_DOUBLE_EQ(b.mb_per_s, 500);    // 10^6 B/s, not 2^20
  EXPECT_DOUBLE_EQ(b.gbit_per_s, 4);    // 10^9 bit/s
  EXPECT_DOUBLE_EQ(b.mmsg_per_s, 0.5);  // 10^6 msg/s
}

TEST(BandwidthStats, PerftestSizedRun) {
  // 5000 messages of 64 KiB in 25 ms.
  const auto b = compute_bandwidth(5000ULL * 65536, 5000, 0.025);
  EXPECT_NEAR(b.mb_per_s, 13107.2, 1e-9);
  EXPECT_NEAR(b.gbit_per_s, 104.8576, 1e-9);
  EXPECT_NEAR(b.mmsg_per_s, 0.2, 1e-12);
}

TEST(BandwidthStats, NoTimeGivesNoRate) {
  const auto b = compute_bandwidth(1000, 10, 0.0);
  EXPECT_EQ(b.bytes, 1000u);
  EXPECT_EQ(b.mb_per_s, 0);
  EXPECT_EQ(b.gbit_per_s, 0);
  EXPECT_EQ(b.mmsg_per_s, 0);
}

}  // namespace
}  // namespace uniperf::results
