#include "results/overlap.hpp"

#include <algorithm>
#include <vector>

namespace uniperf::results {

std::optional<Overlap> overlap_of(std::span<const MeasuredInterval> intervals) {
  const auto extent = extent_of<std::int64_t>(
      intervals, [](const MeasuredInterval& m) { return m.from_unix_us; },
      [](const MeasuredInterval& m) { return m.to_unix_us; });
  if (!extent) return std::nullopt;
  const auto span = extent->span_to - extent->span_from;
  const auto together = std::max<std::int64_t>(0, extent->common_to - extent->common_from);
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
