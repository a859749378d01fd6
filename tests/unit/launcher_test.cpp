// The launcher detection rules (bootstrap/launcher.hpp): from an
// environment to a decision, without a launcher.
#include "bootstrap/launcher.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace uniperf::bootstrap {
namespace {

using namespace std::chrono_literals;

TEST(LauncherDetection, NoLauncherVariablesIsNoLauncher) {
  EXPECT_FALSE(detect_launcher({}));
  EXPECT_FALSE(detect_launcher({{"HOME", "/root"}, {"PATH", "/usr/bin"}}));
}

TEST(LauncherDetection, OpenMpiRanksOnOneHost) {
  const Environment env = {
      {"OMPI_COMM_WORLD_RANK", "1"},       {"OMPI_COMM_WORLD_SIZE", "2"},
      {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"OMPI_MCA_ess_base_jobid", "608436225"},
      {"PMIX_NAMESPACE", "608436225"},     {"PMIX_RANK", "1"},
      {"PMIX_VERSION", "4.2.2rc2"}};
  const auto info = detect_launcher(env);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "openmpi");
  EXPECT_EQ(info->rank, 1);
  EXPECT_EQ(info->size, 2);
  EXPECT_TRUE(info->all_local);
  EXPECT_TRUE(info->pmix);
  EXPECT_EQ(info->pmix_version, "4.2.2rc2");
  EXPECT_EQ(info->job_id, "608436225");
}

TEST(LauncherDetection, OpenMpiRanksOnTwoHostsAreNotLocal) {
  const auto info = detect_launcher({{"OMPI_COMM_WORLD_RANK", "0"},
                                     {"OMPI_COMM_WORLD_SIZE", "2"},
                                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}});
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->all_local);
  EXPECT_FALSE(info->pmix);
}

TEST(LauncherDetection, LocalRanksAreToldApart) {
  const auto info = detect_launcher({{"OMPI_COMM_WORLD_RANK", "2"},
                                     {"OMPI_COMM_WORLD_SIZE", "3"},
                                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->size, 3);
  EXPECT_EQ(info->local_rank, 1);
  const auto slurm = detect_launcher({{"SLURM_PROCID", "5"},
                                      {"SLURM_STEP_ID", "0"},
                                      {"SLURM_STEP_NUM_TASKS", "8"},
                                      {"SLURM_LOCALID", "3"},
                                      {"SLURMD_NODENAME", "n2"}});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->local_rank, 3);
  EXPECT_EQ(slurm->node, "n2");  // two slurmd on one host share its name, not this
  EXPECT_EQ(
      detect_launcher({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}})->local_rank,
      -1);
}

/// A port free a moment ago, for a coordinator address.
std::uint16_t free_port() {
  return TcpListener("127.0.0.1", 0).port();
}

LauncherInfo rank_of(int rank, int size) {
  LauncherInfo info;
  info.launcher = "openmpi";
  info.rank = rank;
  info.size = size;
  info.all_local = true;
  return info;
}

TEST(LauncherStar, EveryRankReachesRankZeroWhichKnowsEachByRank) {
  const auto coordinator = std::make_pair(std::string("127.0.0.1"), free_port());
  std::vector<std::unique_ptr<LauncherConnection>> joined(4);
  std::vector<std::thread> ranks;
  for (int r = 3; r >= 0; --r) {  // rank 0 last: the others retry until it listens
    ranks.emplace_back([&, r] { joined[r] = connect_launcher(rank_of(r, 4), coordinator, 10s); });
  }
  for (auto& t : ranks) t.join();
  ASSERT_EQ(joined[0]->links.size(), 4u);
  EXPECT_FALSE(joined[0]->links[0]);
  for (int r = 1; r < 4; ++r) {
    ASSERT_EQ(joined[r]->links.size(), 1u);
    EXPECT_EQ(joined[r]->rank, r);
    joined[r]->links[0]->send_text("from " + std::to_string(r));
  }
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(joined[0]->links[r]->receive_text(5s), "from " + std::to_string(r));
    EXPECT_EQ(joined[0]->links[r]->rank(), 0);
    EXPECT_EQ(joined[r]->links[0]->rank(), 1);
  }
  EXPECT_EQ(joined[0]->facts.ranks, 4);
}

