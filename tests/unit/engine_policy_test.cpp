// The engine's test semantics, checked against the fake transport with exact
// counts: signaled posts, window depth, receive-queue replenish, acks,
// samples, validation. Both sides run in one process on two threads.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "both_sides.hpp"
#include "engine/runner.hpp"
#include "fake_transport.hpp"

namespace uniperf::engine {
namespace {

using testing::BothSides;
using testing::FakeContext;
using testing::FakeFabric;

TestSpec make_test(Op op, Pattern pattern, std::uint64_t iterations, std::uint32_t window = 1,
                   std::uint32_t signal_every = 1) {
  TestSpec test;
  // Moved in, not copied from a literal: GCC 12 at -O3 takes the literal's
  // copy, inlined into a caller, for an overlapping one (-Wrestrict, GCC
  // bug 105329).
  test.name = std::string(1, 't');
  test.sizes = {64};
  test.duration.iterations = iterations;
  test.duration.warmup_iterations = 0;
  FlowSpec flow;
  flow.op = op;
  flow.pattern = pattern;
  flow.window = window;
  flow.signal_every = signal_every;
  flow.cq_moderation = 4;
  flow.rx_depth = 64;
  flow.rx_replenish = 1;
  test.flows = {flow};
  return test;
}

struct PairRun {
  FakeFabric fabric;
  FakeContext initiator{fabric, FakeContext::everything()};
  FakeContext responder{fabric, FakeContext::everything()};
  SizeOutcome measured;
  SizeOutcome served;

  explicit PairRun(Capabilities caps = FakeContext::everything())
      : initiator(fabric, caps), responder(fabric, caps) {}

  /// Runs `size`, which must be one of test.sizes (buffers are sized for
  /// them), on both sides' plans as `adjust` leaves them.
  /// With `give_up`, a stall past it throws engine::Aborted (both_sides.hpp).
  void run(
      const TestSpec& test, std::uint64_t size,
      const std::function<void(FlowPlan&)>& adjust = [](FlowPlan&) {},
      std::chrono::seconds give_up = std::chrono::seconds(0)) {
    const auto plan = [&](const FakeContext& side) {
      FlowPlan p = plan_flow(test, 0, side.capabilities());
      adjust(p);
      return p;
    };
    BothSides both = testing::run_both_sides({&initiator}, plan(initiator), {&responder},
                                             plan(responder), size, give_up);
    measured = std::move(both.measured);
    served = std::move(both.served);
  }
};

TEST(EnginePolicy, StreamingSignalsEveryNthAndTheLastPost) {
  PairRun pair;
  pair.run(make_test(Op::write, Pattern::bandwidth, 1001, 16, 8), 64);
  const auto& c = pair.initiator.counters;
  EXPECT_EQ(c.requests, 1001u);
  EXPECT_EQ(c.signaled, 1000u / 8 + 1);  // every 8th, plus the last one
  EXPECT_EQ(c.max_outstanding, 16u);     // the window is filled, never exceeded
  EXPECT_EQ(pair.measured.messages, 1001u);
  EXPECT_EQ(pair.measured.bytes, 1001u * 64);
  EXPECT_GT(pair.measured.seconds, 0.0);
  EXPECT_EQ(pair.responder.counters.requests, 0u);  // a one-sided test: the target posts nothing
}

TEST(EnginePolicy, WarmupRunsBeforeTheMeasuredIterations) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 100, 8, 4);
  test.duration.warmup_iterations = 20;
  pair.run(test, 64);
  EXPECT_EQ(pair.initiator.counters.requests, 120u);
  EXPECT_EQ(pair.initiator.counters.signaled, 30u);
  EXPECT_EQ(pair.measured.messages, 100u);  // only the measured phase counts
}

TEST(EnginePolicy, DurationMarginIsCutAtBothEnds) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 0, 16, 8);
  test.duration.seconds = 0.9;
  test.duration.margin = 0.3;
  pair.run(test, 64);
  // Traffic ran in both margins as well, and only the middle 0.3 s counted
  // (0.9 s before; the bound leaves room for a loaded machine).
  EXPECT_GT(pair.measured.seconds, 0.29);
  EXPECT_LT(pair.measured.seconds, 0.75);
  EXPECT_GT(pair.initiator.counters.requests, pair.measured.messages);
}

