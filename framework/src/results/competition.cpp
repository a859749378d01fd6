#include "results/competition.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "results/overlap.hpp"
#include "results/stats.hpp"

namespace uniperf::results {

double jain_index(std::span<const double> shares) {
  double sum = 0, squares = 0;
  for (const double x : shares) {
    sum += x;
    squares += x * x;
  }
  if (shares.empty() || squares == 0) return 1;
  return sum * sum / (static_cast<double>(shares.size()) * squares);
}

AloneBaseline compare_with_alone(const LatencyStats& beside, std::string test,
                                 const LatencyStats& alone) {
  const auto ratio = [](double under, double base) { return base > 0 ? under / base : 0.0; };
  return {.test = std::move(test),
          .latency = alone,
          .slowdown_p50 = ratio(beside.p50, alone.p50),
          .slowdown_p99 = ratio(beside.p99, alone.p99)};
}

std::optional<LatencyStats> latency_within(
    std::span<const double> samples_us, bool one_way, double started_us, double from_us,
    double to_us, std::span<const double> begins_us, bool all_samples,
    std::span<const std::pair<std::uint64_t, double>> resumes_us) {
  // The iterations' edges are sums of the samples, so they carry the
  // rounding of those sums; an edge this close to the interval's counts as on it.
  constexpr double kEdgeSlack_us = 1e-3;
  const double per_sample = one_way ? 2.0 : 1.0;
  const bool spaced = begins_us.size() == samples_us.size() && !begins_us.empty();
  std::vector<double> inside;
  double begins = started_us;
  bool past_interval = false;
  std::size_t next_resume = 0;
  for (std::size_t i = 0; i < samples_us.size(); ++i) {
    if (spaced) {
      begins = started_us + begins_us[i];
    } else if (next_resume < resumes_us.size() && resumes_us[next_resume].first == i) {
      begins = started_us + resumes_us[next_resume++].second;
    }
    const double ends = begins + samples_us[i] * per_sample;
    if (begins >= from_us - kEdgeSlack_us && ends <= to_us + kEdgeSlack_us)
      inside.push_back(samples_us[i]);
    if (ends > to_us + kEdgeSlack_us) {
      past_interval = true;
      break;
    }
    begins = ends;
  }
  if (inside.empty() || (!all_samples && !past_interval)) return std::nullopt;
  return compute_latency(inside, one_way);
}

std::optional<LatencyStats> latency_within(const Record::Iterations& iterations,
                                           std::int64_t from_ns, std::int64_t to_ns) {
  // Microseconds from the interval's start: small numbers, so a double
  // keeps the nanoseconds.
  const auto us = [from_ns](std::int64_t ns) { return static_cast<double>(ns - from_ns) / 1e3; };
  return latency_within(iterations.samples_us, iterations.one_way, us(iterations.started_ns), 0,
                        us(to_ns), iterations.begins_us, iterations.all_samples,
                        iterations.resumes_us);
}

void fill_competition(Record& record, std::span<const FlowSampling> sampling, double bin_us) {
  const std::size_t flows = record.flows.size();
  if (flows < 2 || sampling.size() != flows || record.trace.empty()) return;
  // The common interval and the span, from the flows' own intervals.
  for (const FlowResult& flow : record.flows) {
    if (!flow.measured) return;
  }
  const Extent<std::int64_t> extent = *extent_of<std::int64_t>(
      record.flows, [](const FlowResult& f) { return f.measured->from_unix_us; },
      [](const FlowResult& f) { return f.measured->to_unix_us; });
  const bool common = extent.has_common();
  const std::int64_t from_ns = extent.common_from * 1000, to_ns = extent.common_to * 1000;
  const std::int64_t span_from = extent.span_from;
  const double span_us = static_cast<double>(extent.span_to - extent.span_from);
  bin_us = std::max({bin_us, 1.0, std::ceil(span_us / static_cast<double>(kMostBins))});
  const auto bins = static_cast<std::size_t>(std::ceil(span_us / bin_us)) + 1;

  std::vector<std::uint64_t> in_common(flows, 0);
  std::vector<std::vector<std::uint64_t>> per_bin(flows);
  for (std::size_t k = 0; k < flows; ++k) {
    if (sampling[k].every > 0) per_bin[k].assign(bins, 0);
  }
  for (const TraceRow& row : record.trace) {
    if (row.flow >= flows || sampling[row.flow].every == 0 || row.completed_ns == 0) continue;
    if (common && row.completed_ns >= from_ns && row.completed_ns <= to_ns) ++in_common[row.flow];
    const double at_us =
        static_cast<double>(row.completed_ns) / 1e3 - static_cast<double>(span_from);
    const auto bin = static_cast<std::size_t>(std::clamp(at_us / bin_us, 0.0, double(bins - 1)));
    ++per_bin[row.flow][bin];
  }

  std::vector<double> shares;
  for (std::size_t k = 0; k < flows; ++k) {
    const FlowSampling& s = sampling[k];
    if (s.every == 0) continue;
    FlowResult& flow = record.flows[k];
    if (common) {
      const std::uint64_t messages = in_common[k] * s.every;
      flow.common = compute_bandwidth(messages * s.bytes, messages,
                                      static_cast<double>(to_ns - from_ns) / 1e9);
      if (flow.flow.pattern != model::Pattern::latency) shares.push_back(flow.common->mb_per_s);
    }
    Timeline timeline;
    timeline.bin_us = bin_us;
    timeline.mb_per_s.reserve(bins);
    for (const std::uint64_t rows : per_bin[k]) {
      timeline.mb_per_s.push_back(static_cast<double>(rows * s.every * s.bytes) / bin_us);
    }
    flow.timeline = std::move(timeline);
  }
  if (shares.size() >= 2) record.fairness_jain = jain_index(shares);
}

}  // namespace uniperf::results
