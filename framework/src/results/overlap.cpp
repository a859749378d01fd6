#include "results/overlap.hpp"

#include <algorithm>
#include <vector>

namespace uniperf::results {

std::optional<Overlap> overlap_of(std::span<const MeasuredInterval> intervals) {
  if (intervals.empty()) return std::nullopt;
  std::int64_t first_start = intervals.front().from_unix_us, last_start = first_start;
  std::int64_t first_end = intervals.front().to_unix_us, last_end = first_end;
  for (const MeasuredInterval& m : intervals) {
    first_start = std::min(first_start, m.from_unix_us);
    last_start = std::max(last_start, m.from_unix_us);
    first_end = std::min(first_end, m.to_unix_us);
    last_end = std::max(last_end, m.to_unix_us);
  }
  const auto span = last_end - first_start;
  const auto together = std::max<std::int64_t>(0, first_end - last_start);
  return Overlap{
      .together = span > 0 ? static_cast<double>(together) / static_cast<double>(span) : 1.0,
      .span_us = static_cast<double>(span)};
}

std::optional<Overlap> flows_overlap(const Record& record) {
  if (record.flows.size() < 2) return std::nullopt;
  std::vector<MeasuredInterval> intervals;
  for (const FlowResult& flow : record.flows) {
    if (!flow.measured) return std::nullopt;
    intervals.push_back(*flow.measured);
  }
  return overlap_of(intervals);
}

}  // namespace uniperf::results
