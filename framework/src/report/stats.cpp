#include "report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace uniperf::report {
namespace {

/// The nearest-rank percentile (numerator / denominator) of a sorted range:
/// the ceil(n * numerator / denominator)-th smallest, at least the first.
/// Integer arithmetic because ceil(p * n) in doubles moves the rank by one
/// whenever p * n rounds just above an integer (0.07 * 100 is
/// 7.000000000000001); the percentiles used here happen to be safe up to
/// millions of samples, integers are safe for any n.
double nearest_rank(std::span<const double> sorted, std::uint64_t numerator,
                    std::uint64_t denominator) {
  const std::uint64_t n = sorted.size();
  const std::uint64_t rank =
      std::max<std::uint64_t>(1, (n * numerator + denominator - 1) / denominator);
  return sorted[rank - 1];
}

}  // namespace

LatencyStats compute_latency(std::span<double> samples_us, bool one_way) {
  LatencyStats stats;
  stats.one_way = one_way;
  stats.samples = samples_us.size();
  if (samples_us.empty()) return stats;

  std::sort(samples_us.begin(), samples_us.end());
  stats.min = samples_us.front();
  stats.max = samples_us.back();
  stats.p50 = nearest_rank(samples_us, 50, 100);
  stats.p90 = nearest_rank(samples_us, 90, 100);
  stats.p99 = nearest_rank(samples_us, 99, 100);
  stats.p999 = nearest_rank(samples_us, 999, 1000);
  stats.p9999 = nearest_rank(samples_us, 9999, 10000);

  // Two passes (mean, then squared deviations) instead of sum of squares,
  // which cancels catastrophically when the spread is small next to the mean.
  const auto n = static_cast<double>(samples_us.size());
  stats.mean = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / n;
  double squared_deviations = 0;
  for (const double sample : samples_us) {
    squared_deviations += (sample - stats.mean) * (sample - stats.mean);
  }
  stats.stdev = std::sqrt(squared_deviations / n);
  return stats;
}

BandwidthStats compute_bandwidth(std::uint64_t bytes, std::uint64_t messages, double seconds) {
  BandwidthStats stats;
  stats.bytes = bytes;
  stats.messages = messages;
  stats.seconds = seconds;
  if (seconds > 0) {
    stats.mb_per_s = static_cast<double>(bytes) / seconds / 1e6;
    stats.gbit_per_s = static_cast<double>(bytes) * 8.0 / seconds / 1e9;
    stats.mmsg_per_s = static_cast<double>(messages) / seconds / 1e6;
  }
  return stats;
}

}  // namespace uniperf::report
