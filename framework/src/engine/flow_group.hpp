// The flows of one test on one side, each on its own thread: they start
// every measured phase together, and the test's stop rule (model::StopRule)
// ends their measured phases. Each flow's loops read their own stop time
// (StopTime, a cache line of its own) at the checks they already make (a
// ping-pong per iteration, a stream once per pass); a flow that is done
// moves the others' stop times to now, and they stop at their next check
// (a stream at its next signaled request, so every posted request is
// still covered by a completion). No lock or allocation is on that path.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/clock.hpp"
#include "model/test_spec.hpp"

namespace uniperf::engine {

inline constexpr Ticks kNever = std::numeric_limits<Ticks>::max();

/// When a flow's loops stop: its phase's deadline, or earlier when the
/// group says so. Read relaxed in the loops; only ever lowered in a phase.
struct alignas(64) StopTime {
  std::atomic<Ticks> at{kNever};

  Ticks load() const { return at.load(std::memory_order_relaxed); }
  /// Lowers the stop time to `t` (never raises it).
  void lower_to(Ticks t) {
    Ticks current = at.load(std::memory_order_relaxed);
    while (t < current && !at.compare_exchange_weak(current, t, std::memory_order_relaxed)) {
    }
  }
};

/// Whether a flow of role `other` stops when a measured flow of its test
/// ends, by `rule`: every flow under first_done; under all_done the loads,
/// once the measured flow that ended was the last (`last_measured`).
constexpr bool stops_when_measured_flow_ends(model::StopRule rule, model::Role other,
                                             bool last_measured) {
  return rule == model::StopRule::first_done || (last_measured && other == model::Role::load);
}

/// How the flows of a test start and stop their measured phases together,
/// as the runner sees it: threads of one process (FlowGroup) or flows in
/// processes of their own (session/remote_flow_gate.hpp).
class FlowGate {
 public:
  virtual ~FlowGate() = default;

  /// The stop time flow `flow`'s loops read (its index in this gate).
  virtual StopTime& stop_of(std::size_t flow) = 0;

  /// Before a measured phase, every flow of the test: waits for the
  /// others, and the last to arrive opens the phase (every stop time
  /// "never", every measured flow running). Throws Aborted when `abort` is
  /// raised while it waits (another flow failed and will never come).
  virtual void gather(const std::atomic<bool>& abort) = 0;

  /// Flow `flow`'s measured loop ended on this side. A measured flow's end
  /// stops the others by the rule (stops_when_measured_flow_ends).
  virtual void done(std::size_t flow) = 0;
};

/// The flows of one test on one side, as threads of one process.
class FlowGroup final : public FlowGate {
 public:
  /// `roles`: each flow's, in order.
  FlowGroup(std::vector<model::Role> roles, model::StopRule rule);

  std::size_t size() const { return roles_.size(); }
  StopTime& stop_of(std::size_t flow) override { return stops_[flow]; }
  void gather(const std::atomic<bool>& abort) override;
  void done(std::size_t flow) override;

 private:
  const std::vector<model::Role> roles_;
  const model::StopRule rule_;
  const std::size_t measured_;
  std::unique_ptr<StopTime[]> stops_;
  std::atomic<std::size_t> measured_running_{0};

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::size_t waiting_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace uniperf::engine
