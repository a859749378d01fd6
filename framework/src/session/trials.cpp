#include "session/trials.hpp"

#include <cstddef>

namespace uniperf::session {

void pool_window(std::vector<engine::SizeOutcome>& pooled,
                 std::vector<engine::SizeOutcome> window) {
  if (window.size() != 1 || pooled.size() != 1) {
    pooled = std::move(window);
    return;
  }
  // At most this many latency samples (128 MiB) are pooled; every window's
  // own summary is still kept in the record's trials.
  constexpr std::size_t kMaxPooledSamples = std::size_t{16} << 20;
  engine::SizeOutcome& sum = pooled.front();
  const engine::SizeOutcome& one = window.front();
  if (sum.latency_us.size() < kMaxPooledSamples)
    sum.latency_us.insert(sum.latency_us.end(), one.latency_us.begin(), one.latency_us.end());
  sum.bytes += one.bytes;
  sum.messages += one.messages;
  sum.seconds += one.seconds;
  sum.iterations += one.iterations;
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
