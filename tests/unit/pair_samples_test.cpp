// A pair's kept latency samples reach rank 0 (session/pair_samples.hpp):
// every series whole over the control connection, in frames, and a peer
// that sends more than its record kept is refused; so do a separate
// latency flow's iterations.
#include "session/pair_samples.hpp"

#include <gtest/gtest.h>

namespace uniperf::session {
namespace {

results::Record with_samples() {
  results::Record r;
  r.flows.resize(2);  // a test of two flows
  r.kept_samples.push_back({.flow = 0, .us = {}});
  r.kept_samples.push_back({.flow = 1, .us = {1.5, 2.5, 3.5}});
  // More than one frame's worth in the first.
  for (int i = 0; i < 300'000; ++i) r.kept_samples[0].us.push_back(0.25 * i);
  r.samples_kept = 300'003;
  return r;
}

TEST(PairSamples, EverySeriesArrivesWhole) {
  auto [rank0, rank] = bootstrap::make_in_process_pair();
  const results::Record sent = with_samples();
  send_pair_samples(*rank, sent);  // queued: the in-process pair never blocks a sender
  results::Record got;
  got.flows.resize(2);
  got.samples_kept = sent.samples_kept;
  receive_pair_samples(*rank0, got);
  ASSERT_EQ(got.kept_samples.size(), 2u);
  EXPECT_EQ(got.kept_samples[0].flow, 0u);
  EXPECT_EQ(got.kept_samples[0].us, sent.kept_samples[0].us);
  EXPECT_EQ(got.kept_samples[1].flow, 1u);
  EXPECT_EQ(got.kept_samples[1].us, sent.kept_samples[1].us);
}

TEST(PairSamples, MoreThanTheRecordKeptOrANoFlowsSeriesIsRefused) {
  {
    auto [rank0, rank] = bootstrap::make_in_process_pair();
    send_pair_samples(*rank, with_samples());
    results::Record got;
    got.flows.resize(2);
    got.samples_kept = 1000;  // what the record says it kept
    EXPECT_THROW(receive_pair_samples(*rank0, got), bootstrap::BootstrapError);
  }
  {
    auto [rank0, rank] = bootstrap::make_in_process_pair();
    const results::Record sent = with_samples();
    send_pair_samples(*rank, sent);
    results::Record got;  // a test of one flow: flow 1 is no flow of it
    got.samples_kept = sent.samples_kept;
    EXPECT_THROW(receive_pair_samples(*rank0, got), bootstrap::BootstrapError);
  }
}

/// A separate latency flow's iterations: spaced, with a resume, more than
/// one frame of samples.
results::Record with_iterations() {
  results::Record r;
  r.iterations_run = 200'000;
  results::Record::Iterations& it = r.iterations.emplace();
  it.started_ns = 1'700'000'000'123'456'789;
  it.one_way = false;
  it.all_samples = false;
  for (int i = 0; i < 150'000; ++i) {
    it.samples_us.push_back(1.0 + 0.001 * i);
    it.begins_us.push_back(3.0 * i);
  }
  it.resumes_us = {{7, 21.5}, {99'999, 300'000.25}};
  return r;
}

TEST(PairSamples, ASeparateFlowsIterationsArriveWhole) {
  auto [rank0, rank] = bootstrap::make_in_process_pair();
  const results::Record sent = with_iterations();
  send_pair_iterations(*rank, sent);
  results::Record got;
  got.iterations_run = sent.iterations_run;
  receive_pair_iterations(*rank0, got);
  ASSERT_TRUE(got.iterations);
  const auto& want = *sent.iterations;
  EXPECT_EQ(got.iterations->started_ns, want.started_ns);
  EXPECT_EQ(got.iterations->one_way, want.one_way);
  EXPECT_EQ(got.iterations->all_samples, want.all_samples);
  EXPECT_EQ(got.iterations->samples_us, want.samples_us);
  EXPECT_EQ(got.iterations->begins_us, want.begins_us);
  EXPECT_EQ(got.iterations->resumes_us, want.resumes_us);
}

TEST(PairSamples, MoreIterationsThanTheRecordRanOrBeginsOfOtherSamplesAreRefused) {
  {
    auto [rank0, rank] = bootstrap::make_in_process_pair();
    send_pair_iterations(*rank, with_iterations());
    results::Record got;
    got.iterations_run = 1000;  // what the record says it ran
    EXPECT_THROW(receive_pair_iterations(*rank0, got), bootstrap::BootstrapError);
    EXPECT_FALSE(got.iterations);
  }
  {
    auto [rank0, rank] = bootstrap::make_in_process_pair();
    results::Record sent = with_iterations();
    sent.iterations->begins_us.pop_back();  // one sample without its begin
    send_pair_iterations(*rank, sent);
    results::Record got;
    got.iterations_run = sent.iterations_run;
    EXPECT_THROW(receive_pair_iterations(*rank0, got), bootstrap::BootstrapError);
  }
}

}  // namespace
}  // namespace uniperf::session
