#include "results/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "results/metrics.hpp"

namespace uniperf::results {
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

LatencyStats compute_latency(const model::LatencyDistribution& samples, bool one_way) {
  if (!samples.folded()) {
    std::vector<double> sorted(samples.kept().begin(), samples.kept().end());
    return compute_latency(sorted, one_way);
  }
  return {.samples = samples.count(),
          .one_way = one_way,
          .min = samples.min(),
          .p50 = samples.folded_nearest_rank(50, 100),
          .p90 = samples.folded_nearest_rank(90, 100),
          .p99 = samples.folded_nearest_rank(99, 100),
          .p999 = samples.folded_nearest_rank(999, 1000),
          .p9999 = samples.folded_nearest_rank(9999, 10000),
          .max = samples.max(),
          .mean = samples.mean(),
          .stdev = samples.stdev(),
          .percentile_error = model::LatencyDistribution::kRelativeError};
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

double student_t95(std::size_t degrees) {
  // t_{0.975, df}: the standard table.
  static constexpr double kTable[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                      2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                      2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                      2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees == 0) return std::numeric_limits<double>::infinity();
  if (degrees <= 30) return kTable[degrees];
  if (degrees <= 40) return 2.021;
  if (degrees <= 60) return 2.000;
  if (degrees <= 120) return 1.980;
  return 1.960;
}

Interval mean_ci95(std::span<const double> values) {
  Interval interval;
  if (values.empty()) return interval;
  const auto n = static_cast<double>(values.size());
  interval.mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  interval.low = interval.high = interval.mean;
  if (values.size() < 2) return interval;
  double squared_deviations = 0;
  for (const double v : values) squared_deviations += (v - interval.mean) * (v - interval.mean);
  const double sample_stdev = std::sqrt(squared_deviations / (n - 1));
  const double half_width = student_t95(values.size() - 1) * sample_stdev / std::sqrt(n);
  interval.low = interval.mean - half_width;
  interval.high = interval.mean + half_width;
  return interval;
}

TrialSummary summarize_trial(const Record& trial) {
  TrialSummary t;
  t.iterations_run = trial.iterations_run;
  for (const model::MetricInfo& metric : model::kMetrics) {
    if (metric.per_trial) t.*trial_member(metric.id) = metric_value(trial, metric.id);
  }
  return t;
}

void compute_trial_intervals(Record& record) {
  record.ci95.clear();
  if (record.trials.size() < 2) return;
  for (const model::MetricInfo& metric : model::kMetrics) {
    if (!metric.per_trial) continue;
    std::vector<double> values;
    for (const auto& t : record.trials) values.push_back(t.*trial_member(metric.id));
    if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) continue;
    record.ci95[std::string(metric.name)] = mean_ci95(values);
  }
}

}  // namespace uniperf::results
