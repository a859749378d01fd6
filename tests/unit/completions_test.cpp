// The HTML report's completion timelines sample traced requests
// (report/completions.hpp): bounded per series, spread over the whole run,
// on the record's time origin, from records or a trace file read back.
#include "report/completions.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <utility>

namespace uniperf::report {
namespace {

TEST(Completions, ASeriesStaysBoundedAndSpreadOverTheWholeRun) {
  CompletionSampler sampler;
  constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
  const std::int64_t requests = 100'000;
  for (std::int64_t i = 0; i < requests; ++i) {
    // A request every microsecond, each taking 2 us; the last never completed.
    sampler.add("c", "t", 8, 1, false, kT0 + i * 1000,
                i == requests - 1 ? 0 : kT0 + i * 1000 + 2000);
  }
  sampler.add("c", "t", 8, 1, true, kT0 + 500, kT0 + 700);  // the responder's, apart
  const auto all = sampler.to_json();
  ASSERT_EQ(all.size(), 2u);
  const auto& mine = all[0];
  EXPECT_EQ(mine.at("side"), "initiator");
  const auto& at = mine.at("at_ms");
  ASSERT_GE(at.size(), CompletionSampler::kPointsPerSeries);
  ASSERT_LT(at.size(), 2 * CompletionSampler::kPointsPerSeries);
  // From the record's first post; the first request is kept, and the last
  // kept lies in the run's last tenth: the sample spans the run.
  EXPECT_DOUBLE_EQ(at.front().get<double>(), 0.002);
  EXPECT_GT(at.back().get<double>(), 0.9 * requests / 1000.0);
  for (const auto& took : mine.at("took_us")) EXPECT_DOUBLE_EQ(took.get<double>(), 2);
  EXPECT_EQ(all[1].at("side"), "responder");
  EXPECT_DOUBLE_EQ(all[1].at("at_ms")[0].get<double>(), 0.0007);
}

TEST(Completions, ATraceFileOfEitherFormatReadsBackAndABadLineStopsIt) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("uniperf-completions-" + std::to_string(::getpid()) + ".trace.csv");
  {
    std::ofstream out(path);
    out << "# format 1: no side column\n"
           "config,test,size,flow,lane,id,op,bytes,posted_ns,completed_ns,completion\n"
           "c,t,8,2,0,1,send,8,1000,3000,signaled\n"
           "config,test,size,flow,lane,id,op,bytes,posted_ns,completed_ns,completion,side\n"
           "c,u,8,1,0,1,send,8,1000,4000,signaled,responder\n"
           "c,u,8,1,0,2,send,8,oops,5000,signaled,initiator\n"
           "c,u,8,1,0,3,send,8,1000,6000,signaled,initiator\n";
  }
  CompletionSampler sampler;
  const std::string stopped = sampler.read_file(path);
  EXPECT_NE(stopped.find(":6: not a trace row"), std::string::npos) << stopped;
  const auto all = sampler.to_json();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].at("test"), "t");
  EXPECT_EQ(all[0].at("flow"), 2);
  EXPECT_EQ(all[0].at("side"), "initiator");
  EXPECT_DOUBLE_EQ(all[0].at("took_us")[0].get<double>(), 2);
  EXPECT_EQ(all[1].at("side"), "responder");

  // Read as one of several inputs holding config c (uniperf report a b):
  // the rows follow the report's label for it.
  CompletionSampler labelled;
  labelled.read_file(path, {{"c", "c [baseline]"}});
  const auto renamed = labelled.to_json();
  ASSERT_EQ(renamed.size(), 2u);
  EXPECT_EQ(renamed[0].at("config"), "c [baseline]");
  EXPECT_EQ(renamed[1].at("config"), "c [baseline]");

  std::filesystem::remove(path);
  EXPECT_NE(CompletionSampler().read_file(path), "");
}

