// The kept latency samples summarised for the HTML report: known answers
// for the CDF and the buckets over time, and the samples file read back to
// the same summary (a config whose name holds a comma, quoted in the CSV).
#include "report/latency_samples.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "results/samples_file.hpp"

namespace uniperf::report {
namespace {

results::Record ramp_record() {
  results::Record r;
  r.config = "ucx:transports=posix,self";
  r.test = "lat";
  r.size = 8;
  results::Record::KeptSamples kept;
  kept.flow = 0;
  // 1000 samples rising 1..1000 us, but the 3rd is a spike of 5000 us.
  for (int i = 1; i <= 1000; ++i) kept.us.push_back(i == 3 ? 5000.0 : i);
  r.kept_samples.push_back(kept);
  return r;
}

TEST(LatencySampler, ACdfAtQuantilesAndBucketsThatKeepTheirMaximum) {
  LatencySampler sampler;
  sampler.add(ramp_record());
  const nlohmann::json all = sampler.to_json();
  ASSERT_EQ(all.size(), 1u);
  const nlohmann::json& s = all[0];
  EXPECT_EQ(s["flow"], 1);
  EXPECT_EQ(s["samples"], 1000);
  ASSERT_EQ(s["cdf_us"].size(), LatencySampler::kQuantiles + 1);
  EXPECT_EQ(s["cdf_us"].front(), 1.0);
  EXPECT_EQ(s["cdf_us"].back(), 5000.0);  // the spike is the greatest
  EXPECT_EQ(s["cdf_fraction"].back(), 1.0);
  // 1000 samples in 500 buckets of 2: the second holds 5000 and 4.
  ASSERT_EQ(s["bucket_from"].size(), 500u);
  EXPECT_EQ(s["bucket_from"][1], 2);
  EXPECT_EQ(s["bucket_max_us"][1], 5000.0);
  EXPECT_EQ(s["bucket_p50_us"][1], 5000.0);  // the upper middle of two
  EXPECT_EQ(s["bucket_max_us"][0], 2.0);
}

TEST(LatencySampler, TheSamplesFileReadsBackToTheSameSummary) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("uniperf-samples-" + std::to_string(::getpid()) + ".csv");
  {
    results::SamplesFile file(path, "suite");
    file.add(ramp_record());
    file.commit();
  }
  LatencySampler from_file, from_record;
  EXPECT_EQ(from_file.read_file(path), "");
  from_record.add(ramp_record());
  EXPECT_EQ(from_file.to_json(), from_record.to_json());

  // A label for the config (a multi-file report's).
  LatencySampler renamed;
  EXPECT_EQ(renamed.read_file(path, {{"ucx:transports=posix,self", "ucx [a.jsonl]"}}), "");
  EXPECT_EQ(renamed.to_json()[0]["config"], "ucx [a.jsonl]");
  std::filesystem::remove(path);

  LatencySampler missing;
  EXPECT_NE(missing.read_file(path).find("cannot read"), std::string::npos);
}

TEST(LatencySampler, AJobsPairsAreSeriesApartAndFormatOneStillReads) {
  // Two pairs of a round measured (config, lat, 8) at once.
  results::Record first = ramp_record(), second = ramp_record();
  first.placement =
      results::Placement{.pairs = "bisection",
                         .round = 0,
                         .ranks = 4,
                         .initiator = {.rank = 0, .host = "h", .local_rank = 0, .node = ""},
                         .responder = {.rank = 2, .host = "h", .local_rank = 2, .node = ""}};
  second.placement = first.placement;
  second.placement->initiator.rank = 1;
  second.placement->responder.rank = 3;
  const auto path = std::filesystem::temp_directory_path() /
                    ("uniperf-samples-pairs-" + std::to_string(::getpid()) + ".csv");
  {
    results::SamplesFile file(path, "suite");
    file.add(first);
    file.add(second);
    file.commit();
  }
  LatencySampler read;
  EXPECT_EQ(read.read_file(path), "");
  const auto all = read.to_json();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["pair"], "0-2");
  EXPECT_EQ(all[1]["pair"], "1-3");
  EXPECT_EQ(all[0]["samples"], 1000);

  // Format 1 (no pair column): one series, no pair.
  {
    std::ofstream out(path);
    out << "config,test,size,flow,iteration,latency_us\nc,lat,8,1,0,2.5\nc,lat,8,1,1,3.5\n";
  }
  LatencySampler old;
  EXPECT_EQ(old.read_file(path), "");
  ASSERT_EQ(old.to_json().size(), 1u);
  EXPECT_EQ(old.to_json()[0]["pair"], "");
  EXPECT_EQ(old.to_json()[0]["samples"], 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace uniperf::report
