// How long several measured intervals (results::MeasuredInterval: concurrent
// flows of one test, pairs of one round) really ran together. Work told to
// start together need not overlap: a short flow may finish before another
// has begun, and a sum of their rates then totals nothing that ran at once.
#pragma once

#include <optional>
#include <span>

#include "results/record.hpp"

namespace uniperf::results {

/// Below this share of their span, intervals ran mostly one after another:
/// a sum of their rates is no concurrent total, and a latency measured
/// "under load" mostly was not.
inline constexpr double kLeastMeaningfulOverlap = 0.5;

struct Overlap {
  /// The time all of them ran together (latest start to earliest end, none
  /// when the latest start comes after the earliest end) over their span
  /// (earliest start to latest end): 0 to 1; 1 for an empty span.
  double together = 0;
  double span_us = 0;
};

/// Of one or more intervals; none for none.
std::optional<Overlap> overlap_of(std::span<const MeasuredInterval> intervals);

/// Of a test of several flows, from each flow's measured interval; none for
/// a single flow or when a flow has no interval (a record before 1.4).
std::optional<Overlap> flows_overlap(const Record& record);

}  // namespace uniperf::results
