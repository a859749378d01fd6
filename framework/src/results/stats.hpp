// Statistics over every sample (no sampling window, no truncation).
#pragma once

#include <cstdint>
#include <span>

#include "model/latency_distribution.hpp"
#include "results/record.hpp"

namespace uniperf::results {

/// Exact statistics over all samples (microseconds); sorts `samples` in place.
///
/// Percentiles are nearest-rank: the p-th percentile is the ceil(p * n)-th
/// smallest sample (1-based, computed in integer arithmetic so that no
/// floating-point rounding moves the rank), so every reported percentile is a
/// latency that was really observed and p100 is the maximum. With one sample
/// every statistic is that sample.
///
/// stdev is the population standard deviation (divides by n, not n - 1): the
/// samples are the whole measured run, not an estimate of a larger one.
///
/// No samples: every statistic is 0 and `samples` is 0.
LatencyStats compute_latency(std::span<double> samples_us, bool one_way);

/// The same over a phase's distribution: exact while it kept every sample
/// (sorting a copy), else its percentiles from the folded histogram, within
/// its relative error (percentile_error), and the rest exact.
LatencyStats compute_latency(const model::LatencyDistribution& samples, bool one_way);

/// MB/s = 10^6 bytes/s, Gb/s = 10^9 bits/s, Mmsg/s = 10^6 messages/s.
/// A non-positive duration gives rates of 0 (nothing was timed).
BandwidthStats compute_bandwidth(std::uint64_t bytes, std::uint64_t messages, double seconds);

/// The two-sided 95% critical value of Student's t with `degrees` degrees of
/// freedom (exact table to 30, then the 40 / 60 / 120 / infinity rows).
double student_t95(std::size_t degrees);

/// The 95% confidence interval of the mean of `values` (n >= 2):
/// mean +- t95(n-1) * s / sqrt(n), s the sample standard deviation (n - 1).
/// With fewer than two values the interval is the value itself.
Interval mean_ci95(std::span<const double> values);

/// A trial's headline values from its record (NaN for what it did not measure).
TrialSummary summarize_trial(const Record& trial);

/// Fills record.ci95 from record.trials: every metric measured in all trials.
void compute_trial_intervals(Record& record);

}  // namespace uniperf::results
