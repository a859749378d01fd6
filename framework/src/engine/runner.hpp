// The engine: runs one test of a suite over one connected plugin Context,
// size after size, on both sides in lockstep (rank 0 measures, rank 1
// serves). It owns every test semantic of DESIGN §3; plugins only move bytes.
//
// Loops are chosen once per size from the flow's op, pattern and window
// mode; inside a loop nothing branches on the test type, nothing allocates
// and nothing logs. The only per-iteration work besides the transport calls
// is counter arithmetic and, in latency tests, one clock read.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/clock.hpp"
#include "model/test_spec.hpp"

namespace uniperf::engine {

// The engine runs the test model's values (model/test_spec.hpp).
using model::BufferMode;
using model::CompletionMode;
using model::Direction;
using model::Duration;
using model::FlowSpec;
using model::Pattern;
using model::TestSpec;
using model::WindowMode;

/// What this side measured for one size.
struct SizeOutcome {
  std::vector<double> latency_us;  ///< per-iteration samples (rank 0 of latency tests)
  bool one_way = true;             ///< samples are RTT/2 (send, write) or full RTT
  std::uint64_t bytes = 0;  ///< payload bytes moved by the measured ops (both directions for bi)
  std::uint64_t messages = 0;
  double seconds = 0;  ///< first post -> last completion
  /// The same interval on this side's clock (rank 0; bandwidth and latency
  /// phases), so concurrent flows' intervals can be combined.
  Ticks started = 0, finished = 0;
  std::uint64_t iterations = 0;  ///< measured iterations completed
  std::uint64_t corrupted_bytes = 0;
};

/// "" when `ctx_caps` can run the test at `size`, else why not (the test is
/// then SKIPPED). Checked identically on both sides before setup.
std::string skip_reason(const TestSpec& test, const FlowSpec& flow, const Capabilities& caps,
                        std::uint64_t size);

/// The flow as it will really run on this plugin (inline clamped to the
/// plugin's max_inline), and which features the plugin emulates for it.
FlowSpec effective_flow(const FlowSpec& flow, const Capabilities& caps);
std::vector<std::string> emulated_features(const FlowSpec& flow, const Capabilities& caps);

class TestRunner {
 public:
  /// `abort` is raised by the session's watchdog (peer gone, deadline);
  /// the loops check it whenever they find nothing to do.
  TestRunner(Context& context, bootstrap::Bootstrap& bootstrap, const TestSpec& test,
             const std::atomic<bool>& abort);
  ~TestRunner();
  TestRunner(const TestRunner&) = delete;
  TestRunner& operator=(const TestRunner&) = delete;

  /// Allocates and registers buffers for the test's largest size, connects
  /// the flow's endpoints and exchanges buffer keys. Both sides call it.
  void setup();
  /// Runs warm-up and measurement at one size. Both sides call it.
  SizeOutcome run(std::uint64_t size);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uniperf::engine
