// One failed test does not stop a run: the side that fails tells the other
// (in band, and out of band to stop a loop that reads no control message),
// both tear the test down and meet again at the next test's epoch, and every
// later test runs. Both sides run in this process over the fake transport,
// one of them made to fail its receives from some size on.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "fake_transport.hpp"
#include "loader/plugin_registry.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using namespace std::chrono_literals;
using results::Record;
using results::Status;

/// The fake transport as a plugin; each side of a test gets its own, both
/// on one fabric.
class FakePlugin final : public Plugin {
 public:
  FakePlugin(testing::FakeFabric& fabric, std::uint32_t fail_receives_from,
             std::uint32_t stall_from = 0)
      : fabric_(fabric), fail_receives_from_(fail_receives_from), stall_from_(stall_from) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return "1"; }
  std::string library_version() const override { return "fake 1"; }
  std::string description() const override { return "in-process fake transport"; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string probe() const override { return "fake"; }
  std::unique_ptr<Context> open(const Options&) override {
    auto context =
        std::make_unique<testing::FakeContext>(fabric_, testing::FakeContext::everything());
    context->fail_receives_from = fail_receives_from_;
    context->stall_from = stall_from_;
    return context;
  }

 private:
  testing::FakeFabric& fabric_;
  std::uint32_t fail_receives_from_;
  std::uint32_t stall_from_;
};

struct Outcome {
  std::vector<Record> records;
  std::vector<std::string> responder_failures;
  std::chrono::steady_clock::duration took{};
};

/// Runs `tests` (YAML entries) with both sides in this process; the side of
/// rank `failing_rank` fails every receive of `fail_from` bytes or more, or
/// with `stall` stops completing anything once it posts that many bytes
/// (and a stall ends a test after 1 s).
Outcome run_suite(const std::string& tests, int failing_rank, std::uint32_t fail_from,
                  bool stall = false) {
  const auto suite = suite::parse_suite(
      "suite: recovery\ndefaults:\n  warmup: 4\n  iterations: 200\n  validate: true\ntests:\n" +
          tests,
      "recovery.yaml");
  model::ConfigSpec config;
  config.name = "fake";
  config.plugin = "fake";
  const std::vector<model::ConfigSpec> configs = {config};

  testing::FakeFabric fabric;
  loader::PluginRegistry initiator_plugins({}), responder_plugins({});
  auto plugin_of = [&](int rank) {
    const std::uint32_t from = failing_rank == rank ? fail_from : 0;
    return stall ? std::make_unique<FakePlugin>(fabric, 0, from)
                 : std::make_unique<FakePlugin>(fabric, from);
  };
  initiator_plugins.adopt(plugin_of(0), "test");
  responder_plugins.adopt(plugin_of(1), "test");

  auto [control0, control1] = bootstrap::make_in_process_pair();
  session::RunSettings settings;
  // Far above what a failure may take to reach the other side: a test that
  // passes only because a deadline ended a hang fails the `took` bound.
  settings.size_timeout = 120s;
  settings.stall_timeout = 1s;

  Outcome run;
  const auto started = std::chrono::steady_clock::now();
  std::thread responder([&, control = std::move(control1)]() mutable {
    session::Observer observer;
    observer.on_failure = [&](const std::string& reason, bool) {
      run.responder_failures.push_back(reason);
    };
    try {
      session::handshake(*control, suite, configs);
      session::run(*control, suite, configs, responder_plugins, settings, observer);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "responder: " << e.what();
    }
  });
  try {
    session::handshake(*control0, suite, configs);
    run.records = session::run(*control0, suite, configs, initiator_plugins, settings);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "initiator: " << e.what();
  }
  responder.join();
  run.took = std::chrono::steady_clock::now() - started;
  return run;
}

const Record* find(const Outcome& run, const std::string& test, std::uint64_t size) {
  for (const auto& r : run.records) {
    if (r.test == test && r.size == size) return &r;
  }
  return nullptr;
}

::testing::AssertionResult has(const Outcome& run, const std::string& test, std::uint64_t size,
                               Status status, const std::string& reason_part = "",
                               const std::string& failure = "") {
  const Record* r = find(run, test, size);
  if (r == nullptr) return ::testing::AssertionFailure() << "no record " << test << " " << size;
  if (r->status != status || r->reason.find(reason_part) == std::string::npos ||
      r->failure != failure) {
    return ::testing::AssertionFailure()
           << test << " " << size << ": status " << results::to_string(r->status) << ", reason '"
           << r->reason << "', failure '" << r->failure << "'";
  }
  return ::testing::AssertionSuccess();
}

const std::string kStreamThenLatency =
    "  - {name: stream, op: send, pattern: bandwidth, sizes: [8, 64, 4096]}\n"
    "  - {name: after, op: send, pattern: latency, sizes: [8, 32]}\n"
    "  - {name: writes, op: write, pattern: bandwidth, sizes: [4096]}\n";

