// A plugin waiting for its peer inside its library's blocking call gives up
// once the engine has (PeerChannel::cancelled), rather than at the library's
// own timeout: a dead peer must end a run within seconds. Over the real ofi
// plugin and libfabric's tcp provider (msg endpoints: the responder waits
// for a connection request that a dead initiator never sends), and stops
// as soon as an initiator that failed before connecting says so.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <uniperf/plugin_support.hpp>
#include <utility>

#include "bootstrap/bootstrap.hpp"
#include "loader/plugin_registry.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using namespace std::chrono_literals;

/// A Context of the real ofi plugin over libfabric's tcp provider
/// (configs/ofi-tcp.yaml); the test is skipped where either is missing.
class SetupCancel : public ::testing::Test {
 protected:
  void SetUp() override {
    Plugin* ofi = plugins_.find("ofi");
    if (ofi == nullptr) GTEST_SKIP() << "the ofi plugin: " << plugins_.why_missing("ofi");
    const auto config =
        suite::load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/ofi-tcp.yaml");
    try {
      context = ofi->open(suite::validate_options(config, ofi->options()));
    } catch (const Unavailable& e) {
      GTEST_SKIP() << "unavailable: " << e.what();
    }
  }

  /// The responder's connect() over `channel`: what it threw ("<nothing
  /// thrown>" if nothing) and how long it took.
  std::pair<std::string, std::chrono::steady_clock::duration> connect_as_responder(
      PeerChannel& channel) {
    EndpointParams params;
    params.max_message = 4096;
    const auto started = std::chrono::steady_clock::now();
    std::string why = "<nothing thrown>";
    try {
      context->connect(params, channel);
    } catch (const TransportError& e) {
      why = e.what();
    }
    return {why, std::chrono::steady_clock::now() - started};
  }

  loader::PluginRegistry plugins_{{std::filesystem::path(UNIPERF_PLUGIN_DIR)}};
  std::unique_ptr<Context> context;
};

TEST_F(SetupCancel, AnOfiResponderWaitingForAConnectionStopsWhenTheTestIsGivenUp) {
  auto [initiator_end, responder_end] = bootstrap::make_in_process_pair();
  std::atomic<bool> given_up{false};
  // The initiator learns the port, then never connects (it died, as far as
  // the responder can tell); the engine gives up on the test 300 ms later,
  // as its watchdog does when the peer's control connection closes.
  auto initiator = std::async(std::launch::async, [&, end = initiator_end.get()] {
    bootstrap::BootstrapPeerChannel channel(*end);
    support::exchange_step(channel, "ofi", [] { return Bytes{}; });
    std::this_thread::sleep_for(300ms);
    given_up = true;
    try {
      support::exchange_outcome(channel, "ofi", nullptr);
    } catch (const TransportError&) {
      // the responder's failure, as expected
    }
  });

  bootstrap::BootstrapPeerChannel channel(*responder_end, &given_up);
  const auto [why, waited] = connect_as_responder(channel);
  initiator.get();
  EXPECT_NE(why.find("given up"), std::string::npos) << why;
  // Without the check the wait is the plugin's 20 s connect timeout; a
  // loaded machine stretches 0.4 s, never to 10.
  EXPECT_LT(waited, 10s) << std::chrono::duration<double>(waited).count() << " s: " << why;
}

TEST_F(SetupCancel, AnOfiResponderStopsWaitingWhenTheInitiatorFailedBeforeConnecting) {
  auto [initiator_end, responder_end] = bootstrap::make_in_process_pair();
  // The initiator learns the port, then fails at once (fi_connect refused,
  // a bad peer_address) and says so; the engine has not given up on the
  // test (nothing cancels), so only the initiator's word can end the wait.
  auto initiator = std::async(std::launch::async, [&, end = initiator_end.get()] {
    bootstrap::BootstrapPeerChannel channel(*end);
    support::exchange_step(channel, "ofi", [] { return Bytes{}; });
    try {
      throw TransportError("ofi: 'nohost' is not a numeric IPv4 address");
    } catch (const TransportError&) {
      try {
        support::exchange_outcome(channel, "ofi", std::current_exception());
      } catch (const TransportError&) {
        // its own failure, rethrown
      }
    }
  });

  bootstrap::BootstrapPeerChannel channel(*responder_end);
  const auto [why, waited] = connect_as_responder(channel);
  initiator.get();
  EXPECT_NE(why.find("'nohost' is not a numeric IPv4 address"), std::string::npos) << why;
  // Without the check the wait is the plugin's 20 s connect timeout.
  EXPECT_LT(waited, 10s) << std::chrono::duration<double>(waited).count() << " s: " << why;
}

}  // namespace
}  // namespace uniperf
