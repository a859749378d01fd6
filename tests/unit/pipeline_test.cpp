// Pipelined transfers (docs/pipeline.md): the fragment arithmetic, the
// memory a pipeline lays out, whole runs of the engine over the fake
// transport with exact counts (every fragment, the last one shorter), the
// reassembled message checked byte for byte in each delivery mode, and the
// suite's refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "both_sides.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "fake_transport.hpp"
#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::engine {
namespace {

using model::Delivery;
using model::Reassembly;
using model::Source;
using testing::FakeContext;
using testing::FakeFabric;

FlowSpec pipeline(Delivery delivery, std::uint32_t fragment = 4096) {
  FlowSpec flow;
  flow.op = delivery == Delivery::direct ? Op::write : Op::send;
  flow.pattern = Pattern::bandwidth;
  flow.window = 8;
  flow.signal_every = 4;
  flow.rx_depth = 16;
  flow.fragment = fragment;
  flow.delivery = delivery;
  flow.validate = true;
  return flow;
}

TestSpec test_of(const FlowSpec& flow, std::vector<std::uint64_t> sizes,
                 std::uint64_t iterations = 100) {
  TestSpec test;
  test.name = "t";
  test.sizes = std::move(sizes);
  test.duration.iterations = iterations;
  test.flows = {flow};
  return test;
}

TEST(PipelinePlans, AMessageIsWholeFragmentsAndAShorterLastOne) {
  EXPECT_EQ(fragments_of(10000, 4096), 3u);
  EXPECT_EQ(fragments_of(8192, 4096), 2u);
  EXPECT_EQ(fragments_of(1000000, 3000), 334u);
  // A fragment larger than the message, and an empty message: one.
  EXPECT_EQ(fragments_of(100, 4096), 1u);
  EXPECT_EQ(fragments_of(0, 4096), 1u);
  // No fragment: whole messages.
  EXPECT_EQ(fragments_of(1 << 20, 0), 1u);
}

TEST(PipelinePlans, TheStageRingHoldsWhatCanBeInFlightOrWaiting) {
  FlowSpec staged = pipeline(Delivery::direct);
  staged.source = Source::staged;
  const FlowPlan sender = plan_flow(test_of(staged, {65536}), 0, FakeContext::everything());
  EXPECT_EQ(sender.buffers.slots, 1u) << "one message buffer each way";
  EXPECT_GE(sender.buffers.stage_slots, sender.buffers.send_depth);
  EXPECT_EQ(sender.buffers.stage_slot_size, 4096u);
  EXPECT_EQ(sender.buffers.recv_base, sender.buffers.rx_base) << "no copy: receives as ever";

  FlowSpec copy = pipeline(Delivery::copy);
  copy.reassembly = Reassembly::store_and_forward;
  const FlowPlan stored = plan_flow(test_of(copy, {65536}), 0, FakeContext::everything());
  // 16 fragments of a message wait for their last beside 16 posted receives.
  EXPECT_EQ(stored.buffers.stage_slots, 32u);
  EXPECT_EQ(stored.buffers.recv_base, stored.buffers.stage_base);
  EXPECT_EQ(stored.buffers.recv_slot_size, 4096u);
  EXPECT_GE(stored.buffers.lane_bytes, stored.buffers.stage_base + 32u * 4096);

  copy.reassembly = Reassembly::cut_through;
  const FlowPlan cut = plan_flow(test_of(copy, {65536}), 0, FakeContext::everything());
  EXPECT_EQ(cut.buffers.stage_slots, 16u) << "cut-through re-posts each receive once copied";
}

TEST(PipelinePlans, ARingBeyondTheMemoryBoundIsSkippedNamingTheFragment) {
  FlowSpec tiny = pipeline(Delivery::copy, 64);
  tiny.reassembly = Reassembly::store_and_forward;
  const FlowPlan plan = plan_flow(test_of(tiny, {1u << 30}), 0, FakeContext::everything());
  EXPECT_THAT(plan.skip[0], ::testing::HasSubstr("fragment ring"));
  // The ring it would need is named; the one laid out is a slot.
  EXPECT_THAT(plan.skip[0], ::testing::HasSubstr(
                                std::to_string(plan.buffers.oversized_stage_slots) + " fragments"));
  EXPECT_GT(plan.buffers.oversized_stage_slots, 1u);
  EXPECT_EQ(plan.buffers.stage_slots, 1u);
  EXPECT_EQ(plan.buffers.recv_slots, 1u);
}

/// Both sides of a pipelined flow over the fake transport.
struct PipelineRun {
  FakeFabric fabric;
  FakeContext initiator{fabric, FakeContext::everything()};
  FakeContext responder{fabric, FakeContext::everything()};
  FlowPlan plan;
  SizeOutcome measured;

