// The record-level figures of a test of several flows, once each flow's
// result and measured interval are in `record.flows`: one rule whether the
// flows ran as threads of one process pair (session/record_builder.cpp)
// or as process pairs of their own (session/separate_flows_record.cpp).
#pragma once

#include <vector>

#include "results/record.hpp"

namespace uniperf::results {

/// Fills the aggregate `record.bandwidth` (every flow's bytes and messages
/// over `seconds`, the union of their intervals; messages sent when any
/// flow counts loss), each traced flow's competition figures
/// (results/competition.hpp, bins of `bin_us`) and, when the flows ran
/// together for less than kLeastMeaningfulOverlap of their span, a warning.
void summarise_flows(Record& record, double seconds, double bin_us);

/// Each rail's rates: its bytes and requests over `seconds` (0 for none).
void rate_rails(std::vector<RailResult>& rails, double seconds);

}  // namespace uniperf::results
