// A local pair replaces a lost responder: the run stops where the peer was
// lost and a fresh peer resumes there. A test under way is not run again,
// and a point at which a fresh peer is lost again before anything ran is
// recorded and skipped, so that a responder that always dies at one place
// cannot make the run loop. Both sides run in this process over the fake
// transport; "lost" is a responder that closes its control connection.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "fake_session.hpp"

namespace uniperf {
namespace {

using session::SuitePosition;

/// One run_from on both sides: the responder either runs from `resume` or,
/// with `responder_dies`, goes away right after the handshake.
session::RunOutcome run_part(const model::SuiteSpec& suite, std::optional<SuitePosition> resume,
                             bool responder_dies) {
  model::ConfigSpec config;
  config.name = "fake";
  config.plugin = "fake";
  const std::vector<model::ConfigSpec> configs = {config};
  testing::FakeFabric fabric;
  loader::PluginRegistry initiator_plugins({}), responder_plugins({});
  initiator_plugins.adopt(std::make_unique<testing::FakePlugin>(fabric, 0, 0, 0), "test");
  responder_plugins.adopt(std::make_unique<testing::FakePlugin>(fabric, 0, 0, 0), "test");
  auto [control0, control1] = bootstrap::make_in_process_pair();
  session::RunSettings settings;
  std::thread responder([&, control = std::move(control1)]() mutable {
    try {
      session::handshake(*control, suite, configs);
      if (responder_dies) return;  // the control connection closes here
      session::run_from(*control, suite, configs, responder_plugins, settings, {}, resume, false);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "responder: " << e.what();
    }
  });
  session::RunOutcome outcome;
  try {
    session::handshake(*control0, suite, configs);
    outcome =
        session::run_from(*control0, suite, configs, initiator_plugins, settings, {}, resume, true);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "initiator: " << e.what();
  }
  responder.join();
  return outcome;
}

TEST(SessionResume, ALostPeerIsResumedWhereItWasLostAndALoopIsBroken) {
  const auto suite = suite::parse_suite(
      "suite: resume\ndefaults: {iterations: 50, warmup: 2}\ntests:\n"
      "  - {name: one, op: send, pattern: latency, sizes: [8, 64]}\n"
      "  - {name: two, op: send, pattern: bandwidth, sizes: [64]}\n",
      "resume.yaml");

  // Lost before the first test: nothing recorded, resume at its start.
  const auto first = run_part(suite, std::nullopt, true);
  EXPECT_TRUE(first.records.empty());
  ASSERT_TRUE(first.resume_at);
  EXPECT_EQ(first.resume_at->config, 0u);
  EXPECT_EQ(first.resume_at->test, 0u);

  // The fresh peer is lost at the same point: that test is recorded as not
  // run, and the next part starts after it.
  const auto again = run_part(suite, *first.resume_at, true);
  ASSERT_EQ(again.records.size(), 2u);
  for (const auto& r : again.records) {
    EXPECT_EQ(r.test, "one");
    EXPECT_EQ(r.status, results::Status::error);
    EXPECT_NE(r.reason.find("lost again before this test started"), std::string::npos) << r.reason;
  }
  ASSERT_TRUE(again.resume_at);
  EXPECT_EQ(again.resume_at->config, 0u);
  EXPECT_EQ(again.resume_at->test, 1u);

  // A peer that stays runs the rest, and there is nothing more to resume.
  const auto rest = run_part(suite, *again.resume_at, false);
  ASSERT_EQ(rest.records.size(), 1u);
  EXPECT_EQ(rest.records[0].test, "two");
  EXPECT_EQ(rest.records[0].status, results::Status::ok) << rest.records[0].reason;
  EXPECT_FALSE(rest.resume_at);
}

}  // namespace
}  // namespace uniperf
