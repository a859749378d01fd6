#include "results/flows_summary.hpp"

#include <fmt/format.h>

#include "results/competition.hpp"
#include "results/overlap.hpp"
#include "results/stats.hpp"

namespace uniperf::results {

namespace {

/// How flow `flow` was traced: its rows' stride and each request's bytes
/// (an atomic moves one word; a flow without its own size has the test's).
FlowSampling sampling_of(const model::FlowSpec& flow, std::uint64_t test_size) {
  return {.every = flow.trace,
          .bytes = is_atomic(flow.op) ? 8
                   : flow.size != 0   ? flow.size
                                      : test_size};
}

}  // namespace

void summarise_flows(Record& record, double seconds, double bin_us) {
  std::uint64_t bytes = 0, messages = 0, sent = 0;
  bool counts_loss = false;
  std::vector<FlowSampling> sampling;
  for (const FlowResult& flow : record.flows) {
    sampling.push_back(sampling_of(flow.flow, record.size));
    if (!flow.bandwidth) continue;
    bytes += flow.bandwidth->bytes;
    messages += flow.bandwidth->messages;
    sent += flow.bandwidth->messages_sent.value_or(flow.bandwidth->messages);
    counts_loss |= flow.bandwidth->messages_sent.has_value();
  }
  record.bandwidth = compute_bandwidth(bytes, messages, seconds);
  if (counts_loss) record.bandwidth->messages_sent = sent;

  fill_competition(record, sampling, bin_us);
  if (const auto overlap = flows_overlap(record);
      overlap && overlap->together < kLeastMeaningfulOverlap) {
    record.warnings.push_back(fmt::format(
        "the flows ran together for only {:.0f}% of their {:.3g} ms: the aggregate counts "
        "them mostly one after another, and no flow was measured under the others' load for "
        "long (give the flows a duration, or more iterations to the shorter)",
        100 * overlap->together, overlap->span_us / 1e3));
  }
}

void rate_rails(std::vector<RailResult>& rails, double seconds) {
  for (RailResult& rail : rails) {
    rail.mb_per_s = seconds > 0 ? static_cast<double>(rail.bytes) / seconds / 1e6 : 0;
    rail.mreq_per_s = seconds > 0 ? static_cast<double>(rail.requests) / seconds / 1e6 : 0;
  }
}

}  // namespace uniperf::results
