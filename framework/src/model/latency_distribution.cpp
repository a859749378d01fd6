#include "model/latency_distribution.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace uniperf::model {
namespace {

using Distribution = LatencyDistribution;

// A positive double's bits in order are its value's order, and their top
// 12 + kSubBucketBits bits are its exponent and the first kSubBucketBits
// bits of its mantissa: that is the bucket's key.
constexpr int kDroppedBits = 52 - Distribution::kSubBucketBits;
constexpr std::uint64_t kLowestKey = std::uint64_t{1023 + Distribution::kLowestExponent}
                                     << Distribution::kSubBucketBits;
constexpr std::uint64_t kBucketCount =
    std::uint64_t{Distribution::kHighestExponent - Distribution::kLowestExponent + 1}
    << Distribution::kSubBucketBits;

std::size_t bucket_of(double us) {
  if (!(us > 0)) return 0;
  const std::uint64_t key = std::bit_cast<std::uint64_t>(us) >> kDroppedBits;
  return static_cast<std::size_t>(std::clamp(key, kLowestKey, kLowestKey + kBucketCount - 1) -
                                  kLowestKey);
}

double lower_edge(std::size_t bucket) {
  return std::bit_cast<double>((kLowestKey + bucket) << kDroppedBits);
}

}  // namespace

void LatencyDistribution::add(double us) {
  if (count_ == 0) {
    min_ = max_ = us;
  } else {
    min_ = std::min(min_, us);
    max_ = std::max(max_, us);
  }
  ++count_;
  const double delta = us - mean_;
  mean_ += delta / static_cast<double>(count_);
  squared_deviations_ += delta * (us - mean_);
  if (!folded() && kept_.size() < exact_limit_) {
    kept_.push_back(us);
    return;
  }
  if (!folded()) fold();
  count_in_bucket(us);
}

void LatencyDistribution::merge(const LatencyDistribution& other) {
  if (other.count_ == 0) return;
  if (!other.folded()) {
    for (const double us : other.kept_) add(us);
    return;
  }
  const bool all_kept = complete();
  if (!folded()) fold();
  // The kept samples stay a prefix of the samples in order: other's first
  // ones follow ours only where ours are all kept.
  if (all_kept) {
    const std::size_t room = exact_limit_ - std::min(exact_limit_, kept_.size());
    const std::size_t taken = std::min(room, other.kept_.size());
    kept_.insert(kept_.end(), other.kept_.begin(), other.kept_.begin() + taken);
  }
  for (std::size_t b = 0; b < buckets_.size(); ++b) buckets_[b] += other.buckets_[b];
  const double n = static_cast<double>(count_ + other.count_);
  const double delta = other.mean_ - mean_;
  const double before = static_cast<double>(count_), added = static_cast<double>(other.count_);
  squared_deviations_ += other.squared_deviations_ + delta * delta * before * added / n;
  mean_ += delta * added / n;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
}

double LatencyDistribution::stdev() const {
  return count_ == 0 ? 0 : std::sqrt(squared_deviations_ / static_cast<double>(count_));
}

double LatencyDistribution::folded_nearest_rank(std::uint64_t numerator,
                                                std::uint64_t denominator) const {
  if (!folded() || count_ == 0) return 0;
  const std::uint64_t rank =
      std::max<std::uint64_t>(1, (count_ * numerator + denominator - 1) / denominator);
  std::uint64_t below = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    below += buckets_[b];
    if (below >= rank) {
      // The end buckets hold the samples outside the range: their value is
      // the extreme, which lies in them.
      if (b == 0) return min_;
      if (b + 1 == buckets_.size()) return max_;
      const double middle = (lower_edge(b) + lower_edge(b + 1)) / 2;
      return std::clamp(middle, min_, max_);
    }
  }
  return max_;
}

void LatencyDistribution::fold() {
  buckets_.assign(kBucketCount, 0);
  for (const double us : kept_) count_in_bucket(us);
}

void LatencyDistribution::count_in_bucket(double us) {
  ++buckets_[bucket_of(us)];
}

}  // namespace uniperf::model
