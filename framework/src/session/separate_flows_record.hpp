// The record of a test whose flows ran in process pairs of their own
// (model::FlowProcesses::separate), built at rank 0 from the record each
// flow's pair made of it alone: what session/record_builder.hpp's
// fill_results makes of threads' flows, from records instead of outcomes.
#pragma once

#include <vector>

#include "results/record.hpp"

namespace uniperf::session {

/// One size of a test from `flows`, flow k's pair record at k (each on rank
/// 0's clock, with its trace rows and placement): every flow's figures
/// under `flows` (each with its pair's placement), the aggregate bandwidth
/// over the union of their measured intervals, and from their traces what
/// each did while all ran, over time in bins of `timeline_bin_us`, and
/// their fairness; flow 0's record gives the rest (names, provenance,
/// plugin). A flow whose record is not ok makes the record an error (or
/// skipped, when every flow was) naming that flow. The trace rows move
/// into the result.
results::Record separate_flows_record(std::vector<results::Record> flows, double timeline_bin_us);

}  // namespace uniperf::session
