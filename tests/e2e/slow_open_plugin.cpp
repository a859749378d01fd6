// A plugin that is slow where a transport can be:
//   - open() takes as long as UNIPERF_FIXTURE_OPEN_DELAY_MS says (a config's
//     env: sets it) and then finds no device: both sides of a run are then,
//     for that long, between two meetings of the control connection, where a
//     peer that dies is seen only at the next meeting (the e2e test
//     Peers.APeerLostBetweenMeetingsIsNamedOnStderr);
//   - with UNIPERF_FIXTURE_SPIN_AT_UNLOAD set in the process's environment,
//     the plugin, destroyed as the process tears down after its run, spins
//     and never returns, as a transport library's cleanup can on a peer that
//     is gone (Teardown.AProcessWhoseTeardownSpinsEndsAfterTheGrace).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "../fixture-plugins/minimal_plugin.hpp"

class SlowOpenPlugin final : public MinimalPlugin {
 public:
  ~SlowOpenPlugin() override {
    if (std::getenv("UNIPERF_FIXTURE_SPIN_AT_UNLOAD") == nullptr) return;
    std::atomic<bool> never{false};
    while (!never.load(std::memory_order_relaxed)) {
    }
  }
  std::string name() const override { return "slow_open"; }
  std::unique_ptr<uniperf::Context> open(const uniperf::Options&) override {
    if (const char* ms = std::getenv("UNIPERF_FIXTURE_OPEN_DELAY_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
    throw uniperf::Unavailable("no device (test fixture)");
  }
};

UNIPERF_PLUGIN(SlowOpenPlugin)
