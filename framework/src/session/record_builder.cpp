#include "session/record_builder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>
#include <string>

#include "engine/clock.hpp"
#include "engine/lane.hpp"
#include "model/flow_fields.hpp"
#include "results/competition.hpp"
#include "results/flows_summary.hpp"
#include "results/overlap.hpp"
#include "results/stats.hpp"

namespace uniperf::session {
namespace {

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

results::FlowResult flow_result(const model::FlowSpec& flow, const engine::SizeOutcome& outcome) {
  results::FlowResult result;
  result.flow = flow;
  result.iterations_run = outcome.iterations;
  result.corrupted_bytes = outcome.corrupted_bytes;
  if (flow.pattern == model::Pattern::latency) {
    result.latency = results::compute_latency(outcome.latency, outcome.one_way);
  }
  result.bandwidth = results::compute_bandwidth(outcome.bytes, outcome.messages, outcome.seconds);
  if (outcome.counts_loss) result.bandwidth->messages_sent = outcome.messages_sent;
  if (outcome.fragments > 0) result.bandwidth->fragments = outcome.fragments;
  return result;
}

/// This process's timed-loop clock read on the wall clock: both read once,
/// now, and every earlier reading placed back from there, so readings
/// converted by one WallClock keep their order (to the nanosecond).
class WallClock {
 public:
  WallClock()
      : ticks_per_us_(engine::lifetime_ticks_per_us()),
        ticks_now_(engine::now()),
        wall_now_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()) {}

  /// None for an empty interval.
  std::optional<results::MeasuredInterval> interval(engine::Ticks first, engine::Ticks last) const {
    if (first == 0 || last <= first) return std::nullopt;
    return results::MeasuredInterval{.from_unix_us = ns(first) / 1000,
                                     .to_unix_us = ns(last) / 1000};
  }

  /// Nanoseconds since the Unix epoch.
  std::int64_t ns(engine::Ticks t) const {
    const double ago_us =
        t < ticks_now_ ? static_cast<double>(ticks_now_ - t) / ticks_per_us_ : 0.0;
    return wall_now_ns_ - static_cast<std::int64_t>(ago_us * 1e3);
  }

 private:
  double ticks_per_us_;  ///< over the process's life: readings a second back land within a us
  engine::Ticks ticks_now_;
  std::int64_t wall_now_ns_;
};

/// The traced flows' rows on the wall clock, flow after flow.
void fill_trace(results::Record& record, const std::vector<engine::SizeOutcome>& outcomes,
                const WallClock& wall) {
  results::TraceCount count;
  bool traced = false;
  for (std::uint32_t k = 0; k < outcomes.size(); ++k) {
    const engine::FlowTrace& trace = outcomes[k].trace;
    if (trace.every == 0) continue;
    traced = true;
    count.rows += trace.rows.size();
    count.dropped += trace.dropped;
    for (const engine::TraceRow& row : trace.rows) {
      record.trace.push_back({.flow = k,
                              .lane = row.lane,
                              .id = row.id,
                              .posted_ns = wall.ns(row.posted),
                              .returned_ns = row.returned ? wall.ns(row.returned) : 0,
                              .completed_ns = row.completed ? wall.ns(row.completed) : 0,
                              .signaled = row.signaled != 0});
    }
  }
  if (!traced) return;
  record.trace_count = count;
  if (count.dropped > 0) {
    record.warnings.push_back(fmt::format(
        "the trace kept {} rows and had no room for {} more requests (raise trace_max, or "
        "trace 1 in N)",
        count.rows, count.dropped));
  }
}

/// Each latency flow's percentiles over the iterations it ran while every
/// flow ran (all flows measured on this side's clock), from its samples in
/// the order they ran.
std::vector<std::optional<results::LatencyStats>> latency_while_all_ran(
    const std::vector<engine::SizeOutcome>& outcomes) {
  std::vector<std::optional<results::LatencyStats>> within(outcomes.size());
  for (const auto& outcome : outcomes) {
    if (outcome.started == 0 || outcome.finished <= outcome.started) return within;
  }
  const auto extent = results::extent_of<engine::Ticks>(
      outcomes, [](const engine::SizeOutcome& o) { return o.started; },
      [](const engine::SizeOutcome& o) { return o.finished; });
  if (!extent || !extent->has_common()) return within;
  const auto us = [first = extent->span_from](engine::Ticks t) {
    return engine::ticks_to_us(t - first);
  };
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    const auto& outcome = outcomes[k];
    if (outcome.latency.empty()) continue;
    within[k] = results::latency_within(outcome.latency.kept(), outcome.one_way,
                                        us(outcome.started), us(extent->common_from),
                                        us(extent->common_to), outcome.latency_begins_us,
                                        outcome.latency.complete(), outcome.latency_resumes_us);
  }
  return within;
}