TEST(EnginePolicy, LatencyWarmupKeepsNoSamples) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::latency, 100);
  test.duration.warmup_iterations = 1000;
  pair.run(test, 64);
  EXPECT_EQ(pair.initiator.counters.requests, 1100u);
  EXPECT_EQ(pair.measured.latency.count(), 100u);  // the warm-up's were never stored
  EXPECT_EQ(pair.measured.iterations, 100u);
}

TEST(EnginePolicy, BuffersCycleThroughWindowSlotsOrReuseOne) {
  for (const BufferMode mode : {BufferMode::cycle, BufferMode::single}) {
    SCOPED_TRACE(std::string(to_string(mode)));
    PairRun pair;
    TestSpec test = make_test(Op::send, Pattern::bandwidth, 64, 8, 4);
    test.flows[0].buffers = mode;
    test.flows[0].validate = true;
    pair.run(test, 64);
    const std::size_t expected = mode == BufferMode::cycle ? 8 : 1;
    EXPECT_EQ(pair.initiator.counters.source_offsets.size(), expected);
    EXPECT_EQ(pair.responder.counters.receive_offsets.size(), expected);
    EXPECT_EQ(pair.measured.corrupted_bytes, 0u);
  }
}

TEST(EnginePolicy, UntouchedSendBuffersCarryWhatTheAllocationHeldNotThePattern) {
  for (const Op op : {Op::send, Op::write}) {
    for (const SendBuffers buffers : {SendBuffers::pattern, SendBuffers::untouched}) {
      SCOPED_TRACE(std::string(to_string(op)) + ", " + std::string(to_string(buffers)));
      PairRun pair;
      TestSpec test = make_test(op, Pattern::bandwidth, 64, 8, 4);
      test.sizes = {4096};
      test.flows[0].send_buffers = buffers;
      pair.run(test, 4096);
      ASSERT_EQ(pair.measured.iterations, 64u);
      if (buffers == SendBuffers::pattern) {
        EXPECT_GT(pair.initiator.counters.nonzero_payload_bytes, 64u * 4096 / 2);
      } else {
        EXPECT_EQ(pair.initiator.counters.nonzero_payload_bytes, 0u);
      }
    }
  }
}

TEST(EnginePolicy, PostListChainsRequestsPerPostCall) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 64, 16, 8);
  test.flows[0].post_list = 4;
  pair.run(test, 64);
  EXPECT_EQ(pair.initiator.counters.posts, 16u);
  EXPECT_EQ(pair.initiator.counters.max_chain, 4u);
  EXPECT_EQ(pair.initiator.counters.signaled, 8u);
}

TEST(EnginePolicy, ReceivesArePrepostedAndReplenishedInBatches) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::bandwidth, 200, 16, 8);
  test.flows[0].rx_depth = 32;
  test.flows[0].rx_replenish = 8;
  pair.run(test, 64);
  const auto& r = pair.responder.counters;
  ASSERT_FALSE(r.recv_batches.empty());
  EXPECT_EQ(r.recv_batches.front(), 32u);  // the pre-post fills the receive queue
  for (std::size_t i = 1; i < r.recv_batches.size(); ++i) EXPECT_EQ(r.recv_batches[i], 8u) << i;
  EXPECT_EQ(r.receives_posted, 32u + 200u / 8 * 8);  // one batch per 8 consumed
  EXPECT_EQ(r.max_recv_level, 32u);                  // never above rx_depth
  EXPECT_EQ(pair.responder.last_params.recv_depth, 32u);
}

TEST(EnginePolicy, WindowAckWaitsForEveryWindowAndItsAck) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::bandwidth, 150, 16, 16);
  test.flows[0].window_mode = WindowMode::window_ack;
  pair.run(test, 64);
  // 150 rounds up to whole windows: 10 windows of 16, one ack each.
  EXPECT_EQ(pair.initiator.counters.requests, 160u);
  EXPECT_EQ(pair.initiator.counters.signaled, 10u);
  EXPECT_EQ(pair.initiator.counters.max_outstanding, 16u);
  EXPECT_EQ(pair.responder.counters.ops[Op::send], 10u);
  EXPECT_EQ(pair.measured.messages, 160u);
}

