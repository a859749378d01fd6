// Statistics over every sample (no sampling window, no truncation).
#pragma once

#include <span>

#include "report/record.hpp"

namespace uniperf::report {

/// Exact statistics over all samples (microseconds); reorders `samples`.
/// Percentiles are nearest-rank: the ceil(p * n)-th smallest sample, so
/// every reported percentile is a latency that was really observed. stdev is
/// the population standard deviation.
LatencyStats compute_latency(std::span<double> samples, bool one_way);

/// MB/s = 10^6 bytes/s, Gb/s = 10^9 bits/s, Mmsg/s = 10^6 messages/s.
BandwidthStats compute_bandwidth(std::uint64_t bytes, std::uint64_t messages, double seconds);

}  // namespace uniperf::report
