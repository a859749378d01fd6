// A launched job of more than two ranks (cli/rank_job.hpp): the kept latency
// samples (keep_samples) of a pair's record reach rank 0, which writes the
// samples file. The record's JSON counts them (samples_kept) but does not
// hold them, so a pair's initiator sends them after the record (and its
// trace rows, session/peer_trace.hpp), and rank 0 reads them into the record
// it read. Without this only rank 0's own pairs' samples were written.
// A latency flow of separate process pairs sends its iterations the same way.
#pragma once

#include "bootstrap/bootstrap.hpp"
#include "results/record.hpp"

namespace uniperf::session {

/// Sends `record.kept_samples`: their count of series, then each series'
/// flow and length and its samples. Throws bootstrap::BootstrapError on a
/// lost connection.
void send_pair_samples(bootstrap::Bootstrap& rank0, const results::Record& record);

/// Receives a record's samples into `record.kept_samples`, refusing a series
/// of no flow of the record and more samples than its `samples_kept` says.
/// Throws bootstrap::BootstrapError on a lost connection or a malformed frame.
void receive_pair_samples(bootstrap::Bootstrap& rank, results::Record& record);

/// Sends `record.iterations` (a latency flow of a test whose flows ran in
/// process pairs of their own): rank 0 takes its percentiles over the time
/// every flow ran. Throws bootstrap::BootstrapError on a lost connection.
void send_pair_iterations(bootstrap::Bootstrap& rank0, const results::Record& record);

/// Receives them into `record.iterations`, refusing more samples than the
/// record ran iterations (or a sampler keeps), and begins or resumes that
/// are not one per sample. Throws bootstrap::BootstrapError on a lost
/// connection or a malformed frame.
void receive_pair_iterations(bootstrap::Bootstrap& rank, results::Record& record);

}  // namespace uniperf::session
