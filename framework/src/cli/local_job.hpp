// A local run (no --peer, --listen or launcher) of a suite with a test whose
// flows run in process pairs of their own (`process: separate`): one pair of
// processes cannot run it, so `uniperf run` starts the job a launcher would
// have started, on this host. This process is rank 0; it starts this
// executable again, with the same arguments, as ranks 1 to size-1, each told
// its rank, the job's size and rank 0's address in its environment
// (bootstrap::detect_launcher's "uniperf" rule). The job is then what a
// launched job is (cli/rank_job.hpp): the same rendezvous, rounds, losses
// and records, except that every other test runs on ranks 0 and 1 alone, as
// the local pair it stands for.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/launcher.hpp"
#include "model/suite_spec.hpp"

namespace uniperf::cli {

/// The ranks a local run of `suite` needs: 2N for its test of the most
/// separate flows, 2 (one pair) when it has none.
int local_ranks_needed(const model::SuiteSpec& suite);

class LocalJob {
 public:
  /// A job of `size` ranks on this host, rank 0's listener on a free
  /// loopback port; no rank started yet.
  explicit LocalJob(int size);
  /// Waits a few seconds for every rank started to exit (they do once rank
  /// 0 ends the job), and kills those still running.
  ~LocalJob();
  LocalJob(const LocalJob&) = delete;
  LocalJob& operator=(const LocalJob&) = delete;

  /// Starts ranks 1 to size - 1: this command line again, each with its
  /// rank in the environment and this process's CPUs from before it pinned
  /// itself (--cpu pins rank 0 alone, and a rank inherits its parent's
  /// pin). They die with this process. Throws bootstrap::BootstrapError
  /// when a rank cannot be started.
  void start(int argc, char** argv);

  /// Rank 0's view of the job, as detect_launcher gives the others theirs.
  const bootstrap::LauncherInfo& info() const { return info_; }
  /// Where rank 0 listens for the others.
  std::pair<std::string, std::uint16_t> coordinator() const { return {"127.0.0.1", port_}; }

 private:
  bootstrap::LauncherInfo info_;
  std::uint16_t port_ = 0;
  std::vector<pid_t> ranks_;
  cpu_set_t unpinned_;  ///< this process's CPUs when the job was made
  bool knows_unpinned_ = false;
};

}  // namespace uniperf::cli
