// Several trials (or run-forever windows) of one size pooled into one
// outcome per flow, so a record's statistics cover every trial.
#pragma once

#include <vector>

#include "engine/runner.hpp"

namespace uniperf::session {

/// Adds one window's outcomes to `pooled`: a single flow's samples are
/// appended (up to a bound, so run-forever's memory stays flat) and its
/// bytes, messages, seconds and iterations summed; several concurrent flows
/// keep the last window's outcomes (their interval is what they shared).
void pool_window(std::vector<engine::SizeOutcome>& pooled, std::vector<engine::SizeOutcome> window);

}  // namespace uniperf::session
