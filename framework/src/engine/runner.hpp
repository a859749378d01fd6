// The engine: runs one flow of a test over one connected plugin Context,
// size after size, on both sides in lockstep (rank 0 measures, rank 1
// serves). It owns the test semantics (docs/architecture.md); plugins only
// move bytes. What it runs is decided before it starts, in the flow's plan
// (engine/plan.hpp); how each pattern runs is in engine/loops.hpp, chosen
// once per phase.
#pragma once

#include <atomic>
#include <memory>
#include <uniperf/plugin.hpp>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/clock.hpp"
#include "engine/cpu_meter.hpp"
#include "engine/errors.hpp"
#include "engine/flow_group.hpp"
#include "engine/mapped_buffer.hpp"
#include "engine/plan.hpp"
#include "engine/trace.hpp"
#include "model/latency_distribution.hpp"

namespace uniperf::engine {
struct ProgressMeter;
}

namespace uniperf::engine {

/// What went over one rail of a config's rails in a measured stream.
struct RailTally {
  std::uint64_t bytes = 0;
  std::uint64_t requests = 0;  ///< work requests: a striped message's pieces count apart
  /// A latency phase's samples this rail took part in: every one of a
  /// bound flow's rail or a striped message's rails, every other one over
  /// two alternating rails. Empty for a stream.
  model::LatencyDistribution latency;
};

/// What this side measured for one size.
struct SizeOutcome {
  /// Every iteration's sample (rank 0 of latency tests), exactly up to a
  /// bound and then folded (model/latency_distribution.hpp).
  model::LatencyDistribution latency;
  bool one_way = true;  ///< samples are RTT/2 (send, write) or full RTT
  /// With a latency gap (FlowSpec::latency_gap): when each kept sample's
  /// iteration began, in microseconds after `started`. Empty when the
  /// iterations ran back to back (each began where the one before ended).
  std::vector<double> latency_begins_us;
  /// Without a gap, where each segment after the first resumed (between two
  /// segments the initiator adds their samples, engine/runner.cpp):
  /// {index of its first sample, microseconds after `started`}, for the
  /// kept samples. Within a segment the iterations ran back to back.
  std::vector<std::pair<std::uint64_t, double>> latency_resumes_us;
  std::uint64_t bytes = 0;  ///< payload bytes moved by the measured ops (both directions for bi)
  /// Per rail, over a config with several (rank 0; both directions for bi):
  /// what went over each. Empty over one rail.
  std::vector<RailTally> rails;
  std::uint64_t messages = 0;
  /// A pipelined flow (FlowSpec::fragment > 0): the requests its messages
  /// went as; 0 otherwise.
  std::uint64_t fragments = 0;
  /// First post -> last completion; a latency phase's is the time its
  /// iterations took (its segments', not the moments between them).
  double seconds = 0;
  /// The same interval on this side's clock (rank 0; bandwidth and latency
  /// phases), so concurrent flows' intervals can be combined.
  Ticks started = 0, finished = 0;
  std::uint64_t iterations = 0;  ///< measured iterations completed
  std::uint64_t corrupted_bytes = 0;
  /// A stream over an unreliable transport (FlowPlan::counts_loss):
  /// `messages` and `bytes` count what arrived, `messages_sent` what was
  /// posted; the difference was lost.
  bool counts_loss = false;
  std::uint64_t messages_sent = 0;
  /// The CPU each side's process used over the measured phase (rank 0
  /// holds both: the responder sends its own at the phase's end).
  CpuUse initiator_cpu, responder_cpu;
  /// The measured phase's per-request trace, this side's requests (a flow
  /// with `trace` set; FlowTrace::every is 0 otherwise).
  FlowTrace trace;
};

/// A buffer of the plan's lane size per lane, on the flow's pages. Throws
/// Unavailable naming the reason when they cannot be had.
LaneMemory map_lane_memory(const FlowPlan& plan);

class TestRunner {
 public:
  /// `abort` is raised by the session's watchdog (peer gone, deadline);
  /// the loops check it whenever they find nothing to do and then throw
  /// Aborted. A flow of a test with several is flow `index` of `group`,
  /// which starts and stops their measured phases; a lone flow has none.
  TestRunner(Context& context, bootstrap::Bootstrap& control, FlowPlan plan,
             const std::atomic<bool>& abort, FlowGate* group = nullptr, std::size_t index = 0);
  /// Over a config's rails: one Context per rail, each lane's endpoint on
  /// the rail its plan names (FlowPlan::lanes).
  TestRunner(std::vector<Context*> rails, bootstrap::Bootstrap& control, FlowPlan plan,
             const std::atomic<bool>& abort, FlowGate* group = nullptr, std::size_t index = 0);
  ~TestRunner();
  TestRunner(const TestRunner&) = delete;
  TestRunner& operator=(const TestRunner&) = delete;

  /// Allocates and registers buffers for the plan's largest size, connects
  /// the flow's endpoints and exchanges buffer keys. Both sides call it.
  /// `mapped`: a buffer per lane mapped beforehand (map_lane_memory), so
  /// that huge pages that cannot be had are known before the two sides
  /// agree what runs; a flow on huge pages given none maps its own here.
  void setup(LaneMemory mapped = {});
  /// Runs warm-up and measurement at one of the plan's sizes. Both sides
  /// call it.
  SizeOutcome run(std::uint64_t size);
  /// The flow's sign of life, for the session's watchdog (another thread).
  const ProgressMeter& progress() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uniperf::engine
