// The headline metrics of a record, by the names records (trials.ci95),
// suites (tolerances:) and `uniperf compare --tolerance` use. One row each:
// its direction, the pattern whose result it is, whether trials summarise
// it, and its default tolerance. Where a record keeps a metric's value is
// results/metrics.cpp (a switch over Metric, so a new row that has no value
// fails to compile there).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/test_spec.hpp"

namespace uniperf::model {

enum class Metric : std::uint8_t { p50_us, mean_us, p99_us, mb_per_s, mmsg_per_s };

struct MetricInfo {
  Metric id;
  std::string_view name;
  bool lower_is_better;
  /// The pattern whose result this is: a latency test's "bandwidth" is a
  /// by-product of its ping-pong, not its result, so compare skips it.
  Pattern pattern;
  /// Summarised per trial (`trials.per_trial`) with a 95% CI over trials.
  /// p99 is not: the record schema 1.1 carries no per-trial p99.
  bool per_trial;
  /// Percent `uniperf compare` allows without --tolerance or a suite's
  /// `tolerances:`; 0 = not checked unless one is given.
  double default_tolerance;
};

inline constexpr MetricInfo kMetrics[] = {
    {Metric::p50_us, "p50_us", true, Pattern::latency, true, 5},
    {Metric::mean_us, "mean_us", true, Pattern::latency, true, 0},
    {Metric::p99_us, "p99_us", true, Pattern::latency, false, 0},
    {Metric::mb_per_s, "MB_per_s", false, Pattern::bandwidth, true, 5},
    {Metric::mmsg_per_s, "Mmsg_per_s", false, Pattern::message_rate, true, 5},
};

/// The row named `name`; nullptr when there is none.
inline const MetricInfo* find_metric(std::string_view name) {
  for (const MetricInfo& metric : kMetrics) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

}  // namespace uniperf::model
