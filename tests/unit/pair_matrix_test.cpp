// The node-pair matrix of a `pairs: all` job (report/pair_matrix.hpp): cells
// from the records' placement, and the suspect rule.
#include "report/pair_matrix.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report/html_report.hpp"

namespace uniperf::report {
namespace {

using results::Record;

/// The record of pair {i, j} of a job of `ranks` ranks: p50 latency `us`
/// (or, with `bandwidth`, MB/s).
Record pair_record(int i, int j, int ranks, double value, bool bandwidth = false,
                   results::Status status = results::Status::ok) {
  Record r;
  r.config = "tcp";
  r.test = bandwidth ? "bw" : "lat";
  r.size = bandwidth ? 65536 : 8;
  r.status = status;
  r.flow.pattern = bandwidth ? model::Pattern::bandwidth : model::Pattern::latency;
  if (bandwidth) {
    r.bandwidth = results::BandwidthStats{};
    r.bandwidth->mb_per_s = value;
  } else {
    r.latency = results::LatencyStats{};
    r.latency->p50 = value;
  }
  r.placement = results::Placement{
      .pairs = "all",
      .round = 0,
      .ranks = ranks,
      .initiator = {.rank = i, .host = "n" + std::to_string(i), .local_rank = 0, .node = ""},
      .responder = {.rank = j, .host = "n" + std::to_string(j), .local_rank = 0, .node = ""}};
  return r;
}

/// Every pair of 4 ranks at `base`, but the pairs `slow` at `slow_value`.
std::vector<Record> four_ranks(double base, std::vector<std::pair<int, int>> slow,
                               double slow_value, bool bandwidth = false) {
  std::vector<Record> records;
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) {
      const bool is_slow = std::find(slow.begin(), slow.end(), std::make_pair(i, j)) != slow.end();
      records.push_back(pair_record(i, j, 4, is_slow ? slow_value : base, bandwidth));
    }
  }
  return records;
}

TEST(PairMatrix, CellsAreFilledOnBothSidesFromEachPairsOneRecord) {
  const auto matrices = build_matrices(four_ranks(3.0, {{1, 3}}, 3.5));
  ASSERT_EQ(matrices.size(), 1u);
  const PairMatrix& m = matrices[0];
  EXPECT_EQ(m.ranks, 4);
  EXPECT_EQ(m.metric, "p50 one-way us");
  EXPECT_TRUE(m.lower_is_better);
  EXPECT_FALSE(m.cells[2][2]);
  EXPECT_EQ(m.cells[1][3], 3.5);
  EXPECT_EQ(m.cells[3][1], 3.5);
  EXPECT_EQ(m.best, 3.0);
  EXPECT_EQ(m.names[3], "n3/0");
  EXPECT_TRUE(m.suspect_pairs.empty());  // 3.5 is within 2.1x of 3.0
}

