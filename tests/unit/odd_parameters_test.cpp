// Odd parameters, as a property: every combination of knobs a user can
// write either runs with valid payloads or is SKIPPED or refused with a
// reason; never an error, a crash or a hang. A seeded sample of the
// cartesian product of the odd values (window 1, signal_every 1 and equal
// to the window, post_list above the window, rx_depth 1, sizes 1, 3, 4095,
// 4097, 65537 and 8 MiB, bidirectional with event completion, window_ack,
// single buffers, duration with margin, trials, concurrent flows) runs over
// the engine and the fake transport, both sides in this process, against a
// transport that can do everything and one with tight limits (no events, no
// selective completion, shallow queues, a 1 MiB message limit), so that
// both the run and the skip paths are taken. The same sweep over a real
// transport, smaller, is tests/e2e/odd_parameters_e2e.py.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <mutex>
#include <random>
#include <sstream>
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

/// The fake transport as a plugin with the given capabilities. Each side's
/// n-th Context (a test of several flows opens one per flow when endpoints
/// are not thread-safe) is on the n-th fabric of `fabrics`, as the two
/// sides open them in the same order: two flows never share a wire.
class FakePlugin final : public Plugin {
 public:
  FakePlugin(std::deque<testing::FakeFabric>& fabrics, std::mutex& mutex, Capabilities caps,
             std::uint64_t corrupt_every)
      : fabrics_(fabrics), mutex_(mutex), caps_(caps), corrupt_every_(corrupt_every) {}
  std::string name() const override { return "fake"; }
  std::string version() const override { return "1"; }
  std::string library_version() const override { return "fake 1"; }
  std::string description() const override { return "in-process fake transport"; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string probe() const override { return "fake"; }
  std::unique_ptr<Context> open(const Options&) override {
    std::lock_guard lock(mutex_);
    if (fabrics_.size() <= opened_) fabrics_.emplace_back();
    auto context = std::make_unique<testing::FakeContext>(fabrics_[opened_++], caps_);
    context->corrupt_every = corrupt_every_;
    return context;
  }

 private:
  std::deque<testing::FakeFabric>& fabrics_;
  std::mutex& mutex_;
  Capabilities caps_;
  std::uint64_t corrupt_every_;
  std::size_t opened_ = 0;
};

/// A transport with tight limits: what a small provider offers.
Capabilities limited() {
  Capabilities caps;
  caps.ops[static_cast<std::size_t>(Op::send)] = Support::native;
  caps.ops[static_cast<std::size_t>(Op::write)] = Support::native;
  caps.ops[static_cast<std::size_t>(Op::read)] = Support::emulated;
  caps.selective_completion = Support::none;
  caps.completion_events = Support::none;
  caps.post_list = Support::emulated;
  caps.max_inline = 0;
  caps.max_message = std::size_t{1} << 20;
  caps.ordered_write_visibility = false;
  caps.max_send_depth = 8;
  caps.max_recv_depth = 64;  // the default rx_depth (64) fits, rx_depth 128 would not
  return caps;
}

/// One drawn combination, as the suite text a user would write.
struct OddCase {
  std::string yaml;  ///< the test's entry under `tests:`
  std::string text;  ///< a one-line description for messages
};

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& choices) {
  return choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(rng)];
}

/// A flow's keys ("op: send, pattern: bandwidth, ..."), drawn from the odd
/// values of every knob. Absent keys take their defaults. `coherent` keeps
/// to the suite's rules (latency is a uni ping-pong of window 1, post_list
/// divides the window and signal_every, ...), so the case reaches the
/// engine; otherwise any value may be drawn and the suite reader is what
/// is tested (it must refuse with a reason, or the engine run it).
std::string draw_flow(std::mt19937_64& rng, bool coherent) {
  auto chance = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
  const std::string op = pick<std::string>(rng, {"send", "send", "write", "write_imm", "read"});
  const std::string pattern = pick<std::string>(rng, {"latency", "bandwidth", "message_rate"});
  const bool latency = pattern == "latency";
  std::uint32_t window = pick<std::uint32_t>(rng, {1, 1, 2, 6, 16});
  if (coherent && latency) window = 1;
  std::ostringstream f;
  f << "op: " << op << ", pattern: " << pattern;
  if (!latency || chance(0.2)) f << ", window: " << window;
  std::uint32_t signal_every = std::max(1u, window / 2);
  switch (std::uniform_int_distribution<int>(0, coherent ? 2 : 3)(rng)) {
    case 0:
      break;  // the default: half the window
    case 1:
      signal_every = 1;
      break;
    case 2:
      signal_every = window;
      break;
    default:
      signal_every = window + 1;
      break;  // above the window: refused
  }
  f << ", signal_every: " << signal_every;
  // post_list: 1, the window, or above it (refused unless coherent).
  std::uint32_t post_list = pick<std::uint32_t>(rng, {1, window, 2 * window});
  if (coherent && (window % post_list != 0 || signal_every % post_list != 0)) post_list = 1;
  if (post_list != 1 || chance(0.3)) f << ", post_list: " << post_list;
  if (chance(0.35)) {
    f << ", rx_depth: 1";
    if (!coherent && chance(0.3)) f << ", rx_replenish: 2";  // above rx_depth: refused
  }
  if ((!coherent || !latency) && chance(0.35)) f << ", direction: bi";
  if (chance(0.3)) f << ", completion: event";
  if ((!coherent || !latency) && chance(0.3)) f << ", window_mode: window_ack";
  if (chance(0.3)) f << ", buffers: single";
  if (chance(0.15)) f << ", endpoints: 2";
  if (chance(0.15)) f << ", inline: 64";
  if (chance(0.15)) f << ", cq_moderation: " << window;
  return f.str();
}

