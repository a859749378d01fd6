// A test's flows run at once: each with its own runner (and, for plugins
// whose endpoints are not thread-safe, its own Context) and, when there are
// several, its own control channel and thread, started together by their
// first barriers.
#pragma once

#include <cstdint>
#include <memory>
#include <uniperf/plugin.hpp>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/channel_mux.hpp"
#include "engine/flow_group.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "session/watchdog.hpp"

namespace uniperf::session {

class ConcurrentFlows {
 public:
  ConcurrentFlows(bootstrap::Bootstrap& control, Watchdog& watchdog)
      : control_(control), watchdog_(watchdog) {}
  ~ConcurrentFlows();
  ConcurrentFlows(const ConcurrentFlows&) = delete;
  ConcurrentFlows& operator=(const ConcurrentFlows&) = delete;

  /// Sets every flow up, one after the other in the same order on both
  /// sides (only their measured phases run at once). `rails` (a Context per
  /// rail of the config, opened with `rail_options`) serve the first flow,
  /// and every flow when the plugin's endpoints are thread-safe; otherwise
  /// `plugin` opens one more Context per flow and rail, which may throw
  /// Unsupported (on both sides alike). Several flows start their measured
  /// phases together and stop by `until` (engine::FlowGroup). `mapped`:
  /// each flow's lane buffers mapped beforehand (empty: none for it).
  /// `separate`: this process pair runs one flow of a test whose flows run
  /// in process pairs of their own, started and stopped by this gate
  /// (session/remote_flow_gate.hpp); null otherwise.
  void set_up(const std::vector<engine::FlowPlan>& plans, model::StopRule until,
              const std::vector<Context*>& rails, Plugin& plugin,
              const std::vector<Options>& rail_options, std::vector<engine::LaneMemory> mapped = {},
              engine::FlowGate* separate = nullptr);

  /// One size of every flow, each on its own thread (the first on this
  /// one). The first failure stops the others (the watchdog trips them) and
  /// is rethrown with its flow's number; the flows it stopped only say
  /// engine::Aborted, so theirs is not the reason given.
  std::vector<engine::SizeOutcome> run_size(std::uint64_t size);

 private:
  bootstrap::Bootstrap& control_;
  Watchdog& watchdog_;
  // Declared before the runners that use them, so destroyed after.
  std::vector<std::unique_ptr<Context>> extra_contexts_;
  std::unique_ptr<bootstrap::ChannelMux> channels_;
  std::unique_ptr<engine::FlowGroup> group_;
  engine::FlowGate* gate_ = nullptr;  ///< group_, or a separate flow's gate
  std::vector<std::unique_ptr<engine::TestRunner>> runners_;
};

}  // namespace uniperf::session