TEST(EnginePolicy, SendLatencyKeepsOneSamplePerIteration) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::latency, 500);
  test.duration.warmup_iterations = 50;
  pair.run(test, 64);
  EXPECT_EQ(pair.measured.latency.count(), 500u);
  EXPECT_TRUE(pair.measured.one_way);
  EXPECT_EQ(pair.initiator.counters.requests, 550u);
  EXPECT_EQ(pair.responder.counters.requests, 550u);  // one echo per ping
  for (double sample : pair.measured.latency.kept()) ASSERT_GT(sample, 0.0);
}

// A ping-pong rewrites its next post while it waits for the peer and posts
// it when its turn comes (the last one rewritten is never posted). What is
// signaled follows the posts made: in each phase every 4th and its last,
// so 12 + 1 of the warm-up's 50 and 25 + 1 of the measured 101.
TEST(EnginePolicy, APingPongSignalsEveryNthPostAndEachPhasesLast) {
  for (const Op op : {Op::send, Op::write}) {
    SCOPED_TRACE(std::string(to_string(op)));
    PairRun pair;
    TestSpec test = make_test(op, Pattern::latency, 101, 1, 4);
    test.duration.warmup_iterations = 50;
    pair.run(test, 64);
    EXPECT_EQ(pair.initiator.counters.requests, 151u);
    EXPECT_EQ(pair.responder.counters.requests, 151u);
    EXPECT_EQ(pair.initiator.counters.signaled, 39u);
    EXPECT_EQ(pair.responder.counters.signaled, 39u);
    EXPECT_EQ(pair.measured.latency.count(), 101u);
  }
}

// A latency phase runs in segments whose samples are added between them,
// and keeps the samples exactly up to a bound, then folded: here with a
// segment of 1000 iterations and 2500 samples kept exactly.
TEST(EnginePolicy, LatencyPhasesLongerThanASegmentLoseNoIteration) {
  const auto small = [](FlowPlan& plan) {
    plan.latency_segment = 1000;
    plan.exact_samples = 2500;
  };
  for (const Op op : {Op::send, Op::write, Op::read}) {
    PairRun pair;
    pair.run(make_test(op, Pattern::latency, 4321), 64, small);
    const model::LatencyDistribution& latency = pair.measured.latency;
    EXPECT_EQ(latency.count(), 4321u) << to_string(op);
    EXPECT_EQ(pair.measured.iterations, 4321u);
    EXPECT_EQ(pair.initiator.counters.requests, 4321u);
    EXPECT_TRUE(latency.folded());
    EXPECT_EQ(latency.kept().size(), 2500u);
    EXPECT_GT(latency.min(), 0.0);
    EXPECT_GT(pair.measured.seconds, 0.0);
    EXPECT_GT(pair.measured.finished, pair.measured.started);
    // Where the second and third segments resumed, for the kept samples
    // (the fourth begins past the 2500 kept).
    const auto& resumes = pair.measured.latency_resumes_us;
    ASSERT_EQ(resumes.size(), 2u) << to_string(op);
    EXPECT_EQ(resumes[0].first, 1000u);
    EXPECT_EQ(resumes[1].first, 2000u);
    EXPECT_GT(resumes[0].second, 0.0);
    EXPECT_GT(resumes[1].second, resumes[0].second);
  }

  // Over three endpoints, which take turns: a segment is whole turns (999
  // here), so the next begins where the responder expects it.
  for (const Op op : {Op::send, Op::write}) {
    PairRun turns;
    TestSpec test = make_test(op, Pattern::latency, 4321);
    test.flows[0].endpoints = 3;
    turns.run(test, 64, small);
    EXPECT_EQ(turns.measured.latency.count(), 4321u) << to_string(op);
    EXPECT_EQ(turns.responder.counters.requests, 4321u) << to_string(op);
  }

  // Duration mode: segments until the time is up; the responder echoes
  // every ping of every segment. Segments of 16, so that even a loaded
  // machine, where a round trip between two threads may wait for a time
  // slice, runs several in 0.3 s.
  PairRun timed;
  TestSpec test = make_test(Op::send, Pattern::latency, 0);
  test.duration.seconds = 0.3;
  timed.run(test, 64, [](FlowPlan& plan) { plan.latency_segment = 16; });
  EXPECT_GT(timed.measured.latency.count(), 16u);
  EXPECT_EQ(timed.measured.latency.count(), timed.initiator.counters.requests);
  EXPECT_EQ(timed.responder.counters.requests, timed.initiator.counters.requests);

  // With a gap, each kept sample keeps where its iteration began, in order.
  PairRun gapped;
  test = make_test(Op::send, Pattern::latency, 3000);
  test.flows[0].latency_gap = 1e-6;
  gapped.run(test, 64, small);
  const auto& begins = gapped.measured.latency_begins_us;
  ASSERT_EQ(begins.size(), 2500u);
  EXPECT_EQ(begins.front(), 0.0);
  EXPECT_TRUE(std::is_sorted(begins.begin(), begins.end()));
  EXPECT_EQ(gapped.measured.latency.count(), 3000u);
}

