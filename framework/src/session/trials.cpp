#include "session/trials.hpp"

#include <cstddef>

#include "engine/clock.hpp"

namespace uniperf::session {

void pool_window(std::vector<engine::SizeOutcome>& pooled,
                 std::vector<engine::SizeOutcome> window) {
  if (window.size() != 1 || pooled.size() != 1) {
    pooled = std::move(window);
    return;
  }
  engine::SizeOutcome& sum = pooled.front();
  const engine::SizeOutcome& one = window.front();
  // Every window's samples, in memory that does not grow with the windows
  // (the distribution folds), and where they start, for the kept ones.
  const bool all_kept = sum.latency.complete();
  const std::uint64_t first = sum.latency.count();
  sum.latency.merge(one.latency);
  if (all_kept && first < sum.latency.kept().size() && one.latency_begins_us.empty()) {
    // A window resumes where it began, and so does each of its segments.
    const double offset_us = engine::ticks_to_us(one.started - sum.started);
    sum.latency_resumes_us.emplace_back(first, offset_us);
    for (const auto& [sample, at_us] : one.latency_resumes_us) {
      if (first + sample >= sum.latency.kept().size()) break;
      sum.latency_resumes_us.emplace_back(first + sample, offset_us + at_us);
    }
  }
  if (all_kept && !one.latency_begins_us.empty()) {
    const double offset_us = engine::ticks_to_us(one.started - sum.started);
    for (const double begins : one.latency_begins_us) {
      if (sum.latency_begins_us.size() >= sum.latency.kept().size()) break;
      sum.latency_begins_us.push_back(offset_us + begins);
    }
  }
  sum.bytes += one.bytes;
  if (sum.rails.size() < one.rails.size()) sum.rails.resize(one.rails.size());
  for (std::size_t r = 0; r < one.rails.size(); ++r) {
    sum.rails[r].bytes += one.rails[r].bytes;
    sum.rails[r].requests += one.rails[r].requests;
    sum.rails[r].latency.merge(one.rails[r].latency);
  }
  sum.messages += one.messages;
  sum.seconds += one.seconds;
  sum.iterations += one.iterations;
  sum.initiator_cpu += one.initiator_cpu;
  sum.responder_cpu += one.responder_cpu;
  sum.corrupted_bytes += one.corrupted_bytes;
  sum.counts_loss |= one.counts_loss;
  sum.messages_sent += one.messages_sent;
  sum.finished = std::max(sum.finished, one.finished);  // the pooled span: first to last window
  // Every window's trace rows, up to the flow's trace_max in all: a run
  // forever keeps its memory bounded.
  const std::size_t room = sum.trace.capacity - std::min(sum.trace.capacity, sum.trace.rows.size());
  const std::size_t kept = std::min(room, one.trace.rows.size());
  sum.trace.rows.insert(sum.trace.rows.end(), one.trace.rows.begin(),
                        one.trace.rows.begin() + kept);
  sum.trace.dropped += one.trace.dropped + (one.trace.rows.size() - kept);
}

}  // namespace uniperf::session