  void run(const FlowSpec& flow, std::uint64_t size, std::uint64_t iterations = 100) {
    plan = plan_flow(test_of(flow, {size}, iterations), 0, FakeContext::everything());
    measured = testing::run_both_sides({&initiator}, plan, {&responder}, plan, size).measured;
  }
};

TEST(PipelineRuns, DirectDeliveryWritesEveryFragmentInPlace) {
  PipelineRun run;
  run.run(pipeline(Delivery::direct), 10000);
  // 3 fragments a message: 4096, 4096 and 1808 bytes; window 8 spans messages.
  EXPECT_EQ(run.initiator.counters.ops[Op::write], 300u);
  EXPECT_EQ(run.initiator.counters.lengths[4096], 200u);
  EXPECT_EQ(run.initiator.counters.lengths[1808], 100u);
  EXPECT_EQ(run.initiator.counters.requests, 300u);
  EXPECT_LE(run.initiator.counters.max_outstanding, 9u);
  // Zero copy: the fragments go from their offsets in the message buffer.
  EXPECT_EQ(run.initiator.counters.source_offsets, (std::set<std::uint64_t>{0, 4096, 8192}));
  EXPECT_EQ(run.measured.messages, 100u);
  EXPECT_EQ(run.measured.bytes, 100u * 10000);
  EXPECT_EQ(run.measured.fragments, 300u);
  EXPECT_EQ(run.measured.corrupted_bytes, 0u);
}

TEST(PipelineRuns, CopyDeliveryReassemblesByteForByteInEitherMode) {
  for (const Reassembly mode : {Reassembly::cut_through, Reassembly::store_and_forward}) {
    SCOPED_TRACE(std::string(model::to_string(mode)));
    FlowSpec flow = pipeline(Delivery::copy);
    flow.reassembly = mode;
    PipelineRun run;
    run.run(flow, 100000);
    // 25 fragments a message: 24 of 4096 bytes and one of 1696.
    EXPECT_EQ(run.initiator.counters.ops[Op::send], 2500u);
    EXPECT_EQ(run.initiator.counters.lengths[1696], 100u);
    EXPECT_EQ(run.measured.messages, 100u);
    EXPECT_EQ(run.measured.fragments, 2500u);
    EXPECT_EQ(run.measured.corrupted_bytes, 0u);
    // Receives land in the stage ring, fragment-sized.
    EXPECT_EQ(run.responder.counters.receive_offsets.size(), run.plan.buffers.stage_slots);
    EXPECT_GE(*run.responder.counters.receive_offsets.begin(), run.plan.buffers.stage_base);
  }
}

TEST(PipelineRuns, ACorruptedFragmentIsSeenInTheReassembledMessage) {
  // Every 7th fragment arrives with its first byte flipped: the message
  // the receiver reassembled differs from the one sent.
  for (const Reassembly mode : {Reassembly::cut_through, Reassembly::store_and_forward}) {
    FlowSpec flow = pipeline(Delivery::copy);
    flow.reassembly = mode;
    PipelineRun run;
    run.initiator.corrupt_every = 7;
    run.run(flow, 100000);
    EXPECT_GT(run.measured.corrupted_bytes, 0u) << model::to_string(mode);
  }
}

TEST(PipelineRuns, StagedFragmentsGoFromTheBounceRing) {
  FlowSpec flow = pipeline(Delivery::direct);
  flow.source = Source::staged;
  PipelineRun run;
  run.run(flow, 65536);
  const BufferGeometry& g = run.plan.buffers;
  EXPECT_EQ(run.initiator.counters.source_offsets.size(), g.stage_slots);
  EXPECT_GE(*run.initiator.counters.source_offsets.begin(), g.stage_base);
  EXPECT_EQ(run.measured.corrupted_bytes, 0u) << "the bounce copies carried the message";
}

TEST(PipelineRuns, AFragmentLargerThanTheMessageSendsItWhole) {
  PipelineRun run;
  run.run(pipeline(Delivery::copy, 4096), 100);
  EXPECT_EQ(run.initiator.counters.lengths[100], 100u);
  EXPECT_EQ(run.initiator.counters.requests, 100u);
  EXPECT_EQ(run.measured.fragments, 100u);
  EXPECT_EQ(run.measured.corrupted_bytes, 0u);
}

TEST(PipelineRuns, AWindowDeeperThanAMessageKeepsSeveralMessagesInFlight) {
  FlowSpec flow = pipeline(Delivery::direct, 1024);
  flow.window = 32;
  flow.signal_every = 16;
  PipelineRun run;
  run.run(flow, 4096);  // 4 fragments a message, 32 in flight
  EXPECT_EQ(run.initiator.counters.requests, 400u);
  EXPECT_GT(run.initiator.counters.max_outstanding, 4u);
  EXPECT_EQ(run.measured.messages, 100u);
}

/// The ping-pong of a pipelined message: both sides send it as fragments
/// and place the other's.
FlowSpec pipelined_pingpong(Delivery delivery, std::uint32_t fragment = 4096) {
  FlowSpec flow = pipeline(delivery, fragment);
  flow.pattern = Pattern::latency;
  return flow;
}

TEST(PipelinePingPong, CopyDeliveryEchoesEveryFragmentAndReassemblesBothWays) {
  for (const Reassembly mode : {Reassembly::cut_through, Reassembly::store_and_forward}) {
    SCOPED_TRACE(std::string(model::to_string(mode)));
    FlowSpec flow = pipelined_pingpong(Delivery::copy);
    flow.reassembly = mode;
    PipelineRun run;
    // 25 fragments a message (24 of 4096 bytes, one of 1696), more than
    // the 16 receives posted: they come back while the message arrives.
    run.run(flow, 100000);
    for (const FakeContext* side : {&run.initiator, &run.responder}) {
      EXPECT_EQ(side->counters.ops.at(Op::send), 2500u);
      EXPECT_EQ(side->counters.lengths.at(4096), 2400u);
      EXPECT_EQ(side->counters.lengths.at(1696), 100u);
      EXPECT_LE(side->counters.max_outstanding, 9u) << "window 8 (and an echo's last fragment)";
    }
    EXPECT_EQ(run.measured.iterations, 100u);
    EXPECT_EQ(run.measured.messages, 100u);
    EXPECT_EQ(run.measured.fragments, 2500u);
    EXPECT_EQ(run.measured.latency.count(), 100u);
    EXPECT_EQ(run.measured.corrupted_bytes, 0u);
  }
}

TEST(PipelinePingPong, DirectDeliveryWritesTheMessageBothWaysAndEndsOnItsLastByte) {
  PipelineRun run;
  run.run(pipelined_pingpong(Delivery::direct), 10000);
  for (const FakeContext* side : {&run.initiator, &run.responder}) {
    EXPECT_EQ(side->counters.ops.at(Op::write), 300u);
    EXPECT_EQ(side->counters.lengths.at(1808), 100u);
    EXPECT_EQ(side->counters.source_offsets, (std::set<std::uint64_t>{0, 4096, 8192}));
  }
  EXPECT_EQ(run.measured.latency.count(), 100u);
  EXPECT_EQ(run.measured.fragments, 300u);
  EXPECT_EQ(run.measured.corrupted_bytes, 0u);
}

TEST(PipelinePingPong, StagedFragmentsOfACopyingPingPongHaveARingApartFromTheReceives) {
  FlowSpec flow = pipelined_pingpong(Delivery::copy);
  flow.source = Source::staged;
  PipelineRun run;
  run.run(flow, 65536);
  const BufferGeometry& g = run.plan.buffers;
  ASSERT_EQ(g.bounce_base, g.stage_base + std::size_t{g.stage_slots} * g.stage_slot_size);
  EXPECT_GE(g.lane_bytes, g.bounce_base + std::size_t{g.stage_slots} * g.stage_slot_size);
  for (const FakeContext* side : {&run.initiator, &run.responder}) {
    EXPECT_GE(*side->counters.source_offsets.begin(), g.bounce_base);
    EXPECT_LT(*side->counters.receive_offsets.rbegin(), g.bounce_base);
    EXPECT_GE(*side->counters.receive_offsets.begin(), g.stage_base);
  }
  EXPECT_EQ(run.measured.corrupted_bytes, 0u) << "bounce copies and receives kept apart";
  // A stream's side only sends or only receives: one ring.
  flow.pattern = Pattern::bandwidth;
  const FlowPlan stream = plan_flow(test_of(flow, {65536}), 0, FakeContext::everything());
  EXPECT_EQ(stream.buffers.bounce_base, stream.buffers.stage_base);
}

TEST(PipelinePingPong, ACorruptedFragmentOfEitherDirectionIsSeen) {
  for (const bool initiator_corrupts : {true, false}) {
    PipelineRun run;
    (initiator_corrupts ? run.initiator : run.responder).corrupt_every = 7;
    run.run(pipelined_pingpong(Delivery::copy), 100000);
    EXPECT_GT(run.measured.corrupted_bytes, 0u) << initiator_corrupts;
  }
}

TEST(PipelineSuites, APipelineNamesItsOpAndIsAOneWayStream) {
  const std::string file = "suites/p.yaml";
  const auto error_of = [&](const std::string& body) -> std::string {
    try {
      suite::parse_suite("suite: s\ntests:\n  - name: t\n" + body, file);
    } catch (const suite::SpecError& e) {
      return e.key + ": " + e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error_of("    op: send\n    pattern: bandwidth\n    fragment: 4K\n"),
              ::testing::StartsWith("op: suites/p.yaml:4: op: "));
  EXPECT_THAT(error_of("    op: send\n    pattern: bandwidth\n    fragment: 4K\n"),
              ::testing::HasSubstr("delivery direct moves its fragments by write"));
  // A pipelined ping-pong keeps `window` fragments in flight; a whole
  // message's ping-pong has one in flight.
  EXPECT_EQ(error_of("    op: write\n    pattern: latency\n    fragment: 4K\n    window: 8\n"),
            "no error");
  EXPECT_THAT(error_of("    op: write\n    pattern: latency\n    window: 8\n"),
              ::testing::StartsWith("window: "));
  EXPECT_THAT(error_of("    op: write\n    pattern: bandwidth\n    direction: bi\n"
                       "    fragment: 4K\n"),
              ::testing::HasSubstr("one way"));
  const model::SuiteSpec ok = suite::parse_suite(
      "suite: s\ntests:\n  - name: t\n    op: send\n    pattern: bandwidth\n    fragment: 4K\n"
      "    delivery: copy\n    reassembly: store_and_forward\n    source: staged\n",
      file);
  const FlowSpec& flow = ok.tests.at(0).flows.at(0);
  EXPECT_EQ(flow.fragment, 4096u);
  EXPECT_EQ(flow.delivery, Delivery::copy);
  EXPECT_EQ(flow.reassembly, Reassembly::store_and_forward);
  EXPECT_EQ(flow.source, Source::staged);
}

TEST(PipelineSuites, AFragmentSweepIsATestPerFragment) {
  const model::SuiteSpec suite = suite::parse_suite(
      "suite: s\ndefaults:\n  op: write\n  pattern: bandwidth\n  sizes: [4K, 1M]\n"
      "tests:\n  - name: direct\n    fragment: 256..64K x4\n"
      "  - name: copy\n    op: send\n    delivery: copy\n    fragment: [1K, 8K]\n"
      "  - name: whole\n",
      "suites/p.yaml");
  std::vector<std::string> names;
  std::vector<std::uint32_t> fragments;
  for (const TestSpec& test : suite.tests) {
    names.push_back(test.name);
    fragments.push_back(test.flows.front().fragment);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("direct.fragment_256", "direct.fragment_1024",
                                            "direct.fragment_4096", "direct.fragment_16384",
                                            "direct.fragment_65536", "copy.fragment_1K",
                                            "copy.fragment_8K", "whole"));
  EXPECT_THAT(fragments, ::testing::ElementsAre(256, 1024, 4096, 16384, 65536, 1024, 8192, 0));
  // Each keeps the test's sizes: the grid is (size, fragment).
  EXPECT_EQ(suite.tests.front().sizes, (std::vector<std::uint64_t>{4096, 1 << 20}));
  try {
    suite::parse_suite(
        "suite: s\ntests:\n  - name: t\n    op: write\n    pattern: bandwidth\n"
        "    fragment: 1K..nope\n",
        "suites/p.yaml");
    ADD_FAILURE() << "a bad sweep was accepted";
  } catch (const suite::SpecError& e) {
    EXPECT_EQ(e.key, "fragment");
    EXPECT_EQ(e.line, 6);
  }
}

}  // namespace
}  // namespace uniperf::engine