/// Loss is a result; above a flow's max_loss it also fails the record.
/// Empty when every flow is within its limit.
std::string loss_failure(const model::FlowSpec& flow, const results::BandwidthStats& b,
                         const std::string& which) {
  if (!b.messages_sent || b.loss_rate() <= flow.max_loss) return {};
  return fmt::format("{}lost {} of {} messages ({:.3g}%), above max_loss {:.3g}%", which,
                     b.messages_lost(), *b.messages_sent, 100 * b.loss_rate(), 100 * flow.max_loss);
}

/// A rate limit is a ceiling: the record's rates are what was achieved,
/// and a limit the transport could not reach is said (its rates then are
/// the transport's, not the pace's). Empty when the limit was reached.
std::string pace_shortfall(const model::FlowSpec& flow, const results::BandwidthStats& b,
                           const std::string& which) {
  // Below this share of its limit a paced stream was held back by the
  // transport (or the machine), not by the pace.
  constexpr double kReached = 0.9;
  const model::Rate& limit = flow.rate_limit;
  if (limit.per_second <= 0) return {};
  // Each side of a bidirectional stream keeps the pace on its own.
  const double directions = flow.direction == model::Direction::bi ? 2 : 1;
  const double achieved = (limit.bits ? b.gbit_per_s * 1e9 : b.mmsg_per_s * 1e6) / directions;
  if (achieved >= kReached * limit.per_second) return {};
  // Four significant digits: "493.6Mb/s", not the double's every digit.
  const model::Rate got{.per_second = std::stod(fmt::format("{:.4g}", achieved)),
                        .bits = limit.bits};
  return fmt::format("{}rate_limit {} not reached: {} achieved (the transport's own rate)", which,
                     model::rate_text(limit), model::rate_text(got));
}

/// Every flow's share of each rail, summed, over the record's interval
/// (first post -> last completion of all its flows).
void fill_rails(results::Record& record, const std::vector<engine::SizeOutcome>& outcomes) {
  std::vector<engine::RailTally> sum;
  double seconds = 0;
  bool one_way = true;
  for (const auto& outcome : outcomes) {
    if (sum.size() < outcome.rails.size()) sum.resize(outcome.rails.size());
    for (std::size_t r = 0; r < outcome.rails.size(); ++r) {
      sum[r].bytes += outcome.rails[r].bytes;
      sum[r].requests += outcome.rails[r].requests;
      sum[r].latency.merge(outcome.rails[r].latency);
    }
    seconds = std::max(seconds, outcome.seconds);
    if (!outcome.latency.empty()) one_way = outcome.one_way;
  }
  for (const engine::RailTally& rail : sum) {
    record.rails.push_back({.bytes = rail.bytes, .requests = rail.requests, .latency = {}});
    if (!rail.latency.empty())
      record.rails.back().latency = results::compute_latency(rail.latency, one_way);
  }
  results::rate_rails(record.rails, seconds);
}

}  // namespace

void fill_results(results::Record& record, const std::vector<engine::FlowPlan>& plans,
                  std::vector<engine::SizeOutcome>& outcomes,
                  std::chrono::microseconds timeline_bin) {
  engine::Ticks first = std::numeric_limits<engine::Ticks>::max(), last = 0;
  for (const auto& outcome : outcomes) {
    first = std::min(first, outcome.started);
    last = std::max(last, outcome.finished);
  }
  const WallClock wall;
  record.measured = wall.interval(first, last);
  fill_trace(record, outcomes, wall);
  // In the order the iterations ran: every one, or the first of a phase
  // longer than the samples kept (samples_kept then says how many).
  for (std::size_t k = 0; k < outcomes.size() && k < plans.size(); ++k) {
    const auto kept = outcomes[k].latency.kept();
    if (!plans[k].flow.keep_samples || kept.empty()) continue;
    record.kept_samples.push_back({.flow = static_cast<std::uint32_t>(k),
                                   .us = std::vector<double>(kept.begin(), kept.end())});
    record.samples_kept += kept.size();
  }
  // The initiator holds both sides' CPU (the first flow's phase: the
  // others share it, and each side's figure is its whole process's).
  if (!outcomes.empty() && outcomes.front().initiator_cpu.seconds > 0) {
    record.cpu_time = results::CpuTime{.initiator = outcomes.front().initiator_cpu,
                                       .responder = outcomes.front().responder_cpu};
  }
  fill_rails(record, outcomes);
  if (outcomes.size() == 1) {
    results::FlowResult only = flow_result(plans.front().flow, outcomes.front());
    record.iterations_run = only.iterations_run;
    record.corrupted_bytes = only.corrupted_bytes;
    record.latency = std::move(only.latency);
    record.bandwidth = std::move(only.bandwidth);
  } else {
    record.flows.resize(outcomes.size());
    const auto common_latency = latency_while_all_ran(outcomes);
    for (std::size_t k = 0; k < outcomes.size(); ++k) {
      auto& outcome = outcomes[k];
      record.flows[k] = flow_result(plans[k].flow, outcome);
      record.flows[k].common_latency = common_latency[k];
      record.flows[k].measured = wall.interval(outcome.started, outcome.finished);
      record.iterations_run += outcome.iterations;
      record.corrupted_bytes += outcome.corrupted_bytes;
    }
    // Every flow's bytes over the union of their intervals (all measured
    // on this side's clock).
    const double seconds = last > first ? engine::ticks_to_us(last - first) / 1e6 : 0;
    results::summarise_flows(record, seconds, static_cast<double>(timeline_bin.count()));
  }
  if (record.flows.empty() && record.bandwidth) {
    if (auto shortfall = pace_shortfall(plans.front().flow, *record.bandwidth, "");
        !shortfall.empty())
      record.warnings.push_back(std::move(shortfall));
  }
  for (std::size_t k = 0; k < record.flows.size(); ++k) {
    if (!record.flows[k].bandwidth) continue;
    if (auto shortfall = pace_shortfall(record.flows[k].flow, *record.flows[k].bandwidth,
                                        "flow " + std::to_string(k + 1) + ": ");
        !shortfall.empty())
      record.warnings.push_back(std::move(shortfall));
  }
  std::string loss;
  if (record.flows.empty() && record.bandwidth) {
    loss = loss_failure(plans.front().flow, *record.bandwidth, "");
  }
  for (std::size_t k = 0; k < record.flows.size() && loss.empty(); ++k) {
    if (record.flows[k].bandwidth) {
      loss = loss_failure(record.flows[k].flow, *record.flows[k].bandwidth,
                          "flow " + std::to_string(k + 1) + ": ");
    }
  }
  if (!loss.empty()) {
    record.status = results::Status::error;
    record.reason = loss;
  }
  if (record.corrupted_bytes != 0) {
    record.status = results::Status::error;
    record.reason =
        "payload validation failed: " + std::to_string(record.corrupted_bytes) + " corrupted bytes";
  }
}

