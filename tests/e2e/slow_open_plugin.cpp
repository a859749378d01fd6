// A plugin whose open() takes as long as UNIPERF_FIXTURE_OPEN_DELAY_MS says
// (a config's env: sets it) and then finds no device: both sides of a run
// are then, for that long, between two meetings of the control connection,
// where a peer that dies is seen only at the next meeting (the e2e test
// Peers.APeerLostBetweenMeetingsIsNamedOnStderr).
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "../fixture-plugins/minimal_plugin.hpp"

class SlowOpenPlugin final : public MinimalPlugin {
 public:
  std::string name() const override { return "slow_open"; }
  std::unique_ptr<uniperf::Context> open(const uniperf::Options&) override {
    if (const char* ms = std::getenv("UNIPERF_FIXTURE_OPEN_DELAY_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
    throw uniperf::Unavailable("no device (test fixture)");
  }
};

UNIPERF_PLUGIN(SlowOpenPlugin)
