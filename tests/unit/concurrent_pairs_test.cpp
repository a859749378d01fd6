// The summary of pairs run at once (report/concurrent_pairs.hpp): sums and
// spreads per round, and how much the pairs really overlapped.
#include "report/concurrent_pairs.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace uniperf::report {
namespace {

using results::Record;

/// A pair of an incast into rank 0 whose measured phase ran from `from`
/// to `to` microseconds (into the epoch, any base will do).
Record into_zero(int sender, double mb_per_s, std::int64_t from, std::int64_t to) {
  Record r;
  r.config = "tcp";
  r.test = "in";
  r.size = 65536;
  r.flow.pattern = model::Pattern::bandwidth;
  r.bandwidth = results::BandwidthStats{};
  r.bandwidth->mb_per_s = mb_per_s;
  r.placement =
      results::Placement{.pairs = "incast",
                         .round = 0,
                         .ranks = 4,
                         .initiator = {.rank = sender, .host = "n", .local_rank = {}, .node = ""},
                         .responder = {.rank = 0, .host = "n", .local_rank = {}, .node = ""}};
  r.measured = results::MeasuredInterval{.from_unix_us = from, .to_unix_us = to};
  return r;
}

TEST(ConcurrentPairs, SumsAnIncastAndMeasuresHowLongItsPairsRanTogether) {
  // 1 and 2 run from 0 to 10 ms and 3 from 2 ms to 12 ms: all three ran
  // together from 2 to 10 ms, 8 of the 12 ms span.
  const std::vector<Record> records = {into_zero(1, 100, 0, 10'000), into_zero(2, 300, 0, 10'000),
                                       into_zero(3, 200, 2'000, 12'000)};
  const auto groups = concurrent_pairs(records);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].pairs, "incast");
  EXPECT_DOUBLE_EQ(groups[0].sum(), 600);
  EXPECT_DOUBLE_EQ(groups[0].median(), 200);
  ASSERT_TRUE(groups[0].overlap);
  EXPECT_NEAR(*groups[0].overlap, 8.0 / 12.0, 1e-9);
  EXPECT_NEAR(groups[0].span_ms, 12, 1e-9);
  std::ostringstream text;
  print_concurrent_pairs(text, records);
  EXPECT_NE(text.str().find("tcp / in 65536 B into rank 0 from 3 ranks at once (incast): sum "
                            "600.0 MB/s, per pair min 100.0, median 200.0, max 300.0 MB/s; all of "
                            "them ran together for 67% of their 12.00 ms\n"),
            std::string::npos)
      << text.str();
}

TEST(ConcurrentPairs, PairsOneAfterAnotherAreSaidToBeNoConcurrentTotal) {
  const std::vector<Record> records = {into_zero(1, 100, 0, 1'000), into_zero(2, 100, 1'500, 2'500),
                                       into_zero(3, 100, 3'000, 4'000)};
  const auto groups = concurrent_pairs(records);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].overlap, 0.0);
  std::ostringstream text;
  print_concurrent_pairs(text, records);
  EXPECT_NE(
      text.str().find("ran together for 0% of their 4.000 ms (mostly one after another: the sum "
                      "is no concurrent total; give the test a duration)"),
      std::string::npos)
      << text.str();
}

TEST(ConcurrentPairs, ABisectionIsSummedRecordsWithoutIntervalsSayNoOverlap) {
  std::vector<Record> records;
  for (int i = 0; i < 3; ++i) {
    Record r = into_zero(i, 100.0 * (i + 1), 0, 1);
    r.test = "bw";
    r.placement->pairs = "bisection";
    r.placement->ranks = 6;
    r.measured.reset();
    records.push_back(r);
  }
  std::ostringstream text;
  print_concurrent_pairs(text, records);
  EXPECT_EQ(text.str(),
            "\ntcp / bw 65536 B across the bisection of 6 ranks, 3 pairs at once: sum 600.0 "
            "MB/s, per pair min 100.0, median 200.0, max 300.0 MB/s\n");
}

TEST(ConcurrentPairs, LeavesOutRetestsFailuresAndPairsRunInTurn) {
  Record retest = into_zero(1, 100, 0, 10);
  retest.placement->retest = true;
  Record failed = into_zero(2, 100, 0, 10);
  failed.status = results::Status::error;
  Record matrix = into_zero(3, 100, 0, 10);
  matrix.placement->pairs = "all";
  Record single = into_zero(1, 100, 0, 10);
  single.placement.reset();
  EXPECT_TRUE(concurrent_pairs({retest, failed, matrix, single}).empty());
}

TEST(ConcurrentPairs, KeepsEachRoundApart) {
  Record second = into_zero(2, 100, 0, 10);
  second.placement->round = 1;
  const auto groups = concurrent_pairs({into_zero(1, 100, 0, 10), second});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].round, 0u);
  EXPECT_EQ(groups[1].round, 1u);
}

}  // namespace
}  // namespace uniperf::report
