#include "session/peer_trace.hpp"

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace uniperf::session {
namespace {

// A row on the wire, little-endian: flow u32, lane u32, id u64,
// posted_ns i64, returned_ns i64, completed_ns i64, flags u8 (1: signaled,
// 2: posted by the pair's responder).
constexpr std::size_t kRowBytes = 4 + 4 + 8 + 8 + 8 + 8 + 1;

template <class T>
void put(std::vector<std::byte>& out, T value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<std::byte>((bits >> (8 * i)) & 0xff));
}

template <class T>
T get(const std::byte*& in) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    bits |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
  in += sizeof(T);
  return static_cast<T>(bits);
}

void send_rows(bootstrap::Bootstrap& control, const results::Record& record) {
  std::vector<std::byte> header;
  put<std::uint64_t>(header, record.trace.size());
  put<std::uint64_t>(header, record.trace_count ? record.trace_count->dropped : 0);
  control.send(header);
  for (std::size_t from = 0; from < record.trace.size(); from += kTraceRowsPerFrame) {
    const std::size_t to = std::min(record.trace.size(), from + kTraceRowsPerFrame);
    std::vector<std::byte> frame;
    frame.reserve((to - from) * kRowBytes);
    for (std::size_t i = from; i < to; ++i) {
      const results::TraceRow& row = record.trace[i];
      put<std::uint32_t>(frame, row.flow);
      put<std::uint32_t>(frame, row.lane);
      put<std::uint64_t>(frame, row.id);
      put<std::int64_t>(frame, row.posted_ns);
      put<std::int64_t>(frame, row.returned_ns);
      put<std::int64_t>(frame, row.completed_ns);
      put<std::uint8_t>(frame, (row.signaled ? 1 : 0) | (row.responder ? 2 : 0));
    }
    control.send(frame);
  }
}

/// Whose rows come: a pair's responder's (all its own, counted into the
/// record's), or a launched pair's whole trace (the record counted them).
enum class Rows { responders, pairs };

void receive_rows(bootstrap::Bootstrap& control, results::Record& record, std::uint64_t most_rows,
                  std::int64_t offset_ns, Rows whose) {
  const std::string from = whose == Rows::responders ? "the responder's trace" : "the pair's trace";
  const Bytes header = control.receive(control.timeout());
  if (header.size() != 16) throw bootstrap::BootstrapError(from + ": a malformed header");
  const std::byte* at = header.data();
  const auto rows = get<std::uint64_t>(at);
  const auto dropped = get<std::uint64_t>(at);
  if (rows > most_rows) {
    throw bootstrap::BootstrapError(from + ": " + std::to_string(rows) +
                                    " rows, more than its trace_max allows (" +
                                    std::to_string(most_rows) + ")");
  }
  const std::size_t flows = std::max<std::size_t>(1, record.flows.size());
  record.trace.reserve(record.trace.size() + rows);
  for (std::uint64_t received = 0; received < rows;) {
    const Bytes frame = control.receive(control.timeout());
    const std::uint64_t in_frame = frame.size() / kRowBytes;
    if (frame.size() % kRowBytes != 0 || in_frame == 0 || in_frame > rows - received)
      throw bootstrap::BootstrapError(from + ": a malformed frame");
    const std::byte* in = frame.data();
    for (std::uint64_t i = 0; i < in_frame; ++i) {
      results::TraceRow row;
      row.flow = get<std::uint32_t>(in);
      row.lane = get<std::uint32_t>(in);
      row.id = get<std::uint64_t>(in);
      row.posted_ns = get<std::int64_t>(in) - offset_ns;
      const auto returned = get<std::int64_t>(in);
      row.returned_ns = returned == 0 ? 0 : returned - offset_ns;  // 0: the call did not return
      const auto completed = get<std::int64_t>(in);
      row.completed_ns = completed == 0 ? 0 : completed - offset_ns;  // 0: none covered it
      const auto flags = get<std::uint8_t>(in);
      row.signaled = (flags & 1) != 0;
      row.responder = whose == Rows::responders || (flags & 2) != 0;
      if (row.flow >= flows)
        throw bootstrap::BootstrapError(from + ": a row of no flow of this test");
      record.trace.push_back(row);
    }
    received += in_frame;
  }
  if (whose == Rows::pairs) return;  // the record's own count says them
  results::TraceCount& count =
      record.trace_count ? *record.trace_count : record.trace_count.emplace();
  count.rows += rows;
  count.dropped += dropped;
}

}  // namespace

void exchange_peer_trace(bootstrap::Bootstrap& control, results::Record& record,
                         std::uint64_t most_rows, std::int64_t responder_offset_ns) {
  if (control.rank() == 0)
    receive_rows(control, record, most_rows, responder_offset_ns, Rows::responders);
  else
    send_rows(control, record);
}

void send_pair_trace(bootstrap::Bootstrap& rank0, const results::Record& record) {
  send_rows(rank0, record);
}

void receive_pair_trace(bootstrap::Bootstrap& rank, results::Record& record,
                        std::uint64_t most_rows, std::int64_t offset_ns) {
  receive_rows(rank, record, most_rows, offset_ns, Rows::pairs);
}

}  // namespace uniperf::session
