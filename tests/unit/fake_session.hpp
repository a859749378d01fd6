// Both sides of a suite run in this process over the fake transport, as
// two threads on an in-process control pair: the session-level tests'
// harness (recovery after a failed test, loss on unreliable transports).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "fake_transport.hpp"
#include "loader/plugin_registry.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf::testing {

using namespace std::chrono_literals;

/// How the fake transport misbehaves on each side.
struct FakeFaults {
  int failing_rank = -1;         ///< this side's receives fail ...
  std::uint32_t fail_from = 0;   ///< ... from this many bytes on
  std::uint64_t lose_every = 0;  ///< both sides lose every Nth message (unreliable delivery)
  /// The failing side stops completing anything once it posts this many
  /// bytes (a stalled transport) ...
  std::uint32_t stall_from = 0;
  /// ... which ends a test after this long without a completion.
  std::chrono::seconds stall_timeout{10};
};

/// The fake transport as a plugin; each side of a test gets its own, both
/// on one fabric.
class FakePlugin final : public Plugin {
 public:
  FakePlugin(FakeFabric& fabric, std::uint32_t fail_receives_from, std::uint64_t lose_every,
             std::uint32_t stall_from)
      : fabric_(fabric),
        fail_receives_from_(fail_receives_from),
        lose_every_(lose_every),
        stall_from_(stall_from) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return "1"; }
  std::string library_version() const override { return "fake 1"; }
  std::string description() const override { return "in-process fake transport"; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string probe() const override { return "fake"; }
  std::unique_ptr<Context> open(const Options&) override {
    Capabilities caps = FakeContext::everything();
    caps.reliable_delivery = lose_every_ == 0;
    auto context = std::make_unique<FakeContext>(fabric_, caps);
    context->fail_receives_from = fail_receives_from_;
    context->lose_every = lose_every_;
    context->stall_from = stall_from_;
    return context;
  }

 private:
  FakeFabric& fabric_;
  std::uint32_t fail_receives_from_;
  std::uint64_t lose_every_;
  std::uint32_t stall_from_;
};

struct FakeRun {
  std::vector<results::Record> records;
  std::vector<std::string> responder_failures;
  std::chrono::steady_clock::duration took{};
};

/// Runs `tests` (YAML entries under `tests:`) with both sides in this
/// process, after `defaults` (YAML entries under `defaults:`).
inline FakeRun run_fake_suite(
    const std::string& tests, const FakeFaults& faults,
    const std::string& defaults = "  warmup: 4\n  iterations: 200\n  validate: true\n") {
  const auto suite =
      suite::parse_suite("suite: fake\ndefaults:\n" + defaults + "tests:\n" + tests, "fake.yaml");
  model::ConfigSpec config;
  config.name = "fake";
  config.plugin = "fake";
  const std::vector<model::ConfigSpec> configs = {config};

  FakeFabric fabric;
  loader::PluginRegistry initiator_plugins({}), responder_plugins({});
  auto plugin_of = [&](int rank) {
    const bool failing = faults.failing_rank == rank;
    return std::make_unique<FakePlugin>(fabric, failing ? faults.fail_from : 0, faults.lose_every,
                                        failing ? faults.stall_from : 0);
  };
  initiator_plugins.adopt(plugin_of(0), "test");
  responder_plugins.adopt(plugin_of(1), "test");

  auto [control0, control1] = bootstrap::make_in_process_pair();
  session::RunSettings settings;
  // Far above what a failure may take to reach the other side: a test that
  // passes only because a deadline ended a hang fails the `took` bound.
  settings.size_timeout = 120s;
  settings.stall_timeout = faults.stall_timeout;

  FakeRun run;
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
    // The returned records keep no trace rows: the observer sees them.
    std::vector<std::vector<results::TraceRow>> rows;
    session::Observer observer;
    observer.on_record = [&](const results::Record& r) { rows.push_back(r.trace); };
    run.records = session::run(*control0, suite, configs, initiator_plugins, settings, observer);
    EXPECT_EQ(rows.size(), run.records.size());
    for (std::size_t k = 0; k < rows.size() && k < run.records.size(); ++k) {
      EXPECT_TRUE(run.records[k].trace.empty()) << "the run kept the rows of a written record";
      run.records[k].trace = std::move(rows[k]);
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "initiator: " << e.what();
  }
  responder.join();
  run.took = std::chrono::steady_clock::now() - started;
  return run;
}

inline const results::Record* find_record(const FakeRun& run, const std::string& test,
                                          std::uint64_t size) {
  for (const auto& r : run.records) {
    if (r.test == test && r.size == size) return &r;
  }
  return nullptr;
}

/// The record of (test, size) has `status`, a reason containing
/// `reason_part` and the failure kind `failure` ("" for none).
inline ::testing::AssertionResult has(const FakeRun& run, const std::string& test,
                                      std::uint64_t size, results::Status status,
                                      const std::string& reason_part = "",
                                      const std::string& failure = "") {
  const results::Record* r = find_record(run, test, size);
  if (r == nullptr) return ::testing::AssertionFailure() << "no record " << test << " " << size;
  if (r->status != status || r->reason.find(reason_part) == std::string::npos ||
      r->failure != failure) {
    return ::testing::AssertionFailure()
           << test << " " << size << ": status " << results::to_string(r->status) << ", reason '"
           << r->reason << "', failure '" << r->failure << "'";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace uniperf::testing