TEST(EnginePolicy, WriteLatencyPollsTheLastByteAndValidates) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::latency, 300);
  test.duration.warmup_iterations = 10;
  test.flows[0].validate = true;
  test.sizes = {100};
  pair.run(test, 100);
  EXPECT_EQ(pair.measured.latency.count(), 300u);
  EXPECT_TRUE(pair.measured.one_way);
  EXPECT_EQ(pair.measured.corrupted_bytes, 0u);
  EXPECT_EQ(pair.responder.counters.requests, 310u);
}

TEST(EnginePolicy, ReadLatencyIsAFullRoundTripAndTheTargetStaysPassive) {
  PairRun pair;
  TestSpec test = make_test(Op::read, Pattern::latency, 200);
  test.flows[0].validate = true;
  test.sizes = {256};
  pair.run(test, 256);
  EXPECT_EQ(pair.measured.latency.count(), 200u);
  EXPECT_FALSE(pair.measured.one_way);
  EXPECT_EQ(pair.responder.counters.requests, 0u);
  EXPECT_GT(pair.responder.counters.progress_calls, 0u);  // the target drives progress
  EXPECT_EQ(pair.measured.corrupted_bytes, 0u);
}

TEST(EnginePolicy, AtomicsLeaveTheExpectedTargetWord) {
  for (Op op : {Op::fetch_add, Op::cswap}) {
    PairRun pair;
    TestSpec test = make_test(op, Pattern::bandwidth, 100, 8, 4);
    test.sizes = {8};
    test.duration.warmup_iterations = 16;
    test.flows[0].validate = true;
    pair.run(test, 8);
    EXPECT_EQ(pair.measured.corrupted_bytes, 0u) << to_string(op);
    EXPECT_EQ(pair.measured.bytes, 800u) << to_string(op);
  }
}

// UCP does not order atomics; validation must not assume posting order.
TEST(EnginePolicy, AtomicsValidateWhenTheTransportReordersThem) {
  for (Op op : {Op::fetch_add, Op::cswap}) {
    for (Direction direction : {Direction::uni, Direction::bi}) {
      PairRun pair;
      pair.initiator.reverse_atomics = true;
      pair.responder.reverse_atomics = true;
      TestSpec test = make_test(op, Pattern::bandwidth, 96, 8, 4);
      test.sizes = {8};
      test.flows[0].post_list = 4;
      test.flows[0].direction = direction;
      test.flows[0].validate = true;
      pair.run(test, 8);
      EXPECT_EQ(pair.initiator.counters.max_chain, 4u);
      EXPECT_EQ(pair.measured.corrupted_bytes, 0u)
          << to_string(op) << (direction == Direction::bi ? " bi" : " uni");
    }
  }
}

TEST(EnginePolicy, ValidationCountsCorruptedBytes) {
  PairRun pair;
  pair.initiator.corrupt_every = 1;  // flip the first byte of every write
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 64, 8, 4);
  test.flows[0].validate = true;
  pair.run(test, 64);
  EXPECT_GT(pair.measured.corrupted_bytes, 0u);
}