OddCase draw(std::mt19937_64& rng, int index) {
  static const std::vector<std::string> kSizes = {"1", "3", "4095", "4097", "65537", "8M"};
  std::ostringstream t;
  t << "  - name: case" << index << "\n";
  // One or two of the odd sizes.
  std::string sizes = pick(rng, kSizes);
  if (std::bernoulli_distribution(0.4)(rng)) {
    const std::string second = pick(rng, kSizes);
    if (second != sizes) sizes += ", " + second;
  }
  // Eight-MiB messages are few per run: the sweep is about odd
  // combinations, not about moving gigabytes.
  const bool big = sizes.find("8M") != std::string::npos;
  t << "    sizes: [" << sizes << "]\n";
  // Four cases in five keep to the rules; the fifth is drawn freely.
  const bool coherent = std::bernoulli_distribution(0.8)(rng);
  switch (std::uniform_int_distribution<int>(0, coherent ? 2 : 3)(rng)) {
    case 0:
      t << "    duration: 0.1s\n    margin: 0.02s\n";
      break;
    case 1:
      t << "    iterations: " << (big ? 6 : 40) << "\n";
      break;
    case 2:
      t << "    duration: 0.1s\n";
      break;
    default:
      t << "    duration: 0.1s\n    margin: 0.1s\n";
      break;  // refused: 2 x margin
  }
  // The built-in warm-up (message_rate: 1000 messages) of 8 MiB messages is
  // gigabytes of copying that prove nothing here.
  if (std::bernoulli_distribution(0.5)(rng) || big) t << "    warmup: " << (big ? 1 : 5) << "\n";
  if (std::bernoulli_distribution(0.25)(rng)) t << "    trials: 2\n";
  if (std::bernoulli_distribution(0.2)(rng)) {
    t << "    flows:\n      - {" << draw_flow(rng, coherent) << "}\n      - {"
      << draw_flow(rng, coherent) << "}\n";
  } else {
    // A single flow's keys sit in the test itself.
    std::string flow = draw_flow(rng, coherent);
    std::string line;
    std::istringstream keys(flow);
    while (std::getline(keys, line, ',')) {
      const auto start = line.find_first_not_of(' ');
      t << "    " << line.substr(start) << "\n";
    }
  }
  OddCase c;
  c.yaml = t.str();
  c.text = c.yaml;
  return c;
}

struct Tally {
  int ok = 0, skipped = 0, refused = 0;
};

/// Runs one suite of one test with both sides in this process; returns the
/// initiator's records.
std::vector<Record> run_both_sides(const model::SuiteSpec& suite, const Capabilities& caps,
                                   std::string& trouble, std::uint64_t corrupt_every = 0) {
  model::ConfigSpec config;
  config.name = "fake";
  config.plugin = "fake";
  const std::vector<model::ConfigSpec> configs = {config};
  std::deque<testing::FakeFabric> fabrics;
  std::mutex fabrics_mutex;
  loader::PluginRegistry initiator_plugins({}), responder_plugins({});
  initiator_plugins.adopt(std::make_unique<FakePlugin>(fabrics, fabrics_mutex, caps, corrupt_every),
                          "test");
  responder_plugins.adopt(std::make_unique<FakePlugin>(fabrics, fabrics_mutex, caps, corrupt_every),
                          "test");
  auto [control0, control1] = bootstrap::make_in_process_pair();
  session::RunSettings settings;
  // A hang becomes an error record (the watchdog's deadline), which fails
  // the property: nothing here needs more than a fraction of a second.
  settings.size_timeout = 20s;
  std::string responder_trouble;
  std::thread responder([&, control = std::move(control1)]() mutable {
    session::Observer observer;
    observer.on_failure = [&](const std::string& reason, bool) {
      responder_trouble = "responder: " + reason;
    };
    try {
      session::handshake(*control, suite, configs);
      session::run(*control, suite, configs, responder_plugins, settings, observer);
    } catch (const std::exception& e) {
      responder_trouble = std::string("responder threw: ") + e.what();
    }
  });
  std::vector<Record> records;
  try {
    session::handshake(*control0, suite, configs);
    records = session::run(*control0, suite, configs, initiator_plugins, settings);
  } catch (const std::exception& e) {
    trouble = std::string("initiator threw: ") + e.what();
  }
  responder.join();
  if (trouble.empty()) trouble = responder_trouble;
  return records;
}

