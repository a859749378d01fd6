// What the flows of one test did to each other (docs/traces.md, "Competing
// flows"): from their per-request traces, each traced flow's bytes and
// messages completed while every flow ran (the common interval: latest
// start to earliest end), its bandwidth over time in fixed bins on the
// test's span, and Jain's fairness index across the bandwidth flows'
// shares of the common interval; and a latency flow's slowdown beside the
// others against its baseline alone.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "results/record.hpp"

namespace uniperf::results {

/// Bins per flow at most; a longer span gets wider bins.
inline constexpr std::size_t kMostBins = 10000;

/// How one flow of the test was traced: 1 row for every `every` requests
/// (0: not traced), `bytes` per request.
struct FlowSampling {
  std::uint32_t every = 0;
  std::uint64_t bytes = 0;
};

/// Fills each traced flow's `common` and `timeline` and the record's
/// `fairness_jain` from `record.trace`, the flows' measured intervals and
/// `sampling` (one per flow). Leaves the record as it was when it has fewer
/// than two flows, no common interval, or no traced flow. `bin_us` is the
/// bins' width (widened to keep at most kMostBins).
void fill_competition(Record& record, std::span<const FlowSampling> sampling, double bin_us);

/// The percentiles of a ping-pong's iterations that ran wholly inside
/// [from_us, to_us] (the common interval). Iteration i took samples_us[i]
/// (doubled when `one_way`: the sample is half its round trip) and began
/// begins_us[i] after `started_us`, or, without begins (the iterations ran
/// back to back), where the one before ended, except that the iteration of
/// sample k of a pair {k, t} in `resumes_us` began t after `started_us`
/// (the loop paused before it); all times on one clock. None
/// when no iteration lies inside, or when the samples are only the phase's
/// first ones (`all_samples` false: a folded distribution's kept prefix)
/// and they end before to_us.
std::optional<LatencyStats> latency_within(
    std::span<const double> samples_us, bool one_way, double started_us, double from_us,
    double to_us, std::span<const double> begins_us = {}, bool all_samples = true,
    std::span<const std::pair<std::uint64_t, double>> resumes_us = {});

/// latency_within() of a flow's kept iterations over [from_ns, to_ns] (the
/// common interval, on the iterations' clock).
std::optional<LatencyStats> latency_within(const Record::Iterations& iterations,
                                           std::int64_t from_ns, std::int64_t to_ns);

/// A latency flow measured beside others (`beside`: while every flow ran,
/// where it has those percentiles) against the same flow alone (`alone`,
/// from test `test`): the slowdown of each percentile is beside / alone
/// (1: unchanged; 0 when the baseline's is 0).
AloneBaseline compare_with_alone(const LatencyStats& beside, std::string test,
                                 const LatencyStats& alone);

/// Jain's fairness index of `shares`: (sum x)^2 / (n sum x^2), from 1/n
/// (one took everything) to 1 (equal shares); 1 for all zero.
double jain_index(std::span<const double> shares);

}  // namespace uniperf::results
