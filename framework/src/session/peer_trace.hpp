// The responder's trace rows, on the initiator's timeline (docs/traces.md,
// "One timeline"). A traced test's responder stamps the requests it posts
// (a ping-pong's echoes, its half of a bidirectional stream) on its own
// clock, converts them to its wall clock like the initiator, and ships them
// over the control connection after each size; the initiator moves them by
// the offset measured at the handshake (provenance.responder.wall_clock)
// and adds them to the record's rows, marked as the responder's.
#pragma once

#include <cstdint>

#include "bootstrap/bootstrap.hpp"
#include "results/record.hpp"

namespace uniperf::session {

/// Rows per control frame: 45 bytes each on the wire, well inside
/// bootstrap::kMaxFrameBytes.
inline constexpr std::size_t kTraceRowsPerFrame = 16384;

/// Both sides, at the same point after a traced size's results: the
/// responder sends `record`'s rows and its dropped count; the initiator
/// receives them, refuses more than `most_rows` (what the responder's
/// trace_max allows), subtracts `responder_offset_ns` (the responder's
/// wall clock minus the initiator's) from their times, marks them the
/// responder's and appends them to `record.trace` and its count. Throws
/// bootstrap::BootstrapError on a lost peer or a malformed frame.
void exchange_peer_trace(bootstrap::Bootstrap& control, results::Record& record,
                         std::uint64_t most_rows, std::int64_t responder_offset_ns);

/// A launched job of more than two ranks (cli/rank_job.hpp): a pair's
/// initiator sends a record's rows (its own and its responder's, on its
/// clock) to rank 0 after the record; rank 0 receives them into the record
/// it read, refusing more than `most_rows`, subtracting `offset_ns` (that
/// rank's wall clock minus rank 0's) so every pair's rows are on rank 0's
/// timeline, and keeping each row's side. The record's count already says
/// them. Throws bootstrap::BootstrapError on a lost rank or a malformed frame.
void send_pair_trace(bootstrap::Bootstrap& rank0, const results::Record& record);
void receive_pair_trace(bootstrap::Bootstrap& rank, results::Record& record,
                        std::uint64_t most_rows, std::int64_t offset_ns);

}  // namespace uniperf::session