TEST(SessionRecovery, AResponderFailureEndsItsTestAndTheRunGoesOn) {
  const Outcome run = run_suite(kStreamThenLatency, 1, 64);
  ASSERT_EQ(run.records.size(), 6u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 64, Status::error, "the responder failed: receive"));
  EXPECT_TRUE(has(run, "stream", 64, Status::error, "fake status 5"));
  EXPECT_TRUE(has(run, "stream", 4096, Status::error, "not run: size 64 of this test failed"));
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_TRUE(has(run, "writes", 4096, Status::ok));
  ASSERT_EQ(run.responder_failures.size(), 1u);
  EXPECT_NE(run.responder_failures[0].find("fake status 5"), std::string::npos);
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AnInitiatorFailureStopsTheServingResponder) {
  // The initiator's echo receives fail in the latency test; the responder,
  // waiting between echoes, hears of it on the control channel.
  const Outcome run = run_suite(kStreamThenLatency, 0, 32);
  ASSERT_EQ(run.records.size(), 6u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 64, Status::ok));  // the initiator only sends here
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::error, "fake status 5"));
  EXPECT_TRUE(has(run, "writes", 4096, Status::ok));
  ASSERT_EQ(run.responder_failures.size(), 1u);
  EXPECT_NE(run.responder_failures[0].find("the initiator failed"), std::string::npos)
      << run.responder_failures[0];
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, APeerFailureStopsALoopThatReadsNoControlMessage) {
  // A ping-pong initiator waits for an echo that never comes: only the
  // responder's out-of-band interrupt ends its wait before the deadline.
  const Outcome run = run_suite(
      "  - {name: pingpong, op: send, pattern: latency, sizes: [8, 64]}\n"
      "  - {name: after, op: write, pattern: latency, sizes: [64]}\n",
      1, 64);
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_TRUE(has(run, "pingpong", 8, Status::ok));
  EXPECT_TRUE(has(run, "pingpong", 64, Status::error, "the responder failed: receive"));
  EXPECT_TRUE(has(run, "after", 64, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AnInitiatorWhoseTransportStallsEndsThatTestAsStalled) {
  // The initiator's endpoint stops completing anything once it posts 4 KiB:
  // no error, no peer failure, only silence. The test ends after the stall
  // limit (1 s here), not the size's deadline (120 s), and the run goes on.
  const Outcome run = run_suite(
      "  - {name: stream, op: send, pattern: bandwidth, sizes: [8, 4096]}\n"
      "  - {name: after, op: send, pattern: latency, sizes: [8, 32]}\n",
      0, 4096, true);
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_TRUE(has(run, "stream", 8, Status::ok));
  EXPECT_TRUE(has(run, "stream", 4096, Status::error, "no completion for 1 s (--stall-timeout)",
                  "stalled"));
  // Where the loop was (the responder, waiting for the stalled initiator's
  // end of phase, may see the stall first and say so from its side).
  EXPECT_TRUE(
      has(run, "stream", 4096, Status::error, " of 4 messages of the warm-up phase", "stalled"));
  EXPECT_TRUE(has(run, "after", 8, Status::ok));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, AStallOnTheRespondersSideIsAStallToo) {
  // The responder's endpoint stops completing after its first 64-byte echo:
  // both sides wait for a completion that never comes; whichever sees the
  // stall first, the record says stalled, and the next test runs.
  const Outcome run = run_suite(
      "  - {name: pingpong, op: send, pattern: latency, sizes: [8, 64]}\n"
      "  - {name: after, op: write, pattern: latency, sizes: [32]}\n",
      1, 64, true);
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_TRUE(has(run, "pingpong", 8, Status::ok));
  EXPECT_TRUE(has(run, "pingpong", 64, Status::error, "no completion for 1 s", "stalled"));
  EXPECT_TRUE(has(run, "after", 32, Status::ok));
  EXPECT_LT(run.took, 60s);
}

TEST(SessionRecovery, ATargetOfOneSidedOpsIsNotStalledByWaiting) {
  // A write stream's or a read ping-pong's target sees no completion at all
  // (a latency test posts it receives all the same); a test that lasts
  // longer than the stall limit must not count as stalled on its side.
  const Outcome run = run_suite(
      "  - {name: writes, op: write, pattern: bandwidth, sizes: [64], duration: 3s, warmup: 0}\n"
      "  - {name: reads, op: read, pattern: latency, sizes: [64], duration: 3s, warmup: 0}\n",
      -1, 0, true);
  ASSERT_EQ(run.records.size(), 2u);
  EXPECT_TRUE(has(run, "writes", 64, Status::ok));
  EXPECT_TRUE(has(run, "reads", 64, Status::ok));
}

}  // namespace
}  // namespace uniperf
