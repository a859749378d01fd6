#include "report/stats.hpp"

#include <algorithm>
#include <cmath>

namespace uniperf::report {

LatencyStats compute_latency(std::span<double> samples, bool one_way) {
  LatencyStats s;
  s.one_way = one_way;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  auto rank = [&](double p) {
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    return samples[std::clamp<std::size_t>(k, 1, n) - 1];
  };
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.p999 = rank(0.999);
  s.p9999 = rank(0.9999);
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(n);
  double squares = 0;
  for (double v : samples) squares += (v - s.mean) * (v - s.mean);
  s.stdev = std::sqrt(squares / static_cast<double>(n));
  return s;
}

BandwidthStats compute_bandwidth(std::uint64_t bytes, std::uint64_t messages, double seconds) {
  BandwidthStats b;
  b.bytes = bytes;
  b.messages = messages;
  b.seconds = seconds;
  if (seconds > 0) {
    b.mb_per_s = static_cast<double>(bytes) / seconds / 1e6;
    b.gbit_per_s = static_cast<double>(bytes) * 8 / seconds / 1e9;
    b.mmsg_per_s = static_cast<double>(messages) / seconds / 1e6;
  }
  return b;
}

}  // namespace uniperf::report
