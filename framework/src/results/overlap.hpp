// How long several measured intervals (results::MeasuredInterval: concurrent
// flows of one test, pairs of one round) really ran together. Work told to
// start together need not overlap: a short flow may finish before another
// has begun, and a sum of their rates then totals nothing that ran at once.
#pragma once

#include <algorithm>
#include <optional>
#include <span>

#include "results/record.hpp"

namespace uniperf::results {

/// Below this share of their span, intervals ran mostly one after another:
/// a sum of their rates is no concurrent total, and a latency measured
/// "under load" mostly was not.
inline constexpr double kLeastMeaningfulOverlap = 0.5;

/// When a set of intervals ran: all of them from the latest start to the
/// earliest end (none when that end comes first), any of them from the
/// earliest start to the latest end. T is any time stamp (microseconds of
/// the wall clock, engine ticks): the one definition of "while all ran" for
/// the overlap, the bandwidth and the latency over the common interval.
template <class T>
struct Extent {
  T span_from, common_from, common_to, span_to;
  bool has_common() const { return common_to > common_from; }
};

/// Of `intervals`, each one's start and end read by `from` and `to`; none
/// for none.
template <class T, class Range, class From, class To>
std::optional<Extent<T>> extent_of(const Range& intervals, From from, To to) {
  std::optional<Extent<T>> extent;
  for (const auto& interval : intervals) {
    const T start = from(interval), end = to(interval);
    if (!extent) {
      extent = Extent<T>{start, start, end, end};
      continue;
    }
    extent->span_from = std::min(extent->span_from, start);
    extent->common_from = std::max(extent->common_from, start);
    extent->common_to = std::min(extent->common_to, end);
    extent->span_to = std::max(extent->span_to, end);
  }
  return extent;
}

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
