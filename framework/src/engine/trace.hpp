// The per-request trace of a flow (FlowSpec::trace, docs/traces.md): every
// Nth work request a side posts in the measured phase is stamped when it is
// posted, when the post call that carried it returned (the call's own cost,
// apart from the message rate) and when the completion that covers it is
// polled. The rows live in memory allocated before the loop; the loop only
// stores into them, and only in the loops compiled for a traced phase
// (LoopMode::traced): a phase that is not traced carries no trace code at all.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/clock.hpp"

namespace uniperf::engine {

/// One traced work request, on this process's clock.
struct TraceRow {
  std::uint64_t id = 0;  ///< its id on its endpoint (ids grow for the endpoint's life)
  Ticks posted = 0;      ///< read just before the post call that carried it
  Ticks returned = 0;    ///< read just after that post call returned
  Ticks completed = 0;   ///< when the completion that covered it was polled; 0: none was
  std::uint32_t lane = 0;
  /// 1: it was signaled and this is its own completion; 0: unsignaled,
  /// covered by the completion of a later signaled request.
  std::uint32_t signaled = 0;
};

/// One endpoint's part of the trace: a slice of the flow's rows, filled in
/// post order, and a cursor that completions sweep forward (a completion
/// covers every request up to its id: send queues complete in order).
class LaneTrace {
 public:
  void attach(TraceRow* rows, std::uint64_t capacity, std::uint32_t lane, std::uint32_t every) {
    rows_ = rows;
    capacity_ = capacity;
    lane_ = lane;
    every_ = every == 0 ? 1 : every;
  }

  /// At the start of a traced phase: its first request is the first row.
  void restart() {
    written_ = swept_ = dropped_ = chain_first_ = 0;
    countdown_ = 1;
  }

  /// A request posted at `t` (the traced loops only).
  void posted(std::uint64_t id, Ticks t, bool signaled) {
    if (--countdown_ != 0) return;
    countdown_ = every_;
    if (written_ == capacity_) [[unlikely]] {
      ++dropped_;
      return;
    }
    rows_[written_++] = TraceRow{id, t, 0, 0, lane_, signaled ? 1u : 0u};
  }

  /// The post call that carried the requests posted() since the last call
  /// returned at `t` (one call per post_list chain).
  void post_returned(Ticks t) {
    for (; chain_first_ < written_; ++chain_first_) rows_[chain_first_].returned = t;
  }

  /// The completion of request `id`, polled at `t`: it covers every traced
  /// request up to it.
  void completed(std::uint64_t id, Ticks t) {
    while (swept_ < written_ && rows_[swept_].id <= id) rows_[swept_++].completed = t;
  }

  std::uint64_t written() const { return written_; }
  std::uint64_t dropped() const { return dropped_; }
  const TraceRow* rows() const { return rows_; }

 private:
  TraceRow* rows_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t written_ = 0;
  std::uint64_t swept_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t chain_first_ = 0;  // the first row of the chain being posted
  std::uint32_t countdown_ = 1;
  std::uint32_t every_ = 1;
  std::uint32_t lane_ = 0;
};

/// What a traced phase left: its rows, lane after lane, in post order
/// within each lane, and how many requests found the rows full.
struct FlowTrace {
  std::uint32_t every = 0;     ///< 0: the flow was not traced
  std::uint64_t capacity = 0;  ///< the most rows kept (trace_max)
  std::vector<TraceRow> rows;
  std::uint64_t dropped = 0;
};

/// The rows each of a traced flow's `lanes` keeps: an equal share of its
/// `trace_max`, at least one. A side keeps at most that times `lanes`, the
/// bound by which a receiver refuses rows a peer could not have kept.
constexpr std::uint64_t trace_rows_per_lane(std::uint64_t trace_max, std::uint64_t lanes) {
  return lanes == 0 ? 0 : (trace_max / lanes > 1 ? trace_max / lanes : 1);
}

}  // namespace uniperf::engine
