// Turns what the engine measured into result records: the parameters every
// record echoes (from the flows' plans, so a record says what really ran),
// who ran it and where, and the statistics of the samples.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "model/suite_spec.hpp"
#include "results/record.hpp"
#include "session/session.hpp"

namespace uniperf::session {

class RecordBuilder {
 public:
  RecordBuilder(const model::SuiteSpec& suite, const RunSettings& settings);

  /// The config now running: its plugin (null when not found) and device.
  void set_config(const Plugin* plugin, std::string device, std::optional<int> device_numa_node);

  /// A record of `test` at `size` with every parameter filled in and no
  /// results yet (skipped and failed sizes are recorded as such).
  results::Record make(const model::ConfigSpec& config, const model::TestSpec& test,
                       const std::vector<engine::FlowPlan>& plans, std::uint64_t size) const;

 private:
  std::string suite_name_;
  const RunSettings& settings_;
  std::string host_;
  const Plugin* plugin_ = nullptr;
  std::string device_;
  std::optional<int> device_numa_node_;
};

/// Fills `record`'s results from each flow's outcome (sorting their
/// samples): one flow's figures, or every flow's and their aggregate over
/// the union of their intervals, and for traced flows what they did while
/// all ran (results/competition.hpp; bandwidth over time in bins of
/// `timeline_bin`). Corrupted bytes make the record an error.
void fill_results(results::Record& record, const std::vector<engine::FlowPlan>& plans,
                  std::vector<engine::SizeOutcome>& outcomes,
                  std::chrono::microseconds timeline_bin = std::chrono::milliseconds(10));

/// The one flow of a pair's part of a test whose flows run in process pairs
/// of their own (model::FlowProcesses::separate): a latency flow's
/// iterations kept in `record.iterations` on the wall clock, for rank 0's
/// percentiles over the time every flow ran. Nothing for a stream.
void keep_iterations(results::Record& record, const engine::SizeOutcome& outcome);

}  // namespace uniperf::session
