// How the two sides agree: the handshake that opens a run (same protocol,
// suite and configs on both sides), and the per-config and per-size outcome
// exchanges that make both sides take the same branch (run, skip or fail).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "results/record.hpp"

namespace uniperf::session {

/// Both sides state an outcome; the first failure (ours, else the peer's)
/// wins, so both sides take the same branch.
struct Agreement {
  bool ok = true;
  results::Status status = results::Status::ok;
  std::string reason;
};

Agreement agree(bootstrap::Bootstrap& control, const Agreement& mine);

/// Per-size skip decisions agreed by both sides (an empty string = run it).
std::vector<std::string> agree_sizes(bootstrap::Bootstrap& control, std::vector<std::string> mine);

}  // namespace uniperf::session