TEST(PairMatrix, ABadNodeIsASuspectRankAndABadCableOnlyASuspectPair) {
  // Rank 2 is slow in every pair it is in: the node.
  const auto node = build_matrices(four_ranks(3.0, {{0, 2}, {1, 2}, {2, 3}}, 9.0))[0];
  EXPECT_EQ(node.suspect_pairs, (std::vector<std::pair<int, int>>{{0, 2}, {1, 2}, {2, 3}}));
  EXPECT_EQ(node.suspect_ranks, std::vector<int>{2});
  // Only the pair {0, 1} is slow: the link between them, no node to blame.
  const auto cable = build_matrices(four_ranks(3.0, {{0, 1}}, 7.0))[0];
  EXPECT_EQ(cable.suspect_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_TRUE(cable.suspect_ranks.empty());
}

TEST(PairMatrix, BandwidthBelowTheFractionOfTheBestIsSuspectAndTheRuleIsSettable) {
  const auto records = four_ranks(1000, {{0, 3}}, 920, true);
  const auto m = build_matrices(records)[0];
  EXPECT_FALSE(m.lower_is_better);
  EXPECT_EQ(m.best, 1000);
  EXPECT_EQ(m.suspect_pairs, (std::vector<std::pair<int, int>>{{0, 3}}));  // 92% < 93%
  const auto lenient =
      build_matrices(records, {.latency_factor = 2.1, .bandwidth_fraction = 0.9})[0];
  EXPECT_TRUE(lenient.suspect_pairs.empty());
}

TEST(PairMatrix, ARetestAloneClearsAPairItsRoundSlowedAndConfirmsABadOne) {
  auto records = four_ranks(3.0, {{0, 1}, {2, 3}}, 8.0);
  Record cleared = pair_record(0, 1, 4, 3.2);  // alone, it is as fast as the rest
  cleared.placement->retest = true;
  Record confirmed = pair_record(2, 3, 4, 7.5);  // alone, still slow
  confirmed.placement->retest = true;
  records.push_back(cleared);
  records.push_back(confirmed);
  const auto m = build_matrices(records)[0];
  EXPECT_EQ(m.cells[0][1], 8.0);  // the cells are the first pass's
  EXPECT_EQ(m.suspect_pairs, (std::vector<std::pair<int, int>>{{2, 3}}));
  EXPECT_EQ(m.cleared_pairs, (std::vector<std::pair<int, int>>{{0, 1}}));
  std::ostringstream text;
  print_matrices(text, {m});
  EXPECT_NE(text.str().find("cleared by their retest alone: 0-1"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("8  "), std::string::npos) << text.str();  // 0-1 not marked '!'
}

TEST(PairMatrix, AFailedPairIsMissingNotZero) {
  auto records = four_ranks(3.0, {}, 0);
  records[1] = pair_record(0, 2, 4, 0, false, results::Status::error);
  const auto m = build_matrices(records)[0];
  EXPECT_FALSE(m.cells[0][2]);
  EXPECT_EQ(m.missing_pairs, (std::vector<std::pair<int, int>>{{0, 2}}));
  EXPECT_EQ(m.best, 3.0);
  std::ostringstream text;
  print_matrices(text, {m});
  EXPECT_NE(text.str().find("not measured (error or skipped): 0-2"), std::string::npos)
      << text.str();
}

TEST(PairMatrix, OnlyPairsAllMakesAMatrixAndTheViewsSayTheSame) {
  auto records = four_ranks(3.0, {{0, 1}}, 7.0);
  Record ring = pair_record(0, 1, 4, 3.0);
  ring.placement->pairs = "ring";
  ring.test = "ring";
  records.push_back(ring);
  Record single;  // a pair of two processes: no placement
  single.test = "plain";
  records.push_back(single);
  EXPECT_EQ(build_matrices(records).size(), 1u);

  std::ostringstream json_text, csv_text;
  write_matrix_json(json_text, records);
  EXPECT_NE(json_text.str().find("\"suspect_pairs\": [\n        [\n          0,\n          1"),
            std::string::npos)
      << json_text.str();
  write_matrix_csv(csv_text, records);
  const std::string csv = csv_text.str();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 12);  // header, 12 ordered pairs
  EXPECT_NE(csv.find("tcp,lat,8,p50 one-way us,0,1,n0/0,n1/0,7,yes\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("tcp,lat,8,p50 one-way us,1,0,n1/0,n0/0,7,yes\r\n"), std::string::npos) << csv;
}

TEST(PairMatrix, PairsRunAtOnceMakeNoMatrix) {
  std::vector<Record> records;
  for (int i = 0; i < 3; ++i) {
    Record r = pair_record(i, i + 3, 6, 100.0 * (i + 1), true);
    r.placement->pairs = "bisection";
    records.push_back(r);
  }
  EXPECT_TRUE(build_matrices(records).empty());  // not every pair
}

TEST(PairMatrix, TheHtmlReportDrawsEachMatrixAsAHeatmap) {
  std::ostringstream plain, html;
  Record single = pair_record(0, 1, 2, 3.0);
  single.placement.reset();  // a single pair: no matrix
  write_html(plain, {single}, "t");
  EXPECT_EQ(plain.str().find("<h2>Node pairs</h2>"), std::string::npos);
  auto records = four_ranks(3.0, {{0, 2}, {1, 2}, {2, 3}}, 9.0);
  write_html(html, records, "t");
  const std::string page = html.str();
  EXPECT_NE(page.find("<h2>Node pairs</h2>"), std::string::npos);
  EXPECT_NE(page.find("tcp / lat 8 B: p50 one-way us, 4 ranks"), std::string::npos);
  // The best pairs are green (hue 120), the suspects red (hue 0) and marked.
  EXPECT_NE(page.find("hsl(120, 70%, 82%)\">3</td>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num suspect\" style=\"background: hsl(0, 70%, 82%)\">9!</td>"),
            std::string::npos);
}

}  // namespace
}  // namespace uniperf::report
