#include "session/separate_flows_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>

#include "results/competition.hpp"
#include "results/flows_summary.hpp"
#include "results/overlap.hpp"
#include "results/stats.hpp"
#include "session/remote_flow_gate.hpp"

namespace uniperf::session {

namespace {

/// Flow k's figures, as its pair measured them alone.
results::FlowResult flow_result(results::Record& pair) {
  results::FlowResult flow;
  flow.flow = pair.flow;
  flow.iterations_run = pair.iterations_run;
  flow.latency = pair.latency;
  flow.bandwidth = pair.bandwidth;
  flow.corrupted_bytes = pair.corrupted_bytes;
  flow.measured = pair.measured;
  flow.placement = pair.placement;
  flow.cpu_time = pair.cpu_time;
  return flow;
}

/// The first flow whose record is not ok gives the test's status and
/// reason (a flow that cannot run skips the test, as it would skip a test
/// of threads' flows). A flow the gate stopped for another's failure gives
/// way to that other one.
void take_failure(results::Record& record, const std::vector<results::Record>& flows) {
  auto for_another = [&](std::size_t k) {
    return flows[k].reason.find(kAnotherFlowFailed) != std::string::npos;
  };
  std::optional<std::size_t> failed;
  for (std::size_t k = 0; k < flows.size(); ++k) {
    if (flows[k].status == results::Status::ok) continue;
    if (!failed || (for_another(*failed) && !for_another(k))) failed = k;
  }
  if (!failed) return;
  const results::Record& flow = flows[*failed];
  record.status = flow.status;
  // Every pair said the same (a size no flow runs: each pair skips it with
  // the test's reason): said once, as a test of threads' flows says it.
  const bool alike = std::all_of(flows.begin(), flows.end(), [&](const results::Record& r) {
    return r.status == flow.status && r.reason == flow.reason;
  });
  record.reason = alike ? flow.reason : fmt::format("flow {}: {}", *failed + 1, flow.reason);
  record.failure = flow.failure;
}

}  // namespace

results::Record separate_flows_record(std::vector<results::Record> flows, double timeline_bin_us) {
  results::Record record = flows.front();
  record.flows.clear();
  record.trace.clear();
  record.trace_count.reset();
  record.kept_samples.clear();
  record.iterations.reset();
  record.samples_kept = 0;
  record.latency.reset();
  record.bandwidth.reset();
  record.trials.clear();
  record.ci95.clear();
  record.rails.clear();
  record.fairness_jain.reset();
  record.cpu_time.reset();
  record.iterations_run = 0;
  record.corrupted_bytes = 0;
  record.warnings.clear();
  take_failure(record, flows);
  if (record.status != results::Status::ok) return record;

  std::vector<results::MeasuredInterval> intervals;
  for (std::uint32_t k = 0; k < flows.size(); ++k) {
    results::Record& pair = flows[k];
    record.flows.push_back(flow_result(pair));
    record.iterations_run += pair.iterations_run;
    record.corrupted_bytes += pair.corrupted_bytes;
    if (pair.measured) intervals.push_back(*pair.measured);
    for (const std::string& warning : pair.warnings)
      record.warnings.push_back(fmt::format("flow {}: {}", k + 1, warning));
    // What went over each rail, every flow's summed (each pair binds its
    // own, or stripes over all).
    if (record.rails.size() < pair.rails.size()) record.rails.resize(pair.rails.size());
    for (std::size_t r = 0; r < pair.rails.size(); ++r) {
      record.rails[r].bytes += pair.rails[r].bytes;
      record.rails[r].requests += pair.rails[r].requests;
    }
    for (results::Record::KeptSamples& kept : pair.kept_samples) {
      record.samples_kept += kept.us.size();
      record.kept_samples.push_back({.flow = k, .us = std::move(kept.us)});
    }
    for (results::TraceRow& row : pair.trace) {
      row.flow = k;
      record.trace.push_back(row);
    }
    results::release_trace_rows(pair);
    if (pair.trace_count) {
      if (!record.trace_count) record.trace_count.emplace();
      record.trace_count->rows += pair.trace_count->rows;
      record.trace_count->dropped += pair.trace_count->dropped;
    }
  }

  // The aggregate: every flow's bytes over the union of their intervals.
  const auto extent = results::extent_of<std::int64_t>(
      intervals, [](const auto& i) { return i.from_unix_us; },
      [](const auto& i) { return i.to_unix_us; });
  double seconds = 0;
  if (extent) {
    record.measured =
        results::MeasuredInterval{.from_unix_us = extent->span_from, .to_unix_us = extent->span_to};
    seconds = static_cast<double>(extent->span_to - extent->span_from) / 1e6;
  }
  // With trials each pair pooled its own (bytes and seconds summed; its
  // interval first trial to last), and the union would count the pauses
  // between trials as time the flows ran: the pairs ran together in every
  // trial, so the aggregate is over the longest pair's summed seconds, and
  // each trial's figures are its pairs' rates summed, as a test of threads'
  // flows reports each trial's aggregate.
  const std::size_t trials = flows.front().trials.size();
  if (trials > 1 && std::all_of(flows.begin(), flows.end(), [&](const results::Record& pair) {
        return pair.trials.size() == trials && pair.bandwidth;
      })) {
    seconds = 0;
    for (const results::Record& pair : flows) seconds = std::max(seconds, pair.bandwidth->seconds);
    record.trials.resize(trials);
    for (std::size_t t = 0; t < trials; ++t) {
      results::TrialSummary& sum = record.trials[t];
      for (const results::Record& pair : flows) {
        const results::TrialSummary& one = pair.trials[t];
        sum.iterations_run += one.iterations_run;
        sum.mb_per_s += one.mb_per_s;
        sum.mmsg_per_s += one.mmsg_per_s;
      }
      // Latency is each flow's own (flows[].latency_us); the first flow's
      // stands for the test's, as a record's latency does for threads' flows.
      sum.p50_us = flows.front().trials[t].p50_us;
      sum.mean_us = flows.front().trials[t].mean_us;
    }
    results::compute_trial_intervals(record);
  }
  results::rate_rails(record.rails, seconds);
  // Each side's CPU: every pair's processes of that side, summed, over the
  // union (each flow keeps its own pair's).
  if (std::all_of(flows.begin(), flows.end(), [](const auto& r) { return r.cpu_time; })) {
    results::CpuTime& cpu = record.cpu_time.emplace();
    for (const results::Record& pair : flows) {
      cpu.initiator += pair.cpu_time->initiator;
      cpu.responder += pair.cpu_time->responder;
    }
    cpu.initiator.seconds = cpu.responder.seconds = seconds;
  }
  results::summarise_flows(record, seconds, timeline_bin_us);
  // Each latency flow's percentiles while every flow ran, from the
  // iterations its pair kept (on rank 0's clock, as the intervals are).
  if (extent && extent->has_common() && intervals.size() == flows.size()) {
    for (std::size_t k = 0; k < flows.size(); ++k) {
      if (!flows[k].iterations) continue;
      record.flows[k].common_latency = results::latency_within(
          *flows[k].iterations, extent->common_from * 1000, extent->common_to * 1000);
      flows[k].iterations.reset();
    }
  }
  if (record.corrupted_bytes != 0) {
    record.status = results::Status::error;
    record.reason =
        "payload validation failed: " + std::to_string(record.corrupted_bytes) + " corrupted bytes";
  }
  return record;
}

}  // namespace uniperf::session
