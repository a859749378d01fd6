// The metric table (model/metrics.hpp) against its three readers: `uniperf
// compare` checks every metric it names, a suite's tolerances: accept every
// one, and trials summarise exactly the metrics marked per_trial.
#include "model/metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "results/compare.hpp"
#include "results/metrics.hpp"
#include "results/stats.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using model::MetricInfo;
using results::Record;

/// A record of `metric`'s pattern where every metric reads `value`.
Record measured(const MetricInfo& metric, double value) {
  Record r;
  r.config = "tcp";
  r.test = "t";
  r.size = 8;
  r.flow.pattern = metric.pattern;
  auto& l = r.latency.emplace();
  l.p50 = l.mean = l.p99 = value;
  auto& b = r.bandwidth.emplace();
  b.mb_per_s = b.mmsg_per_s = value;
  return r;
}

TEST(Metrics, NamesAreUniqueAndEachHasAValueInARecord) {
  for (const MetricInfo& metric : model::kMetrics) {
    EXPECT_EQ(model::find_metric(metric.name), &metric);
    EXPECT_EQ(results::metric_value(measured(metric, 7), metric.id), 7) << metric.name;
    EXPECT_TRUE(std::isnan(results::metric_value(Record{}, metric.id))) << metric.name;
  }
}

TEST(Metrics, CompareChecksEveryMetricInItsBadDirection) {
  const auto& known = results::comparable_metrics();
  for (const MetricInfo& metric : model::kMetrics) {
    SCOPED_TRACE(std::string(metric.name));
    EXPECT_NE(std::find(known.begin(), known.end(), metric.name), known.end());
    EXPECT_EQ(results::lower_is_better(std::string(metric.name)), metric.lower_is_better);
    EXPECT_EQ(results::parse_tolerance(std::string(metric.name) + "=3").second, 3);
    const double worse = metric.lower_is_better ? 20 : 5;
    const results::CompareResult result = results::compare(
        {measured(metric, 10)}, {measured(metric, worse)}, {{std::string(metric.name), 10}});
    ASSERT_EQ(result.rows.size(), 1u);
    EXPECT_EQ(result.rows[0].outcome, results::Outcome::regressed);
    ASSERT_EQ(result.rows[0].metrics.size(), 1u);
    EXPECT_EQ(result.rows[0].metrics[0].base, 10);
    EXPECT_EQ(result.rows[0].metrics[0].now, worse);
  }
}

TEST(Metrics, DefaultTolerancesAreTheTables) {
  const results::Tolerances defaults = results::default_tolerances();
  for (const MetricInfo& metric : model::kMetrics) {
    const auto it = defaults.find(std::string(metric.name));
    if (metric.default_tolerance > 0) {
      ASSERT_NE(it, defaults.end()) << metric.name;
      EXPECT_EQ(it->second, metric.default_tolerance);
    } else {
      EXPECT_EQ(it, defaults.end()) << metric.name;
    }
  }
}

TEST(Metrics, SuiteTolerancesAcceptEveryMetric) {
  std::string text = "suite: s\ntolerances:\n";
  for (const MetricInfo& metric : model::kMetrics)
    text += "  " + std::string(metric.name) + ": 4\n";
  text += "tests:\n  - {name: t, op: send}\n";
  const model::SuiteSpec suite = suite::parse_suite(text, "s.yaml");
  EXPECT_EQ(suite.tolerances.size(), std::size(model::kMetrics));
  for (const MetricInfo& metric : model::kMetrics) {
    EXPECT_EQ(suite.tolerances.at(std::string(metric.name)), 4);
  }
}

TEST(Metrics, TrialsSummariseExactlyThePerTrialMetrics) {
  Record record = measured(model::kMetrics[0], 10);
  for (const double value : {10.0, 11.0, 12.0}) {
    record.trials.push_back(results::summarize_trial(measured(model::kMetrics[0], value)));
  }
  results::compute_trial_intervals(record);
  for (const MetricInfo& metric : model::kMetrics) {
    SCOPED_TRACE(std::string(metric.name));
    EXPECT_EQ(results::trial_member(metric.id) != nullptr, metric.per_trial);
    EXPECT_EQ(record.ci95.count(std::string(metric.name)), metric.per_trial ? 1u : 0u);
    if (metric.per_trial) {
      EXPECT_EQ(record.trials[1].*results::trial_member(metric.id), 11);
    }
  }
}

}  // namespace
}  // namespace uniperf