// Over a socket transport a write completes before its target placed it and
// the end-of-phase message overtakes the last ones (libfabric's tcp provider,
// UCX over tcp): the validating target progresses until its buffer holds
// them, instead of counting them corrupted.
TEST(EnginePolicy, AWriteStreamsTargetWaitsForLateBytesBeforeItValidates) {
  for (Direction direction : {Direction::uni, Direction::bi}) {
    PairRun pair;
    pair.initiator.late_writes = std::chrono::milliseconds(100);
    pair.responder.late_writes = std::chrono::milliseconds(100);
    TestSpec test = make_test(Op::write, Pattern::bandwidth, 64, 8, 4);
    test.flows[0].validate = true;
    test.flows[0].direction = direction;
    pair.run(test, 64);
    const char* which = direction == Direction::bi ? "bi" : "uni";
    EXPECT_EQ(pair.measured.corrupted_bytes, 0u) << which;
    EXPECT_GT(pair.responder.counters.progress_calls, 0u) << which;
  }
}

// A write with immediate's data lands at the write's address, not in the
// receive that reports it (0 bytes): validation must look there.
TEST(EnginePolicy, WriteWithImmediateIsValidatedWhereItLanded) {
  for (Pattern pattern : {Pattern::latency, Pattern::bandwidth}) {
    for (bool corrupt : {false, true}) {
      PairRun pair;
      pair.initiator.corrupt_every = corrupt ? 1 : 0;
      pair.responder.corrupt_every = corrupt ? 1 : 0;
      TestSpec test = make_test(Op::write_imm, pattern, 64, pattern == Pattern::latency ? 1 : 8,
                                pattern == Pattern::latency ? 1 : 4);
      test.flows[0].validate = true;
      pair.run(test, 64);
      const char* what = pattern == Pattern::latency ? "latency" : "bandwidth";
      if (corrupt) {
        EXPECT_GT(pair.measured.corrupted_bytes, 0u) << what;
      } else {
        EXPECT_EQ(pair.measured.corrupted_bytes, 0u) << what;
      }
    }
  }
}

// Both directions over two endpoints of a transport whose sends complete
// only while the peer polls (the tcp plugin's sockets): each side finishes
// its sends on a different endpoint first (here each side's other wire is
// unbounded). A side that stopped draining an endpoint once its own sends
// there were done left the peer's sends on it waiting, while it waited for
// the peer on the other one: over tcp, no completion for 10 s in one run of
// three.
TEST(EnginePolicy, BothDirectionsKeepDrainingEveryEndpointTheirPeerSendsOn) {
  for (const CompletionMode mode : {CompletionMode::poll, CompletionMode::event}) {
    PairRun pair;
    pair.initiator.bounded_wires = {{0, 1}};
    pair.responder.bounded_wires = {{1, 1}};
    TestSpec test = make_test(Op::send, Pattern::bandwidth, 300, 8, 4);
    test.flows[0].direction = Direction::bi;
    test.flows[0].endpoints = 2;
    test.flows[0].completion = mode;
    const char* which = mode == CompletionMode::event ? "event" : "poll";
    ASSERT_NO_THROW(pair.run(
        test, 64, [](FlowPlan&) {}, std::chrono::seconds(20)))
        << which;
    EXPECT_EQ(pair.measured.bytes, 2u * 2 * 300 * 64) << which;
  }
}

