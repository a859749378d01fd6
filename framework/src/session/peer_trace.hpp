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

}  // namespace uniperf::session