/// The property for one record; empty when it holds.
std::string violation(const Record& r) {
  if (r.status == Status::error) return "error: " + r.reason;
  if (r.status == Status::skipped) return r.reason.empty() ? "skipped without a reason" : "";
  if (r.corrupted_bytes != 0) return std::to_string(r.corrupted_bytes) + " corrupted bytes";
  if (r.iterations_run == 0) return "ok with no iterations run";
  auto finite_positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (r.latency) {
    if (r.latency->samples == 0) return "a latency without samples";
    if (!finite_positive(r.latency->mean) || !std::isfinite(r.latency->max) || r.latency->min < 0 ||
        r.latency->min > r.latency->max)
      return "an insane latency (mean " + std::to_string(r.latency->mean) + ")";
  }
  if (r.bandwidth) {
    if (r.bandwidth->messages == 0) return "a bandwidth of no messages";
    if (!finite_positive(r.bandwidth->mb_per_s) || !finite_positive(r.bandwidth->mmsg_per_s) ||
        !finite_positive(r.bandwidth->seconds))
      return "an insane bandwidth (" + std::to_string(r.bandwidth->mb_per_s) + " MB/s)";
  }
  if (!r.latency && !r.bandwidth) return "ok with neither latency nor bandwidth";
  for (const auto& flow : r.flows) {
    if (flow.corrupted_bytes != 0) return "a flow with corrupted bytes";
    if (flow.iterations_run == 0) return "a flow that ran no iterations";
  }
  return "";
}

/// Sweeps `count` cases drawn with `seed` over a transport with `caps`.
Tally sweep(std::uint64_t seed, int count, const Capabilities& caps) {
  std::mt19937_64 rng(seed);
  Tally tally;
  for (int i = 0; i < count; ++i) {
    const OddCase c = draw(rng, i);
    const std::string text = "suite: odd\ndefaults:\n  validate: true\ntests:\n" + c.yaml;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", case " + std::to_string(i) + ":\n" + text);
    model::SuiteSpec suite;
    try {
      suite = suite::parse_suite(text, "odd.yaml");
    } catch (const std::exception& e) {
      // Refused before anything runs, with the knob and the reason.
      EXPECT_GT(std::string(e.what()).size(), 10u) << "refused without a reason";
      ++tally.refused;
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    std::string trouble;
    const std::vector<Record> records = run_both_sides(suite, caps, trouble);
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(trouble, "");
    // Bounded: the slowest case is a few 0.2 s durations, or a few 8 MiB
    // messages; a loaded machine gets a wide margin.
    EXPECT_LT(took, 60s);
    EXPECT_EQ(records.size(), suite.tests[0].sizes.size());
    for (const auto& r : records) {
      const std::string v = violation(r);
      EXPECT_EQ(v, "") << "size " << r.size;
      if (r.status == Status::ok)
        ++tally.ok;
      else if (r.status == Status::skipped)
        ++tally.skipped;
    }
  }
  return tally;
}

void report(const char* what, const Tally& t) {
  std::printf("%s: %d sizes ran ok, %d skipped, %d cases refused\n", what, t.ok, t.skipped,
              t.refused);
}

// The property can fail: a transport that corrupts payloads breaks it.
TEST(OddParameters, ThePropertyCatchesACorruptedPayload) {
  const auto suite = suite::parse_suite(
      "suite: odd\ndefaults:\n  validate: true\ntests:\n"
      "  - {name: bad, op: send, pattern: bandwidth, window: 4, sizes: [4097], iterations: 40}\n",
      "odd.yaml");
  std::string trouble;
  const auto records =
      run_both_sides(suite, testing::FakeContext::everything(), trouble, /*corrupt_every=*/3);
  ASSERT_EQ(records.size(), 1u) << trouble;
  EXPECT_NE(violation(records[0]), "");
}

// Four shards of a hundred cases each (the ctest of each stays short, and
// they run in parallel); each shard a seed of its own.
TEST(OddParameters, EveryCombinationRunsCleanOrSaysWhyNot_Capable1) {
  const Tally t = sweep(1, 100, testing::FakeContext::everything());
  report("capable transport, seed 1", t);
  EXPECT_GT(t.ok, 30);  // the sweep measures, it does not only refuse
}

TEST(OddParameters, EveryCombinationRunsCleanOrSaysWhyNot_Capable2) {
  const Tally t = sweep(2, 100, testing::FakeContext::everything());
  report("capable transport, seed 2", t);
  EXPECT_GT(t.ok, 30);
}

TEST(OddParameters, EveryCombinationRunsCleanOrSaysWhyNot_Limited1) {
  const Tally t = sweep(3, 100, limited());
  report("limited transport, seed 3", t);
  EXPECT_GT(t.ok, 10);
  EXPECT_GT(t.skipped, 10);  // its limits are met
}

TEST(OddParameters, EveryCombinationRunsCleanOrSaysWhyNot_Limited2) {
  const Tally t = sweep(4, 100, limited());
  report("limited transport, seed 4", t);
  EXPECT_GT(t.ok, 10);
  EXPECT_GT(t.skipped, 10);
}

}  // namespace
}  // namespace uniperf