// A transport whose sends and writes complete with their last bytes still
// queued on the sender, which sends them only while it progresses (UCX over
// tcp: a buffered send or a software put). Each side's last request of a
// phase is such a tail: a side that blocked on the control channel once its
// requests were complete left the peer waiting for it. Over two network
// namespaces, ucx-tcp write latency at 64 KiB stalled so (no completion for
// 10 s, once in four full ctest runs): the responder's last put was
// complete, its tail was not sent, and it waited for the initiator's
// end-of-phase message while the initiator waited for that tail.
TEST(EnginePolicy, EverySideKeepsItsTransportMovingUntilThePeerSpeaks) {
  for (const Op op : {Op::send, Op::write}) {
    for (const Pattern pattern : {Pattern::latency, Pattern::bandwidth, Pattern::message_rate}) {
      const bool latency = pattern == Pattern::latency;
      for (const Direction direction : {Direction::uni, Direction::bi}) {
        for (const WindowMode mode : {WindowMode::streaming, WindowMode::window_ack}) {
          if (latency && (direction == Direction::bi || mode == WindowMode::window_ack)) continue;
          PairRun pair;
          pair.initiator.queued_tails = true;
          pair.responder.queued_tails = true;
          TestSpec test = make_test(op, pattern, 48, latency ? 1 : 8, latency ? 1 : 4);
          test.duration.warmup_iterations = 8;
          test.flows[0].direction = direction;
          test.flows[0].window_mode = mode;
          test.flows[0].validate = true;
          const std::string which = std::string(to_string(op)) + " " +
                                    std::string(to_string(pattern)) +
                                    (direction == Direction::bi ? " bi" : "") +
                                    (mode == WindowMode::window_ack ? " window_ack" : "");
          ASSERT_NO_THROW(pair.run(
              test, 64, [](FlowPlan&) {}, std::chrono::seconds(5)))
              << which;
          EXPECT_EQ(pair.measured.messages, direction == Direction::bi ? 96u : 48u) << which;
          EXPECT_EQ(pair.measured.corrupted_bytes, 0u) << which;
        }
      }
    }
  }
}

// Receives are posted where messages come: a one-way stream's sender posts
// none (they sat unused, in a copying pipeline over its own bounce buffers);
// a stream in both directions, a window's acknowledgements and a ping-pong
// post on both sides.
TEST(EnginePolicy, OnlyASideThatTakesMessagesPostsReceives) {
  struct Case {
    const char* name;
    Direction direction;
    WindowMode window_mode;
    Pattern pattern;
    bool initiator_receives;
  };
  for (const Case& c :
       {Case{"one-way", Direction::uni, WindowMode::streaming, Pattern::bandwidth, false},
        Case{"both ways", Direction::bi, WindowMode::streaming, Pattern::bandwidth, true},
        Case{"window_ack", Direction::uni, WindowMode::window_ack, Pattern::bandwidth, true},
        Case{"ping-pong", Direction::uni, WindowMode::streaming, Pattern::latency, true}}) {
    PairRun pair;
    const bool latency = c.pattern == Pattern::latency;
    TestSpec test = make_test(Op::send, c.pattern, 64, latency ? 1 : 8, latency ? 1 : 4);
    test.flows[0].direction = c.direction;
    test.flows[0].window_mode = c.window_mode;
    pair.run(test, 64);
    EXPECT_GT(pair.responder.counters.receives_posted, 0u) << c.name;
    if (c.initiator_receives) {
      EXPECT_GT(pair.initiator.counters.receives_posted, 0u) << c.name;
    } else {
      EXPECT_EQ(pair.initiator.counters.receives_posted, 0u) << c.name;
    }
  }
}

TEST(EnginePolicy, BidirectionalBandwidthAddsBothDirections) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::bandwidth, 100, 8, 4);
  test.flows[0].direction = Direction::bi;
  pair.run(test, 64);
  EXPECT_EQ(pair.measured.bytes, 2u * 100 * 64);
  EXPECT_EQ(pair.initiator.counters.requests, 100u);
  EXPECT_EQ(pair.responder.counters.requests, 100u);
}

TEST(EnginePolicy, DurationModeEndsOnASignaledPost) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 0, 16, 8);
  test.duration.seconds = 0.1;
  pair.run(test, 64);
  const auto& c = pair.initiator.counters;
  EXPECT_GT(c.requests, 0u);
  EXPECT_EQ(c.requests % 8, 0u);
  EXPECT_EQ(c.signaled, c.requests / 8);
  EXPECT_EQ(pair.measured.messages, c.requests);
}

TEST(EnginePolicy, InlineFlagFollowsTheEffectiveThreshold) {
  PairRun pair;
  TestSpec test = make_test(Op::write, Pattern::bandwidth, 32, 8, 4);
  test.flows[0].inline_size = 1000;  // clamped to the fake's max_inline of 64
  test.sizes = {32, 128};
  pair.run(test, 32);
  EXPECT_EQ(pair.initiator.counters.inline_requests, 32u);
  EXPECT_EQ(effective_flow(test.flows[0], FakeContext::everything()).inline_size, 64u);
}

