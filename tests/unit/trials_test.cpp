// Repeated trials: the suite key, the Student-t interval, the record form.
#include <gtest/gtest.h>

#include <cmath>

#include "results/record.hpp"
#include "results/stats.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

constexpr const char* kFile = "trials.yaml";

TEST(Trials, SuiteKeyInTestsAndDefaults) {
  const auto suite = suite::parse_suite(R"(suite: t
defaults: {trials: 3}
tests:
  - {name: a, op: send}
  - {name: b, op: send, trials: 7}
)",
                                        kFile);
  EXPECT_EQ(suite.tests[0].duration.trials, 3u);
  EXPECT_EQ(suite.tests[1].duration.trials, 7u);
  const auto plain = suite::parse_suite("suite: t\ntests:\n  - {name: a, op: send}\n", kFile);
  EXPECT_EQ(plain.tests[0].duration.trials, 1u);
}

TEST(Trials, ZeroOrTextIsAnErrorNamingLineAndKey) {
  for (const char* value : {"0", "many"}) {
    try {
      suite::parse_suite(
          std::string("suite: t\ntests:\n  - name: a\n    op: send\n    trials: ") + value + "\n",
          kFile);
      ADD_FAILURE() << "trials: " << value << " accepted";
    } catch (const suite::SpecError& e) {
      EXPECT_NE(std::string(e.what()).find("trials.yaml:5: trials:"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Trials, StudentTConfidenceIntervalOfTheMean) {
  // mean 12, sample stdev sqrt(10) = 3.1623, n 5, t(4) = 2.776:
  // half width 2.776 * 3.1623 / sqrt(5) = 3.9259.
  const std::vector<double> values = {10, 14, 8, 16, 12};
  const results::Interval ci = results::mean_ci95(values);
  EXPECT_DOUBLE_EQ(ci.mean, 12);
  EXPECT_NEAR(ci.high - ci.mean, 2.776 * std::sqrt(10.0) / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(ci.mean - ci.low, ci.high - ci.mean, 1e-12);
  EXPECT_DOUBLE_EQ(results::student_t95(1), 12.706);
  EXPECT_DOUBLE_EQ(results::student_t95(30), 2.042);
  EXPECT_DOUBLE_EQ(results::student_t95(1000), 1.960);
  const std::vector<double> one = {5};
  const results::Interval single = results::mean_ci95(one);
  EXPECT_EQ(single.low, 5);
  EXPECT_EQ(single.high, 5);
}

TEST(Trials, IntervalsOnlyForMetricsEveryTrialMeasured) {
  results::Record r;
  for (double p50 : {2.0, 2.2, 2.4}) {
    results::Record trial;
    trial.latency.emplace().p50 = p50;
    trial.latency->mean = p50 + 1;
    trial.bandwidth.emplace().mb_per_s = 100 * p50;
    r.trials.push_back(results::summarize_trial(trial));
  }
  results::compute_trial_intervals(r);
  ASSERT_EQ(r.ci95.count("p50_us"), 1u);
  EXPECT_NEAR(r.ci95["p50_us"].mean, 2.2, 1e-12);
  EXPECT_NEAR(r.ci95["mean_us"].mean, 3.2, 1e-12);
  EXPECT_NEAR(r.ci95["MB_per_s"].mean, 220, 1e-9);
  EXPECT_EQ(r.ci95.count("Mmsg_per_s"), 1u);  // 0 in every trial, measured
  r.trials[1].mmsg_per_s = std::nan("");
  r.trials[1].mb_per_s = std::nan("");
  results::compute_trial_intervals(r);
  EXPECT_EQ(r.ci95.count("MB_per_s"), 0u);
}

TEST(Trials, RecordRoundTrip) {
  results::Record r;
  r.duration.trials = 2;
  r.trials = {{100, 1.5, 1.6, 10, 0.5}, {100, 1.7, 1.8, 11, 0.6}};
  results::compute_trial_intervals(r);
  const nlohmann::json j = results::to_json(r);
  EXPECT_EQ(j["params"]["trials"], 2);
  EXPECT_EQ(j["trials"]["count"], 2);
  const results::Record back = results::record_from_json(j);
  EXPECT_EQ(back.duration.trials, 2u);
  ASSERT_EQ(back.trials.size(), 2u);
  EXPECT_DOUBLE_EQ(back.trials[1].p50_us, 1.7);
  EXPECT_DOUBLE_EQ(back.ci95.at("p50_us").low, r.ci95.at("p50_us").low);
  // A single-trial record has no `trials` object.
  EXPECT_FALSE(results::to_json(results::Record{}).contains("trials"));
}

}  // namespace
}  // namespace uniperf

namespace uniperf {
namespace {

TEST(RunForever, DurationForeverIsWindowsOfFiveSeconds) {
  const auto suite = suite::parse_suite(
      "suite: t\ntests:\n  - {name: a, op: send, duration: forever}\n  - {name: b, op: send}\n",
      kFile);
  EXPECT_TRUE(suite.tests[0].duration.forever);
  EXPECT_EQ(suite.tests[0].duration.seconds, 5);
  EXPECT_EQ(suite.tests[0].duration.iterations, 0u);
  EXPECT_FALSE(suite.tests[1].duration.forever);
  results::Record r;
  r.duration = suite.tests[0].duration;
  EXPECT_EQ(results::to_json(r)["params"]["forever"], true);
  EXPECT_TRUE(results::record_from_json(results::to_json(r)).duration.forever);
}

}  // namespace
}  // namespace uniperf
