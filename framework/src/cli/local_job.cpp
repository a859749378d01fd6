#include "cli/local_job.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "cli/local_pair.hpp"

namespace uniperf::cli {

using namespace std::chrono_literals;

int local_ranks_needed(const model::SuiteSpec& suite) {
  std::size_t ranks = 2;
  for (const auto& test : suite.tests) {
    if (test.process == model::FlowProcesses::separate)
      ranks = std::max(ranks, 2 * test.flows.size());
  }
  return static_cast<int>(ranks);
}

LocalJob::LocalJob(int size) {
  {
    // A free port for rank 0's listener, which connect_launcher() opens
    // again at once: the ranks are told it before they start.
    const bootstrap::TcpListener probe("127.0.0.1", 0);
    port_ = probe.port();
  }
  info_.launcher = "uniperf";
  info_.rank = 0;
  info_.size = size;
  info_.local_rank = 0;
  info_.all_local = true;
  info_.job_id = "local-" + std::to_string(::getpid());
  info_.coordinator = "127.0.0.1:" + std::to_string(port_);
  // Before rank 0 pins itself (--cpu): the CPUs the other ranks start on.
  CPU_ZERO(&unpinned_);
  knows_unpinned_ = ::sched_getaffinity(0, sizeof unpinned_, &unpinned_) == 0;
}

void LocalJob::start(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  const int size = info_.size;
  // A child inherits its parent's CPUs: rank 0's pin is put aside while the
  // ranks start (each pins itself then, or not), and put back after.
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  const bool unpin = knows_unpinned_ && ::sched_getaffinity(0, sizeof pinned, &pinned) == 0 &&
                     ::sched_setaffinity(0, sizeof unpinned_, &unpinned_) == 0;
  struct Repin {
    bool active;
    const cpu_set_t& set;
    ~Repin() {
      if (active) ::sched_setaffinity(0, sizeof set, &set);
    }
  } repin{unpin, pinned};
  for (int rank = 1; rank < size; ++rank) {
    const pid_t pid = start_self(
        args, "",
        {"UNIPERF_JOB_RANK=" + std::to_string(rank), "UNIPERF_JOB_SIZE=" + std::to_string(size),
         "UNIPERF_JOB_ID=" + info_.job_id, "UNIPERF_JOB_COORDINATOR=" + info_.coordinator},
        true);
    if (pid < 0) {
      throw bootstrap::BootstrapError("cannot start rank " + std::to_string(rank) +
                                      " of the local job: " + std::strerror(errno));
    }
    ranks_.push_back(pid);
  }
}

LocalJob::~LocalJob() {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  for (const pid_t pid : ranks_) {
    while (::waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= give_up) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
  }
}

}  // namespace uniperf::cli