TEST(EnginePolicy, EventModeSleepsInsteadOfSpinning) {
  PairRun pair;
  TestSpec test = make_test(Op::send, Pattern::latency, 200);
  test.flows[0].completion = CompletionMode::event;
  pair.run(test, 64);
  EXPECT_EQ(pair.measured.latency.count(), 200u);
  EXPECT_GT(pair.initiator.counters.waits + pair.responder.counters.waits, 0u);
}

// stream_end: delivered ends the interval when every endpoint's flush says
// the peer holds what was sent (the fake's says so 150 ms after it was first
// asked), and a stream that ends at its last completion never asks.
TEST(EnginePolicy, AStreamThatEndsAtDeliveryWaitsForEveryEndpointsFlush) {
  PairRun pair;
  pair.initiator.flush_delay = std::chrono::milliseconds(150);
  TestSpec test = make_test(Op::send, Pattern::bandwidth, 200, 16, 8);
  test.flows[0].endpoints = 2;
  test.flows[0].stream_end = StreamEnd::delivered;
  pair.run(test, 64);
  EXPECT_EQ(pair.measured.messages, 400u);
  EXPECT_GE(pair.initiator.counters.flush_calls, 4u);  // both endpoints, asked until yes
  EXPECT_EQ(pair.responder.counters.flush_calls, 0u);  // it sent nothing
  // A lower bound the fake's delay makes certain: the wait is in the interval.
  EXPECT_GE(pair.measured.seconds, 0.15);

  PairRun unfenced;
  unfenced.initiator.flush_delay = std::chrono::milliseconds(150);
  test.flows[0].stream_end = StreamEnd::last_completion;
  unfenced.run(test, 64);
  EXPECT_EQ(unfenced.measured.messages, 400u);
  EXPECT_EQ(unfenced.initiator.counters.flush_calls, 0u);
}

TEST(EnginePolicy, SkipsWhatThePluginCannotDo) {
  Capabilities caps = FakeContext::everything();
  TestSpec test = make_test(Op::read, Pattern::bandwidth, 10, 8, 4);
  EXPECT_EQ(skip_reason(test.flows[0], caps, 64), "");

  caps.set(Op::read, Support::none);
  EXPECT_NE(skip_reason(test.flows[0], caps, 64).find("op read"), std::string::npos);

  caps = FakeContext::everything();
  caps.selective_completion = Support::none;
  EXPECT_NE(skip_reason(test.flows[0], caps, 64).find("signal_every"), std::string::npos);

  caps = FakeContext::everything();
  caps.completion_events = Support::none;
  test.flows[0].completion = CompletionMode::event;
  EXPECT_NE(skip_reason(test.flows[0], caps, 64).find("completion events"), std::string::npos);

  caps = FakeContext::everything();
  caps.max_message = 1024;
  test.flows[0].completion = CompletionMode::poll;
  EXPECT_NE(skip_reason(test.flows[0], caps, 4096).find("max_message"), std::string::npos);

  caps = FakeContext::everything();
  caps.ordered_write_visibility = false;
  TestSpec write_lat = make_test(Op::write, Pattern::latency, 10);
  EXPECT_NE(skip_reason(write_lat.flows[0], caps, 64).find("last byte"), std::string::npos);

  caps = FakeContext::everything();
  caps.delivery_fence = false;
  test.flows[0].stream_end = StreamEnd::delivered;
  EXPECT_NE(skip_reason(test.flows[0], caps, 64).find("delivery_fence false"), std::string::npos);
}

TEST(EnginePolicy, EmulatedFeaturesAreNamed) {
  Capabilities caps = FakeContext::everything();
  caps.selective_completion = Support::emulated;
  caps.post_list = Support::emulated;
  FlowSpec flow;
  flow.signal_every = 8;
  flow.post_list = 2;
  const auto emulated = emulated_features(flow, caps);
  EXPECT_EQ(emulated, (std::vector<std::string>{"selective_completion", "post_list"}));
}

}  // namespace
}  // namespace uniperf::engine
