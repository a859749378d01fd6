// The control connection of a run started by a launcher (mpirun, srun, any
// PMIx launcher) instead of --listen/--peer (docs/architecture.md,
// "Bootstrap"): every rank holds a control connection to rank 0, the
// coordinator (a star). With two ranks that one connection is the pair's:
// rank 0 measures, rank 1 serves. With more, rank 0 tells the ranks whom to
// pair with, test by test (cli/rank_job.hpp).
//
// Detection is a pure function of the environment (detect_launcher), so its
// rules are tested without a launcher; connect_launcher() then makes the
// TCP control connections, finding rank 0 through PMIx when uniperf was
// built with libpmix and the process has a PMIx server, else through a
// rendezvous at rank 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace uniperf::bootstrap {

/// What the environment says about the launcher that started this process.
struct LauncherInfo {
  std::string launcher;  ///< "openmpi", "slurm" or "pmix" (which variables said so)
  int rank = 0;          ///< this process's rank in the job
  int size = 0;          ///< the ranks in the job
  int local_rank = -1;   ///< among the job's ranks on this host; -1 if unknown
  /// The launcher's name for this rank's node where it has one (Slurm:
  /// SLURMD_NODENAME), which may differ from the host name: several
  /// slurmd on one host, or nodes known by their cluster names. "" if none.
  std::string node;
  bool all_local = false;  ///< every rank runs on this host
  std::string job_id;      ///< names the job (for the derived port); "" if unknown
  /// Where rank 0 listens when the launcher says (uniperf's own local job:
  /// UNIPERF_JOB_COORDINATOR, HOST:PORT); "" otherwise.
  std::string coordinator;
  bool pmix = false;         ///< a PMIx server is reachable (PMIX_NAMESPACE and PMIX_RANK)
  std::string pmix_version;  ///< PMIX_VERSION as the launcher set it; "" if unset
};

using Environment = std::map<std::string, std::string>;

/// This process's environment as a map.
Environment current_environment();

/// The launcher that started a process with this environment; nullopt when
/// none did, or the job has a single rank (nothing to pair with, so a
/// single-task srun or `mpirun -np 1` runs like a plain command). Rules, the
/// first that matches wins:
///   uniperf: UNIPERF_JOB_RANK and UNIPERF_JOB_SIZE, the ranks a local run
///     started itself (cli/local_job.hpp): all local, rank 0 at
///     UNIPERF_JOB_COORDINATOR, no PMIx.
///   Open MPI: OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; all local when
///     OMPI_COMM_WORLD_LOCAL_SIZE == OMPI_COMM_WORLD_SIZE.
///   Slurm: SLURM_PROCID inside a job step (SLURM_STEP_ID set: a batch
///     script's own SLURM_PROCID=0 is not a rank), size SLURM_STEP_NUM_TASKS
///     (else SLURM_NTASKS); all local when SLURM_STEP_NUM_NODES (else
///     SLURM_NNODES) is 1.
///   PMIx: PMIX_RANK with PMIX_NAMESPACE; the size is not in the
///     environment (0 here: PMIx_Get tells), never all local.
/// A variable that is set but not a number is ignored, as if unset.
/// Throws BootstrapError for a rank outside [0, size).
std::optional<LauncherInfo> detect_launcher(const Environment& env);

/// The rendezvous port when every rank is on this host and no
/// --coordinator was given: 20000 + FNV-1a(job id) % 10000 (below Linux's
/// ephemeral range, so a client socket rarely holds it), 20000 without a
/// job id. Both ranks derive the same number from the same job.
std::uint16_t derived_port(const std::string& job_id);

/// Whether libpmix was built in.
bool pmix_built();

/// The bootstrap a launched run used, for the records' provenance.
struct LauncherFacts {
  std::string method;        ///< "pmix" or "launcher-env"
  std::string launcher;      ///< as LauncherInfo::launcher
  int ranks = 0;             ///< the job's size
  std::string pmix_version;  ///< the PMIx library's version (PMIx path) or the launcher's
  std::string rendezvous;    ///< host:port of rank 0's control listener
};

/// A launched run's control connections, and the PMIx session it keeps
/// open until it ends (PMIx_Finalize in the destructor).
class LauncherConnection {
 public:
  LauncherConnection();
  ~LauncherConnection();
  LauncherConnection(const LauncherConnection&) = delete;
  LauncherConnection& operator=(const LauncherConnection&) = delete;

  int rank = 0;  ///< this process's
  int size = 0;  ///< the job's ranks (PMIx may know it when the environment did not)
  /// On rank 0, links[r] is the connection to rank r (links[0] is empty);
  /// on any other rank, links[0] is the connection to rank 0. On each,
  /// rank 0's end is Bootstrap rank 0 (the initiator of a pair of two).
  std::vector<std::unique_ptr<Bootstrap>> links;
  LauncherFacts facts;

  struct PmixSession;
  std::unique_ptr<PmixSession> pmix;
};

/// Connects every rank of the job `info` describes to rank 0: rank 0
/// listens, the others connect and say their rank first. `coordinator`
/// ("" or HOST:PORT split already) is where rank 0 listens and the others
/// connect in the environment path; the PMIx path ignores it. Every step
/// is bounded by `timeout` (the fence, the get, the accepts and the
/// connect), so a rank that died before connecting ends the others with a
/// BootstrapError naming the ranks that never came.
std::unique_ptr<LauncherConnection> connect_launcher(
    const LauncherInfo& info,
    const std::optional<std::pair<std::string, std::uint16_t>>& coordinator,
    std::chrono::milliseconds timeout);

}  // namespace uniperf::bootstrap
