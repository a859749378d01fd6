// The fragment-sweep grid (report/fragment_grid.hpp): which records make a
// grid, its axes, its cells and the best fragment per size, and the HTML
// heatmap drawn from it.
#include "report/fragment_grid.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report/html_report.hpp"

namespace uniperf::report {
namespace {

using results::Record;

Record swept(const std::string& config, const std::string& test, std::uint64_t size,
             std::uint32_t fragment, double mb_per_s,
             results::Status status = results::Status::ok) {
  Record r;
  r.config = config;
  r.test = fragment ? test + ".fragment_" + std::to_string(fragment) : test;
  r.size = size;
  r.status = status;
  r.flow.pattern = model::Pattern::bandwidth;
  r.flow.fragment = fragment;
  if (status == results::Status::ok) {
    r.bandwidth = results::BandwidthStats{};
    r.bandwidth->mb_per_s = mb_per_s;
  }
  return r;
}

TEST(FragmentGrid, OneGridPerConfigAndSweepWithTheBestPerSize) {
  const std::vector<Record> records = {
      swept("tcp", "copy", 4096, 1024, 100), swept("tcp", "copy", 4096, 4096, 300),
      swept("tcp", "copy", 65536, 1024, 200), swept("tcp", "copy", 65536, 4096, 150),
      swept("tcp", "copy", 65536, 16384, 250), swept("tcp", "whole", 65536, 0, 999),
      swept("ucx", "copy", 4096, 1024, 50), swept("ucx", "copy", 4096, 4096, 40),
      // Alone in its sweep: one fragment is no grid.
      swept("tcp", "lonely", 4096, 1024, 10),
      // Failed or skipped cells stay empty.
      swept("tcp", "copy", 4096, 16384, 0, results::Status::skipped)};
  const auto grids = build_fragment_grids(records);
  ASSERT_EQ(grids.size(), 2u);
  const FragmentGrid& tcp = grids[0];
  EXPECT_EQ(tcp.config, "tcp");
  EXPECT_EQ(tcp.test, "copy");
  EXPECT_EQ(tcp.sizes, (std::vector<std::uint64_t>{4096, 65536}));
  EXPECT_EQ(tcp.fragments, (std::vector<std::uint32_t>{1024, 4096, 16384}));
  ASSERT_EQ(tcp.mb_per_s.size(), 2u);
  EXPECT_EQ(tcp.mb_per_s[0][0], 100);
  EXPECT_EQ(tcp.mb_per_s[0][1], 300);
  EXPECT_FALSE(tcp.mb_per_s[0][2].has_value());
  EXPECT_EQ(tcp.mb_per_s[1][2], 250);
  EXPECT_EQ(tcp.best[0], 1u);
  EXPECT_EQ(tcp.best[1], 2u);
  EXPECT_EQ(grids[1].config, "ucx");
  EXPECT_EQ(grids[1].best[0], 0u);
}

TEST(FragmentGrid, ALaterRecordOfACellReplacesTheEarlier) {
  const auto grids =
      build_fragment_grids({swept("tcp", "d", 4096, 1024, 100), swept("tcp", "d", 4096, 2048, 50),
                            swept("tcp", "d", 4096, 1024, 10)});
  ASSERT_EQ(grids.size(), 1u);
  EXPECT_EQ(grids[0].mb_per_s[0][0], 10);
  EXPECT_EQ(grids[0].best[0], 1u);
}

// A `source: auto` sweep beside `fragment: auto`: NAME.fragment_F.source_S
// is a grid per source, NAME.source_S, not one grid whose cells the two
// sources overwrite.
TEST(FragmentGrid, ASourceSweepIsAGridPerSource) {
  Record staged = swept("tcp", "d", 4096, 1024, 10), zero_copy = swept("tcp", "d", 4096, 1024, 20);
  Record staged2 = swept("tcp", "d", 4096, 2048, 30), zero_copy2 = swept("tcp", "d", 4096, 2048, 5);
  for (Record* r : {&staged, &staged2}) r->test += ".source_staged";
  for (Record* r : {&zero_copy, &zero_copy2}) r->test += ".source_zero_copy";
  const auto grids = build_fragment_grids({staged, zero_copy, staged2, zero_copy2});
  ASSERT_EQ(grids.size(), 2u);
  EXPECT_EQ(grids[0].test, "d.source_staged");
  EXPECT_EQ(grids[0].mb_per_s[0][0], 10);
  EXPECT_EQ(grids[0].best[0], 1u);
  EXPECT_EQ(grids[1].test, "d.source_zero_copy");
  EXPECT_EQ(grids[1].mb_per_s[0][0], 20);
  EXPECT_EQ(grids[1].best[0], 0u);
}

TEST(FragmentGrid, TheReportDrawsEachGridWithItsEnvelope) {
  std::ostringstream with, without;
  write_html(with, {swept("tcp", "copy", 4096, 1024, 100), swept("tcp", "copy", 4096, 4096, 300)},
             "t");
  const std::string html = with.str();
  EXPECT_NE(html.find("id=\"fragment-sweeps\""), std::string::npos);
  EXPECT_NE(html.find("tcp / copy: MB/s by message size and fragment"), std::string::npos);
  EXPECT_NE(html.find("<b>300</b>"), std::string::npos);
  EXPECT_NE(html.find("<td>4096 B: 300</td>"), std::string::npos);
  // The worse cell is a third of the best: red.
  EXPECT_NE(html.find("hsl(0, 70%, 82%)\">100<"), std::string::npos);
  write_html(without, {swept("tcp", "whole", 4096, 0, 100)}, "t");
  EXPECT_EQ(without.str().find("fragment-sweeps"), std::string::npos);
}

}  // namespace
}  // namespace uniperf::report
