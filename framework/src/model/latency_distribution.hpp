// A measured phase's latency samples in memory that does not grow with the
// run: every sample exactly up to a bound, then every sample folded into a
// log-linear histogram (HdrHistogram's idea: buckets a fixed fraction of
// their value wide), so an hour's run holds what a second's does and its
// percentiles are off by at most kRelativeError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace uniperf::model {

class LatencyDistribution {
 public:
  /// Samples kept exactly before the distribution folds: 2^20, 8 MiB.
  static constexpr std::size_t kDefaultExactLimit = std::size_t{1} << 20;
  /// Buckets per power of two, as bits: 2^10, so a bucket is 1/1024 of its
  /// lower edge wide.
  static constexpr int kSubBucketBits = 10;
  /// The worst relative error of a value read from a folded distribution:
  /// a bucket's midpoint against any sample in it is off by at most half a
  /// bucket, 2^-11 (0.049%).
  static constexpr double kRelativeError = 1.0 / (std::uint64_t{1} << (kSubBucketBits + 1));
  /// The range the buckets cover, in microseconds: 2^-12 (0.24 ns) to 2^31
  /// (36 minutes). A sample outside it lands in the end bucket, whose
  /// value is then the exact minimum or maximum.
  static constexpr int kLowestExponent = -12;
  static constexpr int kHighestExponent = 31;

  explicit LatencyDistribution(std::size_t exact_limit = kDefaultExactLimit)
      : exact_limit_(exact_limit) {}

  /// One sample, in microseconds (never inside a timed loop: folding
  /// allocates the buckets once).
  void add(double us);
  /// Every sample of `other`, as if each had been added here after ours.
  void merge(const LatencyDistribution& other);

  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// Whether the samples were folded: percentiles then come from buckets.
  bool folded() const { return !buckets_.empty(); }
  std::size_t exact_limit() const { return exact_limit_; }
  /// The first samples in the order they were added: every one until the
  /// distribution folds, then the first exact_limit().
  std::span<const double> kept() const { return kept_; }
  /// Whether kept() holds every sample.
  bool complete() const { return kept_.size() == count_; }

  /// Exact whatever the form: the extremes, the mean and the population
  /// standard deviation (Welford's running form, merged by Chan's).
  double min() const { return min_; }
  double max() const { return max_; }
  double mean() const { return mean_; }
  double stdev() const;

  /// The nearest-rank quantile numerator / denominator of a folded
  /// distribution: the midpoint of the bucket holding the
  /// ceil(count * numerator / denominator)-th smallest sample, kept within
  /// [min, max]. 0 when empty or not folded (the caller sorts kept()).
  double folded_nearest_rank(std::uint64_t numerator, std::uint64_t denominator) const;

 private:
  void fold();
  void count_in_bucket(double us);

  std::size_t exact_limit_;
  std::vector<double> kept_;
  std::vector<std::uint64_t> buckets_;  ///< empty until folded
  std::uint64_t count_ = 0;
  double min_ = 0, max_ = 0, mean_ = 0;
  double squared_deviations_ = 0;  ///< Welford's M2
};

}  // namespace uniperf::model
