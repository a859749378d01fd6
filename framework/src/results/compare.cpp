#include "results/compare.hpp"

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "model/metrics.hpp"
#include "results/metrics.hpp"

namespace uniperf::results {
namespace {

using Key = std::tuple<std::string, std::string, std::uint64_t, std::string>;

/// A launched job's pair of ranks, "I-J"; "" for a single pair.
std::string pair_of(const Record& r) {
  return r.placement ? std::to_string(r.placement->initiator.rank) + "-" +
                           std::to_string(r.placement->responder.rank)
                     : std::string();
}

Key key_of(const Record& r) {
  return {r.config, r.test, r.size, pair_of(r)};
}

/// A retest is measured only when its first pass stood out: comparing it
/// would call a pair missing or added for a load's sake.
bool compared(const Record& r) {
  return !r.placement || !r.placement->retest;
}

/// The metric's value in a record; NaN when the record does not measure it
/// or the name is no metric.
double value_of(const Record& r, const std::string& metric) {
  const model::MetricInfo* info = model::find_metric(metric);
  return info != nullptr ? metric_value(r, info->id) : std::nan("");
}

/// Whether `metric` says something about a test of this pattern.
bool fits_pattern(const Record& r, const std::string& metric) {
  const model::MetricInfo* info = model::find_metric(metric);
  return info != nullptr && info->pattern == r.flow.pattern;
}

MetricChange compare_metric(const Record& base, const Record& now, const std::string& metric,
                            double tolerance) {
  MetricChange m;
  m.metric = metric;
  m.base = value_of(base, metric);
  m.now = value_of(now, metric);
  m.tolerance_percent = tolerance;
  m.change_percent = m.base != 0 ? (m.now - m.base) / m.base * 100 : (m.now == 0 ? 0 : INFINITY);
  // Positive `worse` is a move in the metric's bad direction.
  const double worse = lower_is_better(metric) ? m.change_percent : -m.change_percent;
  const auto base_ci = base.ci95.find(metric);
  const auto now_ci = now.ci95.find(metric);
  m.intervals_used = base_ci != base.ci95.end() && now_ci != now.ci95.end();
  if (m.intervals_used) {
    m.intervals_overlap =
        base_ci->second.low <= now_ci->second.high && now_ci->second.low <= base_ci->second.high;
  }
  const bool distinct = !m.intervals_used || !m.intervals_overlap;
  if (worse > tolerance && distinct) {
    m.outcome = Outcome::regressed;
  } else if (-worse > tolerance && distinct) {
    m.outcome = Outcome::improved;
  }
  return m;
}

Comparison compare_pair(const Record& base, const Record& now, const Tolerances& tolerances) {
  Comparison c{base.config, base.test, base.size, Outcome::unchanged, {}, {}, pair_of(base)};
  if (base.status == Status::skipped || now.status == Status::skipped) {
    c.outcome = Outcome::skipped;
    c.note = base.status == Status::skipped ? "base skipped: " + base.reason
                                            : "new skipped: " + now.reason;
    return c;
  }
  if (base.status == Status::error) {
    c.outcome = now.status == Status::ok ? Outcome::improved : Outcome::skipped;
    c.note = "base was an error: " + base.reason;
    return c;
  }
  if (now.status == Status::error) {
    c.outcome = Outcome::regressed;
    c.note = "now an error: " + now.reason;
    return c;
  }
  for (const auto& [metric, tolerance] : tolerances) {
    if (!fits_pattern(base, metric)) continue;
    if (std::isnan(value_of(base, metric)) || std::isnan(value_of(now, metric))) continue;
    c.metrics.push_back(compare_metric(base, now, metric, tolerance));
  }
  bool any_regressed = false, any_improved = false;
  for (const auto& m : c.metrics) {
    any_regressed |= m.outcome == Outcome::regressed;
    any_improved |= m.outcome == Outcome::improved;
  }
  c.outcome = any_regressed  ? Outcome::regressed
              : any_improved ? Outcome::improved
                             : Outcome::unchanged;
  if (c.metrics.empty()) {
    c.outcome = Outcome::skipped;
    c.note = "no metric with a tolerance measured on both sides";
  }
  return c;
}

}  // namespace

const std::vector<std::string>& comparable_metrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> names;
    for (const model::MetricInfo& metric : model::kMetrics) names.emplace_back(metric.name);
    return names;
  }();
  return metrics;
}

bool lower_is_better(const std::string& metric) {
  const model::MetricInfo* info = model::find_metric(metric);
  return info != nullptr && info->lower_is_better;
}

Tolerances default_tolerances() {
  Tolerances tolerances;
  for (const model::MetricInfo& metric : model::kMetrics) {
    if (metric.default_tolerance > 0)
      tolerances[std::string(metric.name)] = metric.default_tolerance;
  }
  return tolerances;
}

std::pair<std::string, double> parse_tolerance(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos) {
    throw std::invalid_argument("tolerance '" + text + "': expected METRIC=PERCENT, e.g. p50_us=5");
  }
  const std::string metric = text.substr(0, equals);
  std::string value = text.substr(equals + 1);
  const auto& known = comparable_metrics();
  if (std::find(known.begin(), known.end(), metric) == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument("tolerance '" + text + "': unknown metric '" + metric +
                                "' (known: " + list + ")");
  }
  if (!value.empty() && value.back() == '%') value.pop_back();
  std::size_t used = 0;
  double percent = -1;
  try {
    percent = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !(percent >= 0) || std::isinf(percent)) {
    throw std::invalid_argument("tolerance '" + text +
                                "': expected a non-negative percentage after '='");
  }
  return {metric, percent};
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::regressed:
      return "regressed";
    case Outcome::improved:
      return "improved";
    case Outcome::unchanged:
      return "unchanged";
    case Outcome::missing:
      return "missing";
    case Outcome::added:
      return "new";
    case Outcome::skipped:
      return "skipped";
  }
  return "?";
}

std::size_t CompareResult::compared() const {
  std::size_t n = 0;
  for (const Outcome o : {Outcome::regressed, Outcome::improved, Outcome::unchanged}) {
    const auto it = counts.find(o);
    if (it != counts.end()) n += it->second;
  }
  return n;
}

CompareResult compare(const std::vector<Record>& base, const std::vector<Record>& now,
                      const Tolerances& tolerances) {
  std::map<Key, const Record*> base_by_key, now_by_key;
  std::vector<Key> base_order, now_order;
  for (const auto& r : base) {
    if (!compared(r)) continue;
    if (base_by_key.insert_or_assign(key_of(r), &r).second) base_order.push_back(key_of(r));
  }
  for (const auto& r : now) {
    if (!compared(r)) continue;
    if (now_by_key.insert_or_assign(key_of(r), &r).second) now_order.push_back(key_of(r));
  }
  CompareResult result;
  for (const Key& key : base_order) {
    const Record& b = *base_by_key.at(key);
    const auto match = now_by_key.find(key);
    if (match == now_by_key.end()) {
      result.rows.push_back(
          {b.config, b.test, b.size, Outcome::missing, "only in the base", {}, pair_of(b)});
    } else {
      result.rows.push_back(compare_pair(b, *match->second, tolerances));
    }
  }
  for (const Key& key : now_order) {
    if (base_by_key.count(key) != 0) continue;
    const Record& n = *now_by_key.at(key);
    result.rows.push_back(
        {n.config, n.test, n.size, Outcome::added, "only in the new results", {}, pair_of(n)});
  }
  for (const auto& row : result.rows) ++result.counts[row.outcome];
  return result;
}

}  // namespace uniperf::results
