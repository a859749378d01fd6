// The engine's rules on their own: the signal / window / replenish policies
// the lanes apply, the plan built from a test and a plugin's capabilities,
// and the encoding of the peer protocol.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <thread>
#include <vector>

#include "engine/clock.hpp"
#include "engine/lane.hpp"
#include "engine/peer_protocol.hpp"
#include "engine/plan.hpp"
#include "fake_transport.hpp"
#include "model/latency_distribution.hpp"

namespace uniperf::engine {
namespace {

TEST(EngineRules, SignalEveryNthAndAlwaysTheEndOfABurst) {
  std::uint32_t countdown = 4;
  std::vector<int> signaled;
  for (int id = 0; id < 10; ++id) {
    if (policy::take_signal(countdown, 4, id == 9)) signaled.push_back(id);
  }
  EXPECT_EQ(signaled, (std::vector<int>{3, 7, 9}));
  // Every post signaled when signal_every is 1.
  countdown = 1;
  for (int id = 0; id < 5; ++id) EXPECT_TRUE(policy::take_signal(countdown, 1, false));
}

TEST(EngineRules, WindowAndSendQueueLimits) {
  // A chain of 4 fits while posted + 4 - completed <= window.
  EXPECT_TRUE(policy::window_has_room(12, 0, 4, 16));
  EXPECT_FALSE(policy::window_has_room(13, 0, 4, 16));
  EXPECT_TRUE(policy::window_has_room(13, 1, 4, 16));
  EXPECT_TRUE(policy::send_queue_has_room(16, 0, 1, 17));
  EXPECT_FALSE(policy::send_queue_has_room(17, 0, 1, 17));
}

TEST(EngineRules, ReceivesAreReplenishedInWholeBatches) {
  EXPECT_FALSE(policy::replenish_due(7, 8));
  EXPECT_TRUE(policy::replenish_due(8, 8));
  EXPECT_TRUE(policy::replenish_due(1, 1));
}

TEST(EngineRules, PhaseLengths) {
  EXPECT_EQ(policy::whole_windows(1001, 16), 1008u);
  EXPECT_EQ(policy::whole_windows(1008, 16), 1008u);
  EXPECT_EQ(policy::whole_windows(kUnbounded, 16), kUnbounded);
  // 10 iterations over 3 endpoints: 4, 3, 3.
  EXPECT_EQ(policy::latency_share(10, 3, 0), 4u);
  EXPECT_EQ(policy::latency_share(10, 3, 1), 3u);
  EXPECT_EQ(policy::latency_share(10, 3, 2), 3u);
  EXPECT_EQ(policy::latency_share(kUnbounded, 3, 2), kUnbounded);
  // Duration mode stops at the next signaled request.
  EXPECT_EQ(policy::stop_after_signal(13, 8), 16u);
  EXPECT_EQ(policy::stop_after_signal(16, 8), 16u);
}

TEST(EngineRules, DeadlinesNeverWrap) {
  constexpr Ticks kNever = std::numeric_limits<Ticks>::max();
  EXPECT_EQ(deadline_after(1000, 0), kNever);
  EXPECT_EQ(deadline_after(1000, 1e30), kNever);  // would overflow the clock
  EXPECT_EQ(deadline_after(kNever - 5, 1.0), kNever);
  const Ticks start = now();
  const Ticks one_second = deadline_after(start, 1.0);
  EXPECT_GT(one_second, start);
  EXPECT_NEAR(ticks_to_us(one_second - start), 1e6, 1.0);
}

// The calibrated clock against the kernel's over a known sleep: the same
// interval measured twice, so the sleep's own length (longer on a loaded
// machine) does not matter, only the rate.
TEST(EngineClock, TheCalibratedRateAgreesWithTheKernelsClockOverASleep) {
  const auto raw_us = [] {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
  };
  const ClockInfo& clock = clock_info();
  EXPECT_GT(clock.ticks_per_us, 0.0);
  EXPECT_GT(clock.read_ns, 0.0);
  EXPECT_LT(clock.read_ns, 10'000.0);  // a reading is not a sleep
  const double raw_start = raw_us();
  const Ticks start = now();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Ticks end = now();
  const double raw_end = raw_us();
  const double kernel_us = raw_end - raw_start;
  // The two pairs of reads bracket each other within a few microseconds,
  // unless preempted between them: 0.5% of 300 ms is 1.5 ms of slack.
  EXPECT_NEAR(ticks_to_us(end - start), kernel_us, 0.005 * kernel_us);

  // Past a second of the process's life, the rate over all of it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const double lifetime = lifetime_ticks_per_us();
  EXPECT_NE(lifetime, clock.ticks_per_us);  // measured, not the calibration's
  EXPECT_NEAR(static_cast<double>(end - start) / lifetime, kernel_us, 0.005 * kernel_us);
}

// A latency phase keeps 2^20 samples exactly, then folds them; a flow that
// keeps its samples for the file, or runs beside others (its percentiles
// while all ran need them in order), keeps 2^24.
TEST(EnginePlan, FlowsThatNeedTheirSamplesInOrderKeepMoreOfThemExactly) {
  TestSpec test;
  test.name = "t";
  test.sizes = {8};
  test.flows = {FlowSpec{}};
  const Capabilities caps = testing::FakeContext::everything();
  EXPECT_EQ(plan_flow(test, 0, caps).exact_samples, model::LatencyDistribution::kDefaultExactLimit);
  EXPECT_EQ(plan_flow(test, 0, caps).latency_segment, kLatencySegment);
  test.flows[0].keep_samples = true;
  EXPECT_EQ(plan_flow(test, 0, caps).exact_samples, kKeptSamplesLimit);
  test.flows = {FlowSpec{}, FlowSpec{}};
  EXPECT_EQ(plan_flow(test, 1, caps).exact_samples, kKeptSamplesLimit);
}

TEST(EnginePlan, BuffersHoldTheLargestSizeInAPowerOfTwoOfSlots) {
  FlowSpec flow;
  flow.window = 12;
  const BufferGeometry g = buffer_geometry(flow, 1000);
  EXPECT_EQ(g.slot_size, 1024u);  // rounded up to a cache line
  EXPECT_EQ(g.slots, 8u);         // bit_floor(12)
  EXPECT_EQ(g.rx_base, 8u * 1024);
  EXPECT_EQ(g.lane_bytes % 4096, 0u);
  EXPECT_GE(g.lane_bytes, 2u * 8 * 1024);
  EXPECT_EQ(g.send_depth, 13u);

  // Atomics: a target word per request that can be in flight.
  flow.op = Op::fetch_add;
  flow.window = 16;
  flow.signal_every = 32;
  EXPECT_EQ(buffer_geometry(flow, 8).slots, 64u);  // bit_ceil(32 + 1)

  // Huge messages: fewer slots, never fewer than two.
  flow = FlowSpec{};
  flow.window = 16;
  EXPECT_EQ(buffer_geometry(flow, std::uint64_t{64} << 20).slots, 2u);
}

TEST(EnginePlan, PlannedOncePerFlowWithSkipsPerSize) {
  Capabilities caps = testing::FakeContext::everything();
  caps.max_message = 1024;
  caps.selective_completion = Support::emulated;
  TestSpec test;
  test.sizes = {64, 4096};
  FlowSpec first;
  first.inline_size = 1000;  // clamped to the plugin's max_inline
  first.signal_every = 4;
  FlowSpec second;
  second.op = Op::read;
  test.flows = {first, second};

  const std::vector<FlowPlan> plans = plan_flows(test, caps);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].flow.inline_size, caps.max_inline);
  EXPECT_EQ(plans[0].emulated, std::vector<std::string>{"selective_completion"});
  EXPECT_EQ(plans[0].max_size, 4096u);
  EXPECT_TRUE(plans[0].runs_at(0));
  EXPECT_FALSE(plans[0].runs_at(1));
  EXPECT_EQ(skip_reason(plans, 0), "");
  EXPECT_EQ(skip_reason(plans, 1).rfind("flow 1: size 4096 exceeds", 0), 0u);