TEST(Completions, TimesNoRunCouldHaveStopTheFile) {
  // Found by fuzz_sidecars: stamps far apart made a difference overflow.
  const auto path = std::filesystem::temp_directory_path() /
                    ("uniperf-completions-times-" + std::to_string(::getpid()) + ".trace.csv");
  const std::string header =
      "config,test,size,flow,lane,id,op,bytes,posted_ns,completed_ns,completion,side\n"
      "c,t,8,1,0,1,send,8,1000,3000,signaled,initiator\n";
  for (const std::string& times :
       {std::string("1795795966178407786,-7957959666178402213"),
        std::string("-9000000000000000000,1000"), std::string("5000,4000")}) {
    {
      std::ofstream out(path);
      out << header << "c,t,8,1,0,2,send,8," << times << ",signaled,initiator\n";
    }
    CompletionSampler sampler;
    const std::string stopped = sampler.read_file(path);
    EXPECT_NE(stopped.find(":3: not a trace row: a time before 1970"), std::string::npos)
        << times << ": " << stopped;
    const auto all = sampler.to_json();  // the rows before it stay
    ASSERT_EQ(all.size(), 1u) << times;
    EXPECT_EQ(all[0].at("took_us").size(), 1u) << times;
  }
  std::filesystem::remove(path);
}

TEST(Completions, TheJobsPairsOfOneRecordAreSeriesApart) {
  // Two pairs of a round measure (c, t, 8) at once: a record each, or one
  // record whose flows ran in separate process pairs.
  results::Record bisection;
  bisection.config = "c";
  bisection.test = "t";
  bisection.size = 8;
  bisection.placement =
      results::Placement{.pairs = "bisection",
                         .round = 0,
                         .ranks = 4,
                         .initiator = {.rank = 1, .host = "h", .local_rank = 1, .node = ""},
                         .responder = {.rank = 3, .host = "h", .local_rank = 3, .node = ""}};
  bisection.trace.push_back({.flow = 0, .posted_ns = 1000, .completed_ns = 3000});
  results::Record separate = bisection;
  separate.test = "s";
  separate.flows.resize(2);
  separate.flows[1].placement = bisection.placement;
  separate.flows[1].placement->initiator.rank = 2;
  separate.trace.push_back({.flow = 1, .posted_ns = 1500, .completed_ns = 2500});
  CompletionSampler sampler;
  sampler.add(bisection);
  sampler.add("c", "t", 8, 1, false, 1000, 4000, "0-2");  // the other pair's, from its file
  sampler.add(separate);
  const auto all = sampler.to_json();
  ASSERT_EQ(all.size(), 4u);
  std::set<std::pair<std::string, std::string>> series;
  for (const auto& one : all)
    series.insert({one.at("test").get<std::string>(), one.at("pair").get<std::string>()});
  EXPECT_EQ(series, (std::set<std::pair<std::string, std::string>>{
                        {"t", "0-2"}, {"t", "1-3"}, {"s", "1-3"}, {"s", "2-3"}}));

  // From a trace file of format 3, its pair column.
  const auto path = std::filesystem::temp_directory_path() /
                    ("uniperf-completions-pairs-" + std::to_string(::getpid()) + ".trace.csv");
  {
    std::ofstream out(path);
    out << "config,test,size,flow,lane,id,op,bytes,posted_ns,completed_ns,completion,side,"
           "returned_ns,pair\n"
           "c,t,8,1,0,1,send,8,1000,3000,signaled,initiator,1100,0-2\n"
           "c,t,8,1,0,1,send,8,1000,3000,signaled,initiator,1100,1-3\n";
  }
  CompletionSampler read;
  EXPECT_EQ(read.read_file(path), "");
  std::filesystem::remove(path);
  const auto back = read.to_json();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].at("pair"), "0-2");
  EXPECT_EQ(back[1].at("pair"), "1-3");
}

}  // namespace
}  // namespace uniperf::report
