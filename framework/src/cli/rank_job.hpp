// A launched job of more than two ranks (mpirun -np 4, srun -n 8): rank 0
// coordinates, every rank measures or serves in the pairs each test's
// `pairs:` names (session/rank_pairs.hpp), and rank 0 gathers every record
// into the one results file (docs/architecture.md, "Many ranks").
//
// The conversation, over the star of control connections the launcher
// bootstrap made (rank 0 to each rank; JSON text messages):
//   1. every rank opens a pair listener and tells rank 0 its host, local
//      rank, listener address and provenance facts;
//   2. per config, test and round, rank 0 tells each rank its part: the
//      pairs it is in (as initiator, with the responder's address, or as
//      responder; none when it sits out), plays its own, then hears each
//      rank's report: the records it measured, one message each, then the
//      end of its round;
//   3. each pair is a plain two-process run of that one test over its own
//      control connection (an introduction naming the initiator's rank and
//      the round, the handshake, heartbeat, the session), so everything a
//      pair of processes does (failures, deadlines, loss) holds for each
//      pair of ranks; a rank in several pairs at once (incast, fanout,
//      neighbors, all_to_all) runs each on a thread of its own;
//   4. after the rounds of a `pairs: all` test, each pair the node-pair
//      matrix names a suspect (report/pair_matrix.hpp) is measured again on
//      its own, a round of one pair (placement.retest): a pair slowed by its
//      neighbours in the round is cleared, a bad one confirmed;
//   5. "done" ends the job.
// A rank that is lost (its connection to rank 0 closes, or its report does
// not come within the round's budget) ends the job: rank 0 says which rank
// on which host, keeps the records that finished, and closes every
// connection, which ends the other ranks within seconds; all exit 3.
#pragma once

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "bootstrap/launcher.hpp"
#include "cli/run_output.hpp"
#include "loader/plugin_registry.hpp"
#include "model/suite_spec.hpp"
#include "report/pair_matrix.hpp"
#include "session/session.hpp"

namespace uniperf::cli {

struct RankJob {
  const model::SuiteSpec& suite;
  const std::vector<model::ConfigSpec>& configs;
  loader::PluginRegistry& plugins;
  bootstrap::LauncherConnection& job;
  bootstrap::LauncherInfo launcher;
  /// Every pair's session settings but its provenance and placement.
  session::RunSettings settings;
  /// Rank 0's: every record of every pair, as it arrives.
  session::Observer observer;
  /// Rank 0's results and report files.
  RunOutput* output = nullptr;
  nlohmann::json my_facts;  ///< session::provenance() of this rank
  /// Which pairs of a `pairs: all` test are measured again, alone.
  report::SuspectRule suspects;
  const std::atomic<bool>* stop_requested = nullptr;

  /// When connecting to the launcher's ranks began: the records'
  /// provenance.bootstrap.connect_ms runs from here to rank 0 having heard
  /// every rank.
  std::chrono::steady_clock::time_point connect_started = std::chrono::steady_clock::now();
  /// A job a local run started itself (cli/local_job.hpp) for its tests of
  /// separate flows: every other test runs on ranks 0 and 1 alone, as the
  /// local pair it stands for, and its records name no placement.
  bool local = false;
};

/// Runs this rank's part of the job; the process's exit code
/// (cli/exit_codes.hpp): on rank 0 that of the records, or 3 when a rank
/// was lost; on the others 0, 1 when a test of theirs failed, 3 when rank 0
/// was lost. Throws std::invalid_argument for a suite a job of this size
/// cannot run (a run-forever test).
int run_rank_job(RankJob& job);

}  // namespace uniperf::cli