TEST(LauncherStar, ARankThatNeverComesIsNamedWithinTheTimeout) {
  const auto coordinator = std::make_pair(std::string("127.0.0.1"), free_port());
  std::unique_ptr<LauncherConnection> rank1;
  std::thread joiner([&] {
    try {
      rank1 = connect_launcher(rank_of(1, 3), coordinator, 3s);
    } catch (const BootstrapError&) {
      // Rank 0 gave up before rank 1 came: what this test is about happened anyway.
    }
  });
  const auto started = std::chrono::steady_clock::now();
  try {
    connect_launcher(rank_of(0, 3), coordinator, 2s);
    ADD_FAILURE() << "rank 0 went on without rank 2";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 2 of 3 never connected"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 8s);
  joiner.join();
}

TEST(LauncherDetection, ASingleRankRunsLikeAPlainCommand) {
  EXPECT_FALSE(detect_launcher({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}));
  EXPECT_FALSE(detect_launcher(
      {{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}}));
}

TEST(LauncherDetection, SlurmStepRanks) {
  const auto info = detect_launcher({{"SLURM_PROCID", "0"},
                                     {"SLURM_STEP_ID", "3"},
                                     {"SLURM_JOB_ID", "1234"},
                                     {"SLURM_NTASKS", "8"},
                                     {"SLURM_STEP_NUM_TASKS", "2"},
                                     {"SLURM_STEP_NUM_NODES", "1"},
                                     {"SLURM_NNODES", "4"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "slurm");
  EXPECT_EQ(info->size, 2);  // the step's tasks, not the allocation's
  EXPECT_TRUE(info->all_local);
  EXPECT_EQ(info->job_id, "1234.3");
}

TEST(LauncherDetection, ABatchScriptIsNotARank) {
  // sbatch sets SLURM_PROCID=0 and SLURM_NTASKS for the script itself; only
  // srun's step (SLURM_STEP_ID) makes ranks.
  EXPECT_FALSE(
      detect_launcher({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "7"}}));
}

TEST(LauncherDetection, OpenMpiWinsOverSlurmAndPmix) {
  const auto info = detect_launcher({{"OMPI_COMM_WORLD_RANK", "1"},
                                     {"OMPI_COMM_WORLD_SIZE", "2"},
                                     {"SLURM_PROCID", "0"},
                                     {"SLURM_STEP_ID", "0"},
                                     {"SLURM_STEP_NUM_TASKS", "2"},
                                     {"PMIX_NAMESPACE", "x"},
                                     {"PMIX_RANK", "1"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "openmpi");
  EXPECT_EQ(info->rank, 1);
}

TEST(LauncherDetection, ALocalJobsRanksKnowTheirCoordinator) {
  // A local run's own ranks (cli/local_job.hpp), even under an inherited
  // launcher's variables: theirs is the job they are in.
  const auto info = detect_launcher({{"UNIPERF_JOB_RANK", "3"},
                                     {"UNIPERF_JOB_SIZE", "4"},
                                     {"UNIPERF_JOB_ID", "local-77"},
                                     {"UNIPERF_JOB_COORDINATOR", "127.0.0.1:41000"},
                                     {"OMPI_COMM_WORLD_RANK", "0"},
                                     {"OMPI_COMM_WORLD_SIZE", "2"},
                                     {"PMIX_NAMESPACE", "x"},
                                     {"PMIX_RANK", "0"},
                                     {"PMIX_VERSION", "4.2.2rc2"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "uniperf");
  EXPECT_EQ(info->rank, 3);
  EXPECT_EQ(info->size, 4);
  EXPECT_EQ(info->local_rank, 3);
  EXPECT_TRUE(info->all_local);
  EXPECT_FALSE(info->pmix);
  EXPECT_EQ(info->pmix_version, "");
  EXPECT_EQ(info->job_id, "local-77");
  EXPECT_EQ(info->coordinator, "127.0.0.1:41000");
  EXPECT_THROW(detect_launcher({{"UNIPERF_JOB_RANK", "4"}, {"UNIPERF_JOB_SIZE", "4"}}),
               BootstrapError);
}

TEST(LauncherDetection, PmixAloneLeavesTheSizeToPmix) {
  const auto info = detect_launcher({{"PMIX_NAMESPACE", "slurm.pmix.9.0"}, {"PMIX_RANK", "0"}});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->launcher, "pmix");
  EXPECT_EQ(info->size, 0);
  EXPECT_TRUE(info->pmix);
  EXPECT_FALSE(detect_launcher({{"PMIX_RANK", "0"}}));  // no namespace: no PMIx server
}

TEST(LauncherDetection, NonNumbersAreIgnoredAndBadRanksRefused) {
  EXPECT_FALSE(detect_launcher({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  EXPECT_THROW(detect_launcher({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
               BootstrapError);
  EXPECT_THROW(detect_launcher({{"OMPI_COMM_WORLD_RANK", "-1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
               BootstrapError);
}

TEST(LauncherDetection, DerivedPortIsStablePerJobAndBelowTheEphemeralRange) {
  EXPECT_EQ(derived_port("608436225"), derived_port("608436225"));
  EXPECT_NE(derived_port("608436225"), derived_port("608436226"));
  EXPECT_EQ(derived_port(""), 20000);
  for (const char* job : {"1", "1234.0", "slurm.pmix.9.0", "608436225"}) {
    EXPECT_GE(derived_port(job), 20000);
    EXPECT_LT(derived_port(job), 30000);
  }
}

TEST(LauncherDetection, TwoRanksWithoutPmixMeetAtTheCoordinator) {
  LauncherInfo rank0;
  rank0.launcher = "openmpi";
  rank0.size = 2;
  rank0.all_local = true;
  LauncherInfo rank1 = rank0;
  rank1.rank = 1;
  // Without PMIx (pmix=false) both take the environment path; an ephemeral
  // port is not derivable, so the test names the coordinator port.
  std::uint16_t port = 0;
  {
    const TcpListener probe("127.0.0.1", 0);  // only to find a free port
    port = probe.port();
  }
  // Rank 1 retries its connect until rank 0 listens, whichever starts first.
  std::unique_ptr<LauncherConnection> one;
  std::thread connector([&] { one = connect_launcher(rank1, {{"127.0.0.1", port}}, 20s); });
  const auto zero = connect_launcher(rank0, {{"127.0.0.1", port}}, 20s);
  connector.join();
  ASSERT_TRUE(zero && one);
  ASSERT_EQ(zero->links.size(), 2u);
  ASSERT_EQ(one->links.size(), 1u);
  EXPECT_EQ(zero->links[1]->rank(), 0);
  EXPECT_EQ(one->links[0]->rank(), 1);
  EXPECT_EQ(zero->facts.method, "launcher-env");
  EXPECT_EQ(zero->facts.rendezvous, "127.0.0.1:" + std::to_string(port));
  zero->links[1]->send_text("hello");
  EXPECT_EQ(one->links[0]->receive_text(10s), "hello");
}

TEST(LauncherDetection, ManyHostsWithoutCoordinatorOrPmixIsAClearError) {
  LauncherInfo info;
  info.launcher = "openmpi";
  info.rank = 1;
  info.size = 2;
  try {
    connect_launcher(info, std::nullopt, 1s);
    FAIL() << "connected without a rendezvous";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("--coordinator"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uniperf::bootstrap
