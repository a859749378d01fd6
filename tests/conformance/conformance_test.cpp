// The conformance suite: the contract every plugin, present and future, must
// keep. Instantiated once per config file under configs/ (so once per plugin
// and provider), it runs real traffic through the real plugin and the real
// engine, both sides in this process on two threads over the in-process
// bootstrap, with the plugin wrapped in a ContractChecker:
//
//   - every op the plugin advertises, at 1 byte, unaligned sizes, its inline
//     threshold -1/0/+1 and 1 MiB, latency and bandwidth, payloads validated;
//   - poll and event completion, signal_every 1 and window/2, post_list > 1,
//     window_ack, bidirectional, several endpoints;
//   - what it does not advertise is SKIPPED with the engine's reason naming
//     the missing capability, and the checker proves it was never attempted.
//
// Each record's expected status is computed from the plugin's declared
// Capabilities with the engine's own engine::skip_reason(), so the test holds
// the declaration and the behaviour to each other. A config whose plugin is
// not built, or whose device or provider is missing here, is GTEST_SKIPped
// with the reason (e.g. the verbs configs outside the Soft-RoCE lab).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "contract_checker.hpp"
#include "engine/plan.hpp"
#include "loader/plugin_registry.hpp"
#include "session/environment.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf::conformance {
namespace {

namespace fs = std::filesystem;
using results::Record;
using results::Status;

std::vector<std::string> config_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(UNIPERF_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (auto& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

constexpr std::uint64_t kMiB = 1 << 20;
const Op kAllOps[] = {Op::send, Op::write, Op::write_imm, Op::read, Op::fetch_add, Op::cswap};

class Conformance : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    config_ = suite::load_config(GetParam());
    environment_.emplace(config_.environment);
    config_.environment.clear();

    loaded_ = std::make_unique<loader::PluginRegistry>(
        std::vector<fs::path>{fs::path(UNIPERF_PLUGIN_DIR)});
    if (config_.plugin == "mpi") {
      // Both sides of this suite run in this process; MPI pairs two ranks,
      // one per process. tests/e2e/mpi_e2e.py runs these tests under mpirun.
      GTEST_SKIP() << "mpi: both sides here share one process, and MPI needs one rank per "
                      "process; its conformance runs under mpirun -np 2 in mpi_e2e";
    }
    Plugin* plugin = loaded_->find(config_.plugin);
    if (plugin == nullptr) {
      GTEST_SKIP() << "plugin '" << config_.plugin
                   << "' not available: " << loaded_->why_missing(config_.plugin);
    }
    try {
      auto context = plugin->open(suite::validate_options(config_, plugin->options()));
      caps_ = context->capabilities();
    } catch (const Unavailable& e) {
      GTEST_SKIP() << "unavailable: " << e.what();
    }
    log_ = std::make_shared<ContractLog>();
    checked_ = std::make_unique<loader::PluginRegistry>(std::vector<fs::path>{});
    checked_->adopt(std::make_unique<CheckedPlugin>(*plugin, log_),
                    "contract checker over " + config_.plugin);
  }

  std::vector<Op> advertised() const {
    std::vector<Op> ops;
    for (Op op : kAllOps) {
      if (caps_.op(op) != Support::none) ops.push_back(op);
    }
    return ops;
  }

  /// 1 byte, odd sizes, the inline threshold -1/0/+1; within max_message,
  /// whose edge another test covers. 1 MiB runs as its own, shorter test
  /// (software providers such as udp;ofi_rxd need tens of ms per MiB).
  std::vector<std::uint64_t> edge_sizes() const {
    std::set<std::uint64_t> sizes = {1, 3, 1021, 4099, 65537};
    if (caps_.max_inline > 1) {
      sizes.insert({caps_.max_inline - 1, caps_.max_inline, caps_.max_inline + 1});
    }
    std::vector<std::uint64_t> out;
    for (auto s : sizes) {
      if (s >= 1 && (caps_.max_message == 0 || s <= caps_.max_message)) out.push_back(s);
    }
    return out;
  }

  static std::string size_list(const std::vector<std::uint64_t>& sizes) {
    std::string text = "[";
    for (auto s : sizes) text += (text.size() > 1 ? ", " : "") + std::to_string(s);
    return text + "]";
  }

  /// One YAML test entry; `keys` are extra "key: value" lines.
  static std::string test_entry(const std::string& name, Op op, const std::string& pattern,
                                const std::vector<std::uint64_t>& sizes,
                                const std::vector<std::string>& keys = {}) {
    std::ostringstream yaml;
    yaml << "  - name: " << name << "\n    op: " << to_string(op) << "\n    pattern: " << pattern
         << "\n    sizes: " << (is_atomic(op) ? "[8]" : size_list(sizes)) << "\n";
    for (const auto& k : keys) yaml << "    " << k << "\n";
    return yaml.str();
  }

  /// Runs the tests (YAML entries) over this config, both sides in this
  /// process, and checks every record against the declared capabilities.
  void run_and_check(const std::string& tests) {
    const std::string yaml =
        "suite: conformance\ndefaults:\n  validate: true\n  warmup: 8\ntests:\n" + tests;
    const auto suite = suite::parse_suite(yaml, "conformance:" + config_.name);
    const std::vector<model::ConfigSpec> configs = {config_};

    auto [control0, control1] = bootstrap::make_in_process_pair();
    control0->set_timeout(std::chrono::seconds(30));
    control1->set_timeout(std::chrono::seconds(30));
    session::RunSettings settings;
    settings.size_timeout = std::chrono::seconds(120);

    std::string responder_error;
    // The responder closes its end when its run ends, as a responder process
    // does by exiting: after a failure on its side the initiator learns of it
    // at once instead of at its next control deadline.
    std::thread responder([&, control = std::move(control1)]() mutable {
      try {
        session::handshake(*control, suite, configs);
        session::run(*control, suite, configs, *checked_, settings);
      } catch (const std::exception& e) {
        responder_error = e.what();
      }
      control.reset();
    });
    std::vector<Record> records;
    try {
      session::handshake(*control0, suite, configs);
      records = session::run(*control0, suite, configs, *checked_, settings);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "initiator: " << e.what();
    }
    control0.reset();  // the responder ends when the control connection closes
    responder.join();
    EXPECT_EQ(responder_error, "");

    std::size_t expected_records = 0;
    for (const auto& t : suite.tests) expected_records += t.sizes.size();
    EXPECT_EQ(records.size(), expected_records);

    for (const auto& record : records) {
      const auto test = std::find_if(suite.tests.begin(), suite.tests.end(),
                                     [&](const auto& t) { return t.name == record.test; });
      ASSERT_NE(test, suite.tests.end()) << record.test;
      // The first flow that cannot run names the reason (numbered when
      // there are several), as the session decides it.
      const auto size_index = static_cast<std::size_t>(
          std::find(test->sizes.begin(), test->sizes.end(), record.size) - test->sizes.begin());
      const std::string expected =
          engine::skip_reason(engine::plan_flows(*test, caps_), size_index);
      const std::string where = record.test + " size " + std::to_string(record.size);
      if (expected.empty()) {
        EXPECT_EQ(record.status, Status::ok) << where << ": " << record.reason;
        EXPECT_EQ(record.corrupted_bytes, 0u) << where;
        EXPECT_GT(record.iterations_run, 0u) << where;
        // A stream of messages over a transport that may lose them says
        // how many were sent (and so lost); elsewhere nothing was lost.
        const bool counts_loss = record.flows.empty() && record.bandwidth &&
                                 record.flow.pattern != model::Pattern::latency &&
                                 !caps_.reliable_delivery && is_two_sided(record.flow.op);
        if (record.bandwidth) {
          EXPECT_EQ(record.bandwidth->messages_sent.has_value(), counts_loss) << where;
        }
      } else {
        EXPECT_EQ(record.status, Status::skipped) << where << ": " << record.reason;
        EXPECT_EQ(record.reason, expected) << where;
      }
    }
    for (const auto& v : log_->violations()) ADD_FAILURE() << "contract violation: " << v;

    // What ran and what was skipped, so a reader of the log sees the coverage.
    std::map<std::string, int> skipped;
    int ok = 0;
    for (const auto& r : records) r.status == Status::ok ? ++ok : ++skipped[r.reason];
    std::cout << "[ records  ] " << config_.name << ": " << ok << " ok";
    for (const auto& [reason, n] : skipped) std::cout << "; " << n << " skipped: " << reason;
    std::cout << "\n";
  }

  model::ConfigSpec config_;
  // The config's environment, set once for the whole test and both threads
  // (the session would otherwise set it from each side concurrently).
  std::optional<session::ScopedEnvironment> environment_;
  std::unique_ptr<loader::PluginRegistry> loaded_;
  std::unique_ptr<loader::PluginRegistry> checked_;
  std::shared_ptr<ContractLog> log_;
  Capabilities caps_;
};

TEST_P(Conformance, AdvertisedOpsMoveEveryByteAtEdgeSizes) {
  std::string tests;
  const std::string inline_key = "inline: " + std::to_string(caps_.max_inline);
  for (Op op : advertised()) {
    const std::string o(to_string(op));
    tests += test_entry(o + "_lat", op, "latency", edge_sizes(), {"iterations: 50", inline_key});
    tests += test_entry(o + "_bw", op, "bandwidth", edge_sizes(),
                        {"iterations: 64", "window: 16", inline_key});
    if (!is_atomic(op) && (caps_.max_message == 0 || caps_.max_message >= kMiB)) {
      tests += test_entry(o + "_lat_1MiB", op, "latency", {kMiB}, {"iterations: 8", "warmup: 2"});
      tests += test_entry(o + "_bw_1MiB", op, "bandwidth", {kMiB},
                          {"iterations: 32", "window: 8", "warmup: 4"});
    }
  }
  run_and_check(tests);
}

TEST_P(Conformance, UnadvertisedOpsAreSkippedAndNeverAttempted) {
  std::string tests;
  std::vector<Op> missing;
  for (Op op : kAllOps) {
    if (caps_.op(op) != Support::none) continue;
    missing.push_back(op);
    const std::string o(to_string(op));
    tests += test_entry(o + "_lat", op, "latency", {8, 4096});
    tests += test_entry(o + "_bw", op, "bandwidth", {4096}, {"window: 16"});
  }
  if (missing.empty()) GTEST_SKIP() << config_.plugin << " advertises every op";
  run_and_check(tests);
  for (Op op : missing) EXPECT_FALSE(log_->was_attempted(op)) << to_string(op);
}

TEST_P(Conformance, EventCompletionWorksOrIsSkippedWithoutWaiting) {
  std::string tests;
  for (Op op : advertised()) {
    const std::string o(to_string(op));
    tests += test_entry(o + "_lat_event", op, "latency", {1, 4099},
                        {"iterations: 50", "completion: event"});
    tests += test_entry(o + "_bw_event", op, "bandwidth", {4099, kMiB},
                        {"iterations: 64", "window: 16", "completion: event", "cq_moderation: 4"});
  }
  run_and_check(tests);
  if (caps_.completion_events == Support::none) {
    EXPECT_FALSE(log_->waited_for_events());
  }
}

TEST_P(Conformance, SignalEveryOneAndHalfTheWindow) {
  std::string tests;
  for (Op op : advertised()) {
    const std::string o(to_string(op));
    for (const char* every : {"1", "8"}) {
      tests += test_entry(o + "_signal_" + every, op, "bandwidth", {1, 4099},
                          {"iterations: 128", "window: 16", std::string("signal_every: ") + every});
    }
  }
  run_and_check(tests);
}

TEST_P(Conformance, PostListChainsAndWindowModes) {
  std::string tests;
  for (Op op : advertised()) {
    const std::string o(to_string(op));
    tests += test_entry(o + "_post_list", op, "bandwidth", {1, 4099},
                        {"iterations: 128", "window: 16", "signal_every: 8", "post_list: 4"});
    tests += test_entry(o + "_window_ack", op, "bandwidth", {4099},
                        {"iterations: 128", "window: 16", "window_mode: window_ack"});
    tests += test_entry(o + "_bi", op, "bandwidth", {4099},
                        {"iterations: 128", "window: 16", "direction: bi"});
    tests += test_entry(o + "_two_endpoints", op, "bandwidth", {4099},
                        {"iterations: 64", "window: 8", "endpoints: 2"});
  }
  tests += test_entry("send_msgrate", Op::send, "message_rate", {1}, {"iterations: 512"});
  run_and_check(tests);
}

TEST_P(Conformance, StreamsEndAtDeliveryOrAreSkippedSayingWhy) {
  // stream_end: delivered asks the plugin's flush() after each stream: one
  // way and both ways, over two endpoints, with validation; SKIPPED naming
  // delivery_fence where the plugin cannot tell.
  std::string tests;
  for (Op op : advertised()) {
    if (is_atomic(op)) continue;
    const std::string o(to_string(op));
    tests += test_entry(o + "_delivered", op, "bandwidth", {1, 65537},
                        {"iterations: 128", "window: 16", "endpoints: 2", "stream_end: delivered"});
    tests +=
        test_entry(o + "_bi_delivered", op, "bandwidth", {4099},
                   {"iterations: 128", "window: 16", "direction: bi", "stream_end: delivered"});
  }
  run_and_check(tests);
}

TEST_P(Conformance, AWatchingTargetStillReceivesEveryByte) {
  // target_watch: last_byte makes a write stream's target read the last
  // byte of its first slot between progress calls: every byte still lands
  // (validated), whether each write lands on the watched line (one buffer)
  // or one in a ring of slots does, over one endpoint or two.
  if (caps_.op(Op::write) == Support::none) GTEST_SKIP() << config_.name << ": no writes";
  std::string tests;
  tests +=
      test_entry("write_watched_single_buffer", Op::write, "bandwidth", {1, 4099, 65537},
                 {"iterations: 128", "window: 16", "buffers: single", "target_watch: last_byte"});
  tests += test_entry("write_watched_two_endpoints", Op::write, "bandwidth", {4099},
                      {"iterations: 128", "window: 16", "endpoints: 2", "target_watch: last_byte"});
  run_and_check(tests);
}

TEST_P(Conformance, ConcurrentFlowsRunEachOnItsOwnThread) {
  // Every advertised op as the studied flow, under a competing send stream:
  // each flow on its own thread, with its own Context where the plugin's
  // endpoints are not thread-safe (Plugin::open() called again).
  std::string tests;
  for (Op op : advertised()) {
    const std::string o(to_string(op));
    std::ostringstream yaml;
    yaml << "  - name: " << o << "_under_send_bw\n    sizes: [" << (is_atomic(op) ? 8 : 4099)
         << "]\n    iterations: 64\n    flows:\n      - {op: " << o
         << ", pattern: latency}\n      - {op: send, pattern: bandwidth, window: 8}\n";
    tests += yaml.str();
  }
  run_and_check(tests);
}

TEST_P(Conformance, MaxMessageIsHonouredAtItsEdge) {
  // Two rounds of a window of two: every slot is posted again at the edge
  // size. No more: at an RDMA stack's largest message (8 MiB on rxe) this
  // is the lab's longest test; under emulation verbs-rxe took 43 s at 16
  // iterations (window 4), 27 s at 8 and 20 s at 4.
  if (caps_.max_message == 0) GTEST_SKIP() << config_.plugin << " declares no max_message";
  std::string tests;
  for (Op op : advertised()) {
    if (is_atomic(op)) continue;
    tests += test_entry(std::string(to_string(op)) + "_max_message", op, "bandwidth",
                        {caps_.max_message, caps_.max_message + 1}, {"iterations: 4", "window: 2"});
  }
  run_and_check(tests);
}

// The declared queue limits are true: a queue of exactly max_send_depth
// (window + 1) and exactly max_recv_depth posted receives run, one more of
// either is SKIPPED and never asked of connect() (the contract checker).
TEST_P(Conformance, QueueLimitsAreHonouredAtTheirEdge) {
  if (caps_.max_send_depth == 0 && caps_.max_recv_depth == 0) {
    GTEST_SKIP() << config_.plugin << " declares no queue limit";
  }
  std::string tests;
  const std::string iterations = "iterations: 64";
  if (caps_.max_recv_depth != 0 && caps_.op(Op::send) != Support::none) {
    const std::uint32_t most = caps_.max_recv_depth;
    for (const std::uint32_t depth : {most, most + 1}) {
      tests += test_entry("send_rx_depth_" + std::to_string(depth), Op::send, "bandwidth", {64},
                          {iterations, "window: 8", "rx_depth: " + std::to_string(depth)});
    }
  }
  if (caps_.max_send_depth > 1) {
    // The window plus a window ack: window max - 1 fills the queue.
    const bool write = caps_.op(Op::write) != Support::none;
    const Op op = write ? Op::write : Op::send;
    const std::uint32_t most = caps_.max_send_depth - 1;
    const std::string receives = caps_.max_recv_depth != 0
                                     ? "rx_depth: " + std::to_string(caps_.max_recv_depth)
                                     : "rx_depth: " + std::to_string(2 * most);
    for (const std::uint32_t window : {most, most + 1}) {
      tests += test_entry(std::string(to_string(op)) + "_window_" + std::to_string(window), op,
                          "bandwidth", {64},
                          {iterations, "window: " + std::to_string(window), receives});
    }
  }
  if (tests.empty()) GTEST_SKIP() << config_.plugin << ": no op to fill its queues with";
  run_and_check(tests);
}

INSTANTIATE_TEST_SUITE_P(Configs, Conformance, testing::ValuesIn(config_files()), test_name);

}  // namespace
}  // namespace uniperf::conformance
