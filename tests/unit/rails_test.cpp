// Rails (docs/rails.md): a config's `rails:`, the lanes a flow's policy lays
// over them, the arithmetic of striping and round-robin, and whole runs of
// the engine over two fake rails (a Context per rail on each side) with
// exact counts per rail.
#include <gtest/gtest.h>

#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "both_sides.hpp"
#include "engine/lane.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "fake_transport.hpp"
#include "suite/config.hpp"
#include "suite/diagnostics.hpp"

namespace uniperf::engine {
namespace {

using model::RailPolicy;
using testing::FakeContext;
using testing::FakeFabric;

FlowSpec stream(RailPolicy policy, std::uint32_t endpoints = 1) {
  FlowSpec flow;
  flow.op = Op::write;
  flow.pattern = Pattern::bandwidth;
  flow.window = 8;
  flow.signal_every = 4;
  flow.cq_moderation = 2;
  flow.rx_depth = 64;
  flow.endpoints = endpoints;
  flow.rail_policy = policy;
  flow.stripe_threshold = 8192;
  return flow;
}

std::vector<std::uint32_t> rails_of(const std::vector<LanePlan>& lanes) {
  std::vector<std::uint32_t> rails;
  for (const LanePlan& lane : lanes) rails.push_back(lane.rail);
  return rails;
}

TEST(RailPlans, BindPutsAFlowOnOneRailAndTheNextFlowOnTheNext) {
  const FlowSpec flow = stream(RailPolicy::bind, 2);
  EXPECT_EQ(rails_of(lane_plans(flow, 0, 2)), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_EQ(rails_of(lane_plans(flow, 1, 2)), (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(rails_of(lane_plans(flow, 2, 2)), (std::vector<std::uint32_t>{0, 0}));
  // One rail: the endpoints as they always were.
  EXPECT_EQ(rails_of(lane_plans(flow, 1, 1)), (std::vector<std::uint32_t>{0, 0}));
}

TEST(RailPlans, BindSendsEachDirectionOfABidirectionalFlowOnARailOfItsOwn) {
  FlowSpec flow = stream(RailPolicy::bind, 2);
  flow.direction = Direction::bi;
  const auto lanes = lane_plans(flow, 0, 2);
  ASSERT_EQ(lanes.size(), 4u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(lanes[k].rail, 0u);
    EXPECT_TRUE(lanes[k].initiator_sends);
    EXPECT_FALSE(lanes[k].responder_sends);
    EXPECT_EQ(lanes[k + 2].rail, 1u);
    EXPECT_FALSE(lanes[k + 2].initiator_sends);
    EXPECT_TRUE(lanes[k + 2].responder_sends);
  }
  // Over one rail both directions share the endpoints, as before rails.
  const auto one = lane_plans(flow, 0, 1);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_TRUE(one[0].initiator_sends && one[0].responder_sends);
}

TEST(RailPlans, StripeAndRoundRobinGiveEveryEndpointALaneOnEveryRail) {
  for (const RailPolicy policy : {RailPolicy::stripe, RailPolicy::round_robin}) {
    const auto lanes = lane_plans(stream(policy, 2), 0, 3);
    EXPECT_EQ(rails_of(lanes), (std::vector<std::uint32_t>{0, 1, 2, 0, 1, 2}));
  }
  // A ping-pong stripes too: its turns take a group of lanes at a time.
  FlowSpec latency = stream(RailPolicy::stripe);
  latency.pattern = Pattern::latency;
  latency.window = 1;
  EXPECT_EQ(rails_of(lane_plans(latency, 0, 2)), (std::vector<std::uint32_t>{0, 1}));
}

TestSpec rail_test_of(const FlowSpec& flow, std::vector<std::uint64_t> sizes) {
  TestSpec test;
  test.name = std::string(1, 't');
  test.sizes = std::move(sizes);
  test.duration.iterations = 100;
  test.flows = {flow};
  return test;
}

// A job's pairs that run at once bind from a rail of their own on
// (session::RunSettings::first_rail): the second pair's first flow on rail
// 1, its second flow on the rail after; spreading policies use every rail
// whatever the first.
TEST(RailPlans, APairsFirstRailShiftsWhereItsBoundFlowsGo) {
  TestSpec test = rail_test_of(stream(RailPolicy::bind), {64});
  test.flows.push_back(test.flows.front());
  const auto caps = FakeContext::everything();
  const auto first_rails = [&](std::uint32_t first_rail) {
    std::vector<std::uint32_t> rails;
    for (const FlowPlan& plan : plan_flows(test, caps, 2, first_rail))
      rails.push_back(plan.lanes.at(0).rail);
    return rails;
  };
  EXPECT_EQ(first_rails(0), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(first_rails(1), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(first_rails(2), (std::vector<std::uint32_t>{0, 1}));
  test.flows = {stream(RailPolicy::stripe)};
  EXPECT_EQ(rails_of(plan_flow(test, 0, caps, 2, 1).lanes), (std::vector<std::uint32_t>{0, 1}));
}

TEST(RailPlans, AStripedMessageIsEvenPiecesTheFirstOnesAByteLonger) {
  const FlowPlan plan = plan_flow(rail_test_of(stream(RailPolicy::stripe), {4096, 1000001}), 0,
                                  FakeContext::everything(), 3);
  EXPECT_FALSE(plan.striped_at(8192));  // at the threshold: whole
  EXPECT_TRUE(plan.striped_at(8193));
  EXPECT_EQ(plan.lane_length(0, 1000001), 333334u);
  EXPECT_EQ(plan.lane_length(1, 1000001), 333334u);
  EXPECT_EQ(plan.lane_length(2, 1000001), 333333u);
  EXPECT_EQ(plan.lane_length(2, 4096), 4096u);
  // Below the threshold the first rail carries every message, whole.
  EXPECT_EQ(plan.lane_messages(0, 4096, 100), 100u);
  EXPECT_EQ(plan.lane_messages(1, 4096, 100), 0u);
  EXPECT_EQ(plan.lane_messages(1, 1000001, 100), 100u);
  // A message is done when its every piece is: the fewest of each group.
  EXPECT_EQ(plan.messages_of({10, 9, 9, 5, 7, 6}, 1000001), 9u + 5u);
  EXPECT_EQ(plan.messages_of({10, 0, 0}, 4096), 10u);
}

TEST(RailPlans, RoundRobinSharesAnEndpointsMessagesOutOverTheRails) {
  const FlowPlan plan = plan_flow(rail_test_of(stream(RailPolicy::round_robin), {64}), 0,
                                  FakeContext::everything(), 2);
  EXPECT_EQ(plan.lane_messages(0, 64, 1001), 501u);
  EXPECT_EQ(plan.lane_messages(1, 64, 1001), 500u);
  EXPECT_EQ(plan.lane_messages(1, 64, kUnbounded), kUnbounded);
  EXPECT_EQ(plan.messages_of({501, 500}, 64), 1001u);
}

FlowSpec ping_pong(Op op) {
  FlowSpec latency = stream(RailPolicy::stripe);
  latency.op = op;
  latency.pattern = Pattern::latency;
  latency.window = 1;
  latency.signal_every = 1;
  latency.cq_moderation = 1;
  latency.validate = true;
  return latency;
}

TEST(RailPlans, AStripedPingPongTakesTurnsByGroupsAndSkipsWhatItCannotStripe) {
  FlowSpec latency = ping_pong(Op::send);
  latency.endpoints = 2;
  const FlowPlan plan =
      plan_flow(rail_test_of(latency, {64, 65536}), 0, FakeContext::everything(), 2);
  EXPECT_EQ(plan.skip, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(plan.turn_stride(), 2u);
  EXPECT_EQ(plan.turn_width(64), 1u);
  EXPECT_EQ(plan.turn_width(65536), 2u);
  // 5 iterations over two groups: 3 and 2; below the threshold a group's
  // second rail idles.
  EXPECT_EQ(plan.lane_iterations(0, 65536, 5), 3u);
  EXPECT_EQ(plan.lane_iterations(1, 65536, 5), 3u);
  EXPECT_EQ(plan.lane_iterations(3, 65536, 5), 2u);
  EXPECT_EQ(plan.lane_iterations(1, 64, 5), 0u);
  EXPECT_EQ(plan.lane_iterations(2, 64, 5), 2u);
  const FlowPlan write =
      plan_flow(rail_test_of(ping_pong(Op::write), {64}), 0, FakeContext::everything(), 2);
  EXPECT_NE(write.skip[0].find("over send, write_imm and read"), std::string::npos)
      << write.skip[0];
}

/// Both sides of one flow over two fake rails: a Context per rail on each
/// side, one fabric (each side's n-th connect meets the other's n-th).
struct TwoRails {
  FakeFabric fabric;
  FakeContext initiator0{fabric, FakeContext::everything()};
  FakeContext initiator1{fabric, FakeContext::everything()};
  FakeContext responder0{fabric, FakeContext::everything()};
  FakeContext responder1{fabric, FakeContext::everything()};
  SizeOutcome measured;

  void run(const TestSpec& test, std::uint64_t size) {
    const FlowPlan plan = plan_flow(test, 0, FakeContext::everything(), 2);
    measured = testing::run_both_sides({&initiator0, &initiator1}, plan, {&responder0, &responder1},
                                       plan, size)
                   .measured;
  }
};

TEST(RailRuns, AStripedStreamPutsHalfOfEveryMessageOnEachRailAndValidates) {
  FlowSpec flow = stream(RailPolicy::stripe);
  flow.op = Op::send;
  flow.validate = true;
  TwoRails rails;
  rails.run(rail_test_of(flow, {65537}), 65537);
  EXPECT_EQ(rails.initiator0.counters.requests, 100u);
  EXPECT_EQ(rails.initiator1.counters.requests, 100u);
  EXPECT_EQ(rails.measured.messages, 100u);
  EXPECT_EQ(rails.measured.bytes, 100u * 65537);
  ASSERT_EQ(rails.measured.rails.size(), 2u);
  EXPECT_EQ(rails.measured.rails[0].bytes, 100u * 32769);
  EXPECT_EQ(rails.measured.rails[1].bytes, 100u * 32768);
  EXPECT_EQ(rails.measured.rails[1].requests, 100u);
  EXPECT_EQ(rails.measured.corrupted_bytes, 0u);
}

// A timed stripe whose second rail lags (only every 7th poll of it finds
// completions) still ends with every message whole:
// both rails stop at the same count, where the lane furthest ahead stopped.
TEST(RailRuns, ATimedStripeStopsEveryRailAtTheSameMessage) {
  FlowSpec flow = stream(RailPolicy::stripe);
  TestSpec test = rail_test_of(flow, {65536});
  test.duration.seconds = 0.2;
  TwoRails rails;
  rails.initiator1.poll_every = 7;
  rails.run(test, 65536);
  ASSERT_EQ(rails.measured.rails.size(), 2u);
  EXPECT_GT(rails.measured.messages, 0u);
  EXPECT_EQ(rails.measured.rails[0].requests, rails.measured.rails[1].requests);
  EXPECT_EQ(rails.measured.rails[0].bytes, rails.measured.rails[1].bytes);
  EXPECT_EQ(rails.measured.bytes, rails.measured.messages * 65536);
}

TEST(RailRuns, BelowTheThresholdAStripedStreamUsesTheFirstRailAlone) {
  TwoRails rails;
  rails.run(rail_test_of(stream(RailPolicy::stripe), {4096}), 4096);
  EXPECT_EQ(rails.initiator0.counters.requests, 100u);
  EXPECT_EQ(rails.initiator1.counters.requests, 0u);
  EXPECT_EQ(rails.measured.bytes, 100u * 4096);
  EXPECT_EQ(rails.measured.rails[1].bytes, 0u);
}

TEST(RailRuns, AStripedPingPongSendsAPiecePerRailAndWaitsForEveryEcho) {
  TwoRails rails;
  rails.run(rail_test_of(ping_pong(Op::send), {65537}), 65537);
  for (const FakeContext* side :
       {&rails.initiator0, &rails.initiator1, &rails.responder0, &rails.responder1})
    EXPECT_EQ(side->counters.requests, 100u);
  EXPECT_EQ(rails.measured.iterations, 100u);
  EXPECT_EQ(rails.measured.latency.count(), 100u);
  EXPECT_EQ(rails.measured.bytes, 100u * 65537);
  EXPECT_EQ(rails.measured.rails[0].bytes, 100u * 32769);
  EXPECT_EQ(rails.measured.rails[1].bytes, 100u * 32768);
  EXPECT_EQ(rails.measured.corrupted_bytes, 0u);
  // Below the threshold the first rail alone carries the ping-pong.
  TwoRails small;
  small.run(rail_test_of(ping_pong(Op::send), {64}), 64);
  EXPECT_EQ(small.initiator0.counters.requests, 100u);
  EXPECT_EQ(small.initiator1.counters.requests, 0u);
  EXPECT_EQ(small.measured.latency.count(), 100u);
}

TEST(RailRuns, EachRailKeepsTheLatencySamplesItTookPartIn) {
  // Alternating: every other iteration on each rail.
  FlowSpec alternating = ping_pong(Op::send);
  alternating.rail_policy = RailPolicy::round_robin;
  TwoRails round_robin;
  round_robin.run(rail_test_of(alternating, {64}), 64);
  ASSERT_EQ(round_robin.measured.rails.size(), 2u);
  EXPECT_EQ(round_robin.measured.rails[0].latency.count(), 50u);
  EXPECT_EQ(round_robin.measured.rails[1].latency.count(), 50u);
  EXPECT_EQ(round_robin.measured.latency.count(), 100u);
  // Striped: every rail carries a piece of every message above the
  // threshold, and below it the first rail alone carries them.
  TwoRails striped;
  striped.run(rail_test_of(ping_pong(Op::send), {65536}), 65536);
  EXPECT_EQ(striped.measured.rails[0].latency.count(), 100u);
  EXPECT_EQ(striped.measured.rails[1].latency.count(), 100u);
  TwoRails small;
  small.run(rail_test_of(ping_pong(Op::send), {64}), 64);
  EXPECT_EQ(small.measured.rails[0].latency.count(), 100u);
  EXPECT_EQ(small.measured.rails[1].latency.count(), 0u);
  // A stream keeps no samples, on any rail.
  TwoRails stream_rails;
  stream_rails.run(rail_test_of(stream(RailPolicy::round_robin), {64}), 64);
  EXPECT_TRUE(stream_rails.measured.rails[0].latency.empty());
}

TEST(RailRuns, AStripedReadPostsAPiecePerRail) {
  TwoRails rails;
  rails.run(rail_test_of(ping_pong(Op::read), {65536}), 65536);
  EXPECT_EQ(rails.initiator0.counters.requests, 100u);
  EXPECT_EQ(rails.initiator1.counters.requests, 100u);
  EXPECT_EQ(rails.responder0.counters.requests, 0u);
  EXPECT_EQ(rails.measured.latency.count(), 100u);
  EXPECT_EQ(rails.measured.corrupted_bytes, 0u);
}

TEST(RailRuns, RoundRobinAlternatesWholeMessages) {
  TwoRails rails;
  rails.run(rail_test_of(stream(RailPolicy::round_robin), {64}), 64);
  EXPECT_EQ(rails.initiator0.counters.requests, 50u);
  EXPECT_EQ(rails.initiator1.counters.requests, 50u);
  EXPECT_EQ(rails.measured.messages, 100u);
  EXPECT_EQ(rails.measured.rails[0].bytes, 50u * 64);
}

TEST(RailRuns, ABoundBidirectionalFlowSendsEachDirectionOnItsOwnRail) {
  FlowSpec flow = stream(RailPolicy::bind);
  flow.op = Op::send;
  flow.direction = Direction::bi;
  flow.validate = true;
  TwoRails rails;
  rails.run(rail_test_of(flow, {1024}), 1024);
  EXPECT_EQ(rails.initiator0.counters.requests, 100u);  // its direction
  EXPECT_EQ(rails.initiator1.counters.requests, 0u);
  EXPECT_EQ(rails.responder0.counters.requests, 0u);
  EXPECT_EQ(rails.responder1.counters.requests, 100u);  // the other
  EXPECT_EQ(rails.measured.messages, 200u);
  EXPECT_EQ(rails.measured.bytes, 200u * 1024);
  EXPECT_EQ(rails.measured.rails[0].bytes, 100u * 1024);
  EXPECT_EQ(rails.measured.rails[1].bytes, 100u * 1024);
  EXPECT_EQ(rails.measured.corrupted_bytes, 0u);
}

}  // namespace
}  // namespace uniperf::engine

namespace uniperf::suite {
namespace {

TEST(RailConfigs, EachRailIsItsOptionsOverTheConfigs) {
  const model::ConfigSpec config = parse_config(
      "plugin: verbs\noptions: {port: 1, gid_index: 1}\nrails:\n"
      "  - {device: mlx5_0}\n  - {device: mlx5_1, port: 2}\n",
      "two.yaml");
  ASSERT_EQ(config.rail_count(), 2u);
  const model::ConfigSpec second = config.rail(1);
  EXPECT_EQ(second.options.at("device"), "mlx5_1");
  EXPECT_EQ(second.options.at("port"), "2");
  EXPECT_EQ(second.options.at("gid_index"), "1");
  EXPECT_EQ(second.option_lines.at("port"), 5u);
  EXPECT_TRUE(second.rails.empty());
  EXPECT_EQ(config.rail(0).options.at("port"), "1");
  EXPECT_EQ(parse_config("plugin: tcp\n", "one.yaml").rail_count(), 1u);
}

TEST(RailConfigs, BadRailsAreRefusedNamingFileLineAndKey) {
  const auto refused = [](const std::string& text) -> std::string {
    try {
      parse_config(text, "bad.yaml");
    } catch (const SpecError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string one = refused("plugin: tcp\nrails:\n  - {nodelay: true}\n");
  EXPECT_NE(one.find("bad.yaml:"), std::string::npos) << one;
  EXPECT_NE(one.find("rails: a list of two or more"), std::string::npos) << one;
  EXPECT_NE(refused("plugin: tcp\nrails: [a, b]\n").find("bad.yaml:2: rails[0]"), std::string::npos)
      << refused("plugin: tcp\nrails: [a, b]\n");
  EXPECT_NE(refused("plugin: tcp\nrails:\n  - {}\n  - {nodelay: true}\n").find("rails[0]"),
            std::string::npos);
  // A rail's options are the plugin's: checked as the config's are.
  const model::ConfigSpec typo =
      parse_config("plugin: tcp\nrails:\n  - {nodelay: true}\n  - {nodlay: true}\n", "typo.yaml");
  const std::vector<OptionSpec> specs = {{"nodelay", OptionType::boolean, "true", "Nagle"}};
  try {
    validate_rails(typo, specs);
    ADD_FAILURE() << "a rail's unknown option was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("typo.yaml:4: options.nodlay"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace uniperf::suite
