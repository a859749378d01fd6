// `uniperf compare`'s policy on hand-written records: exact classification.
#include "results/compare.hpp"

#include <gtest/gtest.h>

#include "suite/suite.hpp"

namespace uniperf::results {
namespace {

Record latency(const std::string& test, std::uint64_t size, double p50) {
  Record r;
  r.config = "tcp";
  r.test = test;
  r.size = size;
  r.flow.pattern = model::Pattern::latency;
  r.latency.emplace();
  r.latency->p50 = p50;
  r.latency->mean = p50;
  r.bandwidth.emplace().mb_per_s = 1;  // a by-product of ping-pong: never checked
  return r;
}

Record bandwidth(const std::string& test, std::uint64_t size, double mb_per_s) {
  Record r;
  r.config = "tcp";
  r.test = test;
  r.size = size;
  r.flow.pattern = model::Pattern::bandwidth;
  r.bandwidth.emplace().mb_per_s = mb_per_s;
  return r;
}

Outcome only_outcome(const Record& base, const Record& now, const Tolerances& t) {
  const CompareResult result = compare({base}, {now}, t);
  EXPECT_EQ(result.rows.size(), 1u);
  return result.rows.front().outcome;
}

TEST(Compare, LatencyBandIsInTheUpDirection) {
  const Tolerances t = default_tolerances();
  EXPECT_EQ(only_outcome(latency("l", 8, 10), latency("l", 8, 10.4), t), Outcome::unchanged);
  EXPECT_EQ(only_outcome(latency("l", 8, 10), latency("l", 8, 10.6), t), Outcome::regressed);
  EXPECT_EQ(only_outcome(latency("l", 8, 10), latency("l", 8, 9.4), t), Outcome::improved);
  EXPECT_EQ(only_outcome(latency("l", 8, 10), latency("l", 8, 9.6), t), Outcome::unchanged);
}

TEST(Compare, BandwidthBandIsInTheDownDirection) {
  const Tolerances t = default_tolerances();
  EXPECT_EQ(only_outcome(bandwidth("b", 64, 1000), bandwidth("b", 64, 940), t), Outcome::regressed);
  EXPECT_EQ(only_outcome(bandwidth("b", 64, 1000), bandwidth("b", 64, 960), t), Outcome::unchanged);
  EXPECT_EQ(only_outcome(bandwidth("b", 64, 1000), bandwidth("b", 64, 1100), t), Outcome::improved);
}

TEST(Compare, ToleranceOverridesAndExtraMetrics) {
  Tolerances t = default_tolerances();
  t["p50_us"] = 20;
  EXPECT_EQ(only_outcome(latency("l", 8, 10), latency("l", 8, 11.5), t), Outcome::unchanged);
  Record slow_mean = latency("l", 8, 10);
  slow_mean.latency->mean = 30;
  EXPECT_EQ(only_outcome(latency("l", 8, 10), slow_mean, t), Outcome::unchanged);
  t["mean_us"] = 10;  // checked only once it has a tolerance
  EXPECT_EQ(only_outcome(latency("l", 8, 10), slow_mean, t), Outcome::regressed);
}

TEST(Compare, OverlappingIntervalsAreNoise) {
  Record base = latency("l", 8, 10), now = latency("l", 8, 11);  // +10%
  base.ci95["p50_us"] = {10, 9, 11};
  now.ci95["p50_us"] = {11, 10.5, 11.5};
  const CompareResult overlap = compare({base}, {now}, default_tolerances());
  EXPECT_EQ(overlap.rows[0].outcome, Outcome::unchanged);
  EXPECT_TRUE(overlap.rows[0].metrics[0].intervals_used);
  EXPECT_TRUE(overlap.rows[0].metrics[0].intervals_overlap);
  now.ci95["p50_us"] = {11, 10.9, 11.1};
  base.ci95["p50_us"] = {10, 9.9, 10.1};
  EXPECT_EQ(only_outcome(base, now, default_tolerances()), Outcome::regressed);
  // Apart but inside the band: still unchanged (both conditions needed).
  now.latency->p50 = 10.2;
  now.ci95["p50_us"] = {10.2, 10.15, 10.25};
  EXPECT_EQ(only_outcome(base, now, default_tolerances()), Outcome::unchanged);
}

TEST(Compare, StatusChangesMissingAndNew) {
  const Tolerances t = default_tolerances();
  Record error = latency("l", 8, 10);
  error.status = Status::error;
  error.reason = "peer died";
  EXPECT_EQ(only_outcome(latency("l", 8, 10), error, t), Outcome::regressed);
  EXPECT_EQ(only_outcome(error, latency("l", 8, 10), t), Outcome::improved);
  Record skipped = latency("l", 8, 10);
  skipped.status = Status::skipped;
  EXPECT_EQ(only_outcome(latency("l", 8, 10), skipped, t), Outcome::skipped);

  const CompareResult result = compare({latency("a", 8, 10), latency("b", 8, 10)},
                                       {latency("b", 8, 10), latency("c", 8, 10)}, t);
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(result.rows[0].test, "a");
  EXPECT_EQ(result.rows[0].outcome, Outcome::missing);
  EXPECT_EQ(result.rows[1].outcome, Outcome::unchanged);
  EXPECT_EQ(result.rows[2].test, "c");
  EXPECT_EQ(result.rows[2].outcome, Outcome::added);
  EXPECT_EQ(result.compared(), 1u);
}

TEST(Compare, MatchesByConfigTestAndSize) {
  Record other_config = latency("l", 8, 50);
  other_config.config = "ucx";
  const CompareResult result =
      compare({latency("l", 8, 10), latency("l", 64, 10), other_config},
              {latency("l", 64, 10), latency("l", 8, 10.1), other_config}, default_tolerances());
  EXPECT_EQ(result.counts.at(Outcome::unchanged), 3u);
  EXPECT_EQ(result.compared(), 3u);
}

TEST(Compare, ANodePairMatrixIsComparedPairByPairAndRetestsAreLeftOut) {
  auto at = [](Record r, int i, int j, bool retest = false) {
    r.placement =
        Placement{.pairs = "all",
                  .round = 0,
                  .ranks = 4,
                  .initiator = {.rank = i, .host = "n", .local_rank = std::nullopt, .node = ""},
                  .responder = {.rank = j, .host = "n", .local_rank = std::nullopt, .node = ""},
                  .retest = retest};
    return r;
  };
  const std::vector<Record> base = {at(latency("lat", 8, 3.0), 0, 1),
                                    at(latency("lat", 8, 3.0), 2, 3),
                                    at(latency("lat", 8, 3.0), 0, 2)};
  // The pair 2-3 regressed; 0-1 did not; 0-2 was retested in the new run,
  // which says nothing against a base that did not retest it.
  const std::vector<Record> now = {
      at(latency("lat", 8, 3.0), 0, 1), at(latency("lat", 8, 7.0), 2, 3),
      at(latency("lat", 8, 8.0), 0, 2), at(latency("lat", 8, 3.1), 0, 2, true)};
  const auto result = compare(base, now, default_tolerances());
  ASSERT_EQ(result.rows.size(), 3u);
  EXPECT_EQ(result.rows[0].pair, "0-1");
  EXPECT_EQ(result.rows[0].outcome, Outcome::unchanged);
  EXPECT_EQ(result.rows[1].pair, "2-3");
  EXPECT_EQ(result.rows[1].outcome, Outcome::regressed);
  EXPECT_EQ(result.rows[2].pair, "0-2");
  EXPECT_EQ(result.rows[2].outcome, Outcome::regressed);  // the first pass's cell, 8.0
  EXPECT_EQ(result.compared(), 3u);
}

TEST(Compare, ParseTolerance) {
  EXPECT_EQ(parse_tolerance("p50_us=3"), std::make_pair(std::string("p50_us"), 3.0));
  EXPECT_EQ(parse_tolerance("MB_per_s=2.5%"), std::make_pair(std::string("MB_per_s"), 2.5));
  for (const char* bad : {"p50_us", "p50=3", "p50_us=", "p50_us=-1", "p50_us=3x"}) {
    EXPECT_THROW(parse_tolerance(bad), std::invalid_argument) << bad;
  }
}

TEST(Compare, SuiteTolerancesAreParsedAndChecked) {
  const auto suite = suite::parse_suite(
      "suite: t\ntolerances: {p50_us: 3, MB_per_s: 2.5%}\ntests:\n  - {name: a, op: send}\n",
      "tol.yaml");
  EXPECT_EQ(suite.tolerances.at("p50_us"), 3);
  EXPECT_EQ(suite.tolerances.at("MB_per_s"), 2.5);
  try {
    suite::parse_suite("suite: t\ntolerances:\n  p50: 3\ntests:\n  - {name: a, op: send}\n",
                       "tol.yaml");
    ADD_FAILURE() << "unknown metric accepted";
  } catch (const suite::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("tol.yaml:3: p50:"), std::string::npos) << e.what();
  }
}

TEST(Compare, OtherSchemaMajorIsAMismatchNotBadInput) {
  nlohmann::json j = to_json(latency("l", 8, 10));
  j["schema_version"] = 2;
  EXPECT_THROW(record_from_json(j), SchemaMismatch);
}

}  // namespace
}  // namespace uniperf::results