  caps.set(Op::read, Support::none);
  const std::vector<FlowPlan> no_read = plan_flows(test, caps);
  EXPECT_EQ(skip_reason(no_read, 0), "flow 2: plugin does not support op read");
  // One flow: the reason is not numbered.
  test.flows = {second};
  EXPECT_EQ(skip_reason(plan_flows(test, caps), 0), "plugin does not support op read");
}

TEST(EnginePlan, QueuesDeeperThanThePluginsAreSkippedNamingTheKnob) {
  Capabilities caps = testing::FakeContext::everything();
  caps.max_send_depth = 256;
  caps.max_recv_depth = 256;
  FlowSpec flow;
  flow.pattern = Pattern::bandwidth;
  flow.window = 128;
  flow.signal_every = 64;
  flow.rx_depth = 256;
  EXPECT_EQ(skip_reason(flow, caps, 64), "");

  // rx_depth: only where the flow posts receives.
  flow.rx_depth = 512;
  EXPECT_EQ(skip_reason(flow, caps, 64),
            "rx_depth 512 exceeds the plugin's receive queue of 256 (max_recv_depth)");
  FlowSpec write = flow;
  write.op = Op::write;
  EXPECT_EQ(skip_reason(write, caps, 64), "");
  write.window_mode = WindowMode::window_ack;  // the acks are receives
  EXPECT_NE(skip_reason(write, caps, 64).find("rx_depth 512"), std::string::npos);
  FlowSpec write_latency;
  write_latency.op = Op::write;
  write_latency.pattern = Pattern::latency;
  write_latency.window = 1;
  write_latency.rx_depth = 512;
  EXPECT_NE(skip_reason(write_latency, caps, 64).find("rx_depth 512"), std::string::npos);

  // The send queue holds the window (or a longer signaling period or
  // chain) plus a window ack.
  flow.rx_depth = 64;
  flow.window = 255;
  EXPECT_EQ(skip_reason(flow, caps, 64), "");
  flow.window = 256;
  EXPECT_EQ(skip_reason(flow, caps, 64),
            "window 256 needs 257 requests outstanding per endpoint, more than the plugin's "
            "send queue of 256 (max_send_depth)");
  FlowSpec latency;
  latency.pattern = Pattern::latency;
  latency.window = 1;
  latency.signal_every = 300;  // latency may signal less often than the window
  latency.rx_depth = 64;
  EXPECT_EQ(skip_reason(latency, caps, 2).rfind("signal_every 300 needs 301 requests", 0), 0u);

  // 0 is unbounded.
  caps.max_send_depth = 0;
  caps.max_recv_depth = 0;
  flow.rx_depth = 1u << 20;
  EXPECT_EQ(skip_reason(flow, caps, 64), "");

  // Every size of the plan says so, and a flow that posts no receives
  // asks for no more of them than the plugin has.
  caps.max_recv_depth = 256;
  TestSpec test;
  test.sizes = {64, 4096};
  test.flows = {flow};
  FlowPlan plan = plan_flow(test, 0, caps);
  EXPECT_FALSE(plan.runs_at(0));
  EXPECT_FALSE(plan.runs_at(1));
  test.flows = {write};
  test.flows[0].window_mode = WindowMode::streaming;
  plan = plan_flow(test, 0, caps);
  EXPECT_TRUE(plan.runs_at(0));
  EXPECT_EQ(plan.recv_depth, 256u);
  EXPECT_EQ(plan.buffers.send_depth, 129u);  // window 128 + a window ack
}

TEST(PeerProtocol, MessagesRoundTrip) {
  const RegionAdvert region{0x7f0000001000, 1 << 20, Bytes{std::byte{1}, std::byte{2}}};
  const RegionAdvert region_back = decode_region(encode(region));
  EXPECT_EQ(region_back.address, region.address);
  EXPECT_EQ(region_back.length, region.length);
  EXPECT_EQ(region_back.key, region.key);

  const PhaseDone done{{1001, 0, 7}, 0.25, 64064};
  const PhaseDone done_back = decode_done(encode(done));
  EXPECT_EQ(done_back.posted, done.posted);
  EXPECT_EQ(done_back.seconds, done.seconds);
  EXPECT_EQ(done_back.bytes, done.bytes);

  EXPECT_EQ(decode_corrupted(encode_corrupted(12345)), 12345u);
  EXPECT_EQ(decode_delivered(encode_delivered(999)), 999u);
  // The two counts are distinct messages: one is never taken for the other.
  EXPECT_THROW(decode_delivered(encode_corrupted(1)), ProtocolError);

  const CpuUse cpu{.user_s = 1.5, .system_s = 0.25, .seconds = 2};
  const CpuUse cpu_back = decode_cpu(encode(cpu));
  EXPECT_EQ(cpu_back.user_s, 1.5);
  EXPECT_EQ(cpu_back.system_s, 0.25);
  EXPECT_EQ(cpu_back.seconds, 2);
  EXPECT_THROW(decode_cpu(encode_delivered(1)), ProtocolError);

  EXPECT_EQ(decode_placing(encode_placing(0.125)), 0.125);
  EXPECT_THROW(decode_placing(encode_placing(-1)), ProtocolError);
  EXPECT_THROW(decode_placing(encode_delivered(1)), ProtocolError);

  EXPECT_NO_THROW(decode_settled(encode_settled()));
  EXPECT_THROW(decode_settled(encode_delivered(1)), ProtocolError);
  std::vector<std::byte> longer = encode_settled();
  longer.push_back(std::byte{0});
  EXPECT_THROW(decode_settled(longer), ProtocolError);
}

// The kernel's accounting, read around an interval: a thread that spins
// shows its CPU, one that sleeps shows (almost) none, whatever the load.
TEST(CpuMeter, CountsTheCpuOfASpinAndNotASleep) {
  const CpuMeter spin;
  volatile std::uint64_t sink = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  CpuUse spun;
  do {
    for (int k = 0; k < 100000; ++k) sink = sink + k;
    spun = spin.elapsed();
  } while (spun.user_s + spun.system_s < 0.05 && std::chrono::steady_clock::now() < give_up);
  EXPECT_GE(spun.user_s + spun.system_s, 0.05);
  // One thread cannot use more CPU than the wall time (the accounting's
  // granularity aside).
  EXPECT_LE(spun.user_s + spun.system_s, spun.seconds + 0.02);
  EXPECT_GT(spun.cpus_used(), 0.0);

  const CpuMeter nap;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const CpuUse slept = nap.elapsed();
  EXPECT_GE(slept.seconds, 0.2);
  EXPECT_LT(slept.user_s + slept.system_s, 0.1);
}

TEST(PeerProtocol, UnexpectedMessagesAreProtocolErrors) {
  const auto expect_error = [](auto&& decode, std::vector<std::byte> bytes, const char* what) {
    try {
      decode(bytes);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const ProtocolError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const auto done = [](const std::vector<std::byte>& b) { return decode_done(b); };
  // A region where the end of a phase was expected.
  expect_error(done, encode(RegionAdvert{}),
               "expected the peer's end-of-phase message, got a "
               "message of kind 1");
  std::vector<std::byte> cut = encode(PhaseDone{{1, 2}, 0, 0});
  cut.pop_back();
  expect_error(done, cut, "cut short");
  // A count the message does not hold is refused before anything is
  // allocated for it (here 2^32 - 1 endpoints: 32 GiB).
  std::vector<std::byte> huge = encode(PhaseDone{});
  for (std::size_t i = huge.size() - 4; i < huge.size(); ++i) huge[i] = std::byte{0xff};
  expect_error(done, huge, "cut short");
  std::vector<std::byte> longer = encode(PhaseDone{});
  longer.push_back(std::byte{0});
  expect_error(done, longer, "1 bytes too many");
  expect_error([](const std::vector<std::byte>& b) { return decode_corrupted(b); }, {},
               "an empty message");
}

TEST(PeerProtocol, PeerPostedIsZeroUntilTheEndOfPhaseArrives) {
  auto [a, b] = bootstrap::make_in_process_pair();
  PeerLink sender(*a), receiver(*b);
  EXPECT_FALSE(receiver.done_received());
  EXPECT_EQ(receiver.peer_posted(0), 0u);
  sender.send_done({{5, 6}, 0, 0});
  receiver.receive_done();
  EXPECT_TRUE(receiver.done_received());
  EXPECT_EQ(receiver.peer_posted(1), 6u);
  EXPECT_EQ(receiver.peer_posted(2), 0u);  // no such endpoint
  receiver.forget_done();
  EXPECT_EQ(receiver.peer_posted(0), 0u);
}

}  // namespace
}  // namespace uniperf::engine