RecordBuilder::RecordBuilder(const model::SuiteSpec& suite, const RunSettings& settings)
    : suite_name_(suite.name), settings_(settings), host_(hostname()) {}

void RecordBuilder::set_config(const Plugin* plugin, std::string device,
                               std::optional<int> device_numa_node) {
  plugin_ = plugin;
  device_ = std::move(device);
  device_numa_node_ = device_numa_node;
}

void keep_iterations(results::Record& record, const engine::SizeOutcome& outcome) {
  if (outcome.latency.empty() || outcome.started == 0) return;
  const std::span<const double> kept = outcome.latency.kept();
  record.iterations =
      results::Record::Iterations{.started_ns = WallClock().ns(outcome.started),
                                  .one_way = outcome.one_way,
                                  .all_samples = outcome.latency.complete(),
                                  .samples_us = std::vector<double>(kept.begin(), kept.end()),
                                  .begins_us = outcome.latency_begins_us,
                                  .resumes_us = outcome.latency_resumes_us};
}

results::Record RecordBuilder::make(const model::ConfigSpec& config, const model::TestSpec& test,
                                    const std::vector<engine::FlowPlan>& plans,
                                    std::uint64_t size) const {
  results::Record r;
  r.suite = suite_name_;
  r.config = config.name;
  r.plugin = config.plugin;
  if (plugin_ != nullptr) {
    r.plugin_version = plugin_->version();
    r.library_version = plugin_->library_version();
  }
  r.device = device_;
  r.device_numa_node = device_numa_node_;
  r.test = test.name;
  r.size = size;
  r.flow = plans.front().flow;
  r.duration = test.duration;
  r.preset = test.preset;
  if (test.flows.size() > 1) {
    // Every flow's parameters, also when the test does not run.
    for (const auto& plan : plans) {
      results::FlowResult parameters;
      parameters.flow = plan.flow;
      r.flows.push_back(std::move(parameters));
    }
  }
  for (const auto& plan : plans) {
    for (const auto& feature : plan.emulated) {
      if (std::find(r.emulated.begin(), r.emulated.end(), feature) == r.emulated.end()) {
        r.emulated.push_back(std::move(feature));
      }
    }
  }
  const auto& clock = engine::clock_info();
  r.clock_source = clock.source;
  r.clock_ghz = clock.ticks_per_us / 1e3;
  r.host = host_;
  r.timestamp = utc_timestamp();
  r.provenance = settings_.provenance;
  if (const auto tuned = settings_.tuned_by.find(r.config); tuned != settings_.tuned_by.end())
    r.provenance["tuned_by"] = tuned->second;
  r.placement = settings_.placement;
  r.warnings = settings_.warnings;
  // window_ack measures whole windows (the receiver acknowledges every
  // `window` messages): a count that is not one is rounded up, and said so.
  for (const auto& plan : plans) {
    const model::FlowSpec& flow = plan.flow;
    const std::uint64_t given = plan.run.iterations;
    if (flow.window_mode != model::WindowMode::window_ack || plan.run.seconds > 0) continue;
    const std::uint64_t runs = engine::policy::whole_windows(given, flow.window);
    if (runs != given) {
      r.warnings.push_back(fmt::format(
          "window_ack runs whole windows: {} iterations per endpoint rounded up to {} (window {})",
          given, runs, flow.window));
      break;
    }
  }
  return r;
}

}  // namespace uniperf::session
