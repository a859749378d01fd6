// A plugin waiting for its peer inside its library's blocking call gives up
// once the engine has (PeerChannel::cancelled), rather than at the library's
// own timeout: a dead peer must end a run within seconds. Over the real ofi
// plugin and libfabric's tcp provider (msg endpoints: the responder waits
// for a connection request that a dead initiator never sends), and stops
// as soon as an initiator that failed before connecting says so; over the
// real ucx plugin and UCX's shared memory (the responder waits for the
// handshake message of an initiator that died after the address exchange).
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

/// The responder's connect() of `context` over `channel`: what it threw
/// ("<nothing thrown>" if nothing) and how long it took.
std::pair<std::string, std::chrono::steady_clock::duration> connect_timed(
    Context& context, const EndpointParams& params, PeerChannel& channel) {
  const auto started = std::chrono::steady_clock::now();
  std::string why = "<nothing thrown>";
  try {
    context.connect(params, channel);
  } catch (const TransportError& e) {
    why = e.what();
  }
  return {why, std::chrono::steady_clock::now() - started};
}

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

  std::pair<std::string, std::chrono::steady_clock::duration> connect_as_responder(
      PeerChannel& channel) {
    EndpointParams params;
    params.max_message = 4096;
    return connect_timed(*context, params, channel);
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

/// The initiator's channel, forwarding to the real one, whose side dies at
/// its second exchange (the connect outcome): the peer gets this side's
/// outcome, so it goes on to wait for the connection over the transport,
/// and this side never gets there. 300 ms later the engine gives the test
/// up (`given_up`), as its watchdog does when the peer's control connection
/// closes.
class DiesAfterTheOutcome final : public PeerChannel {
 public:
  DiesAfterTheOutcome(PeerChannel& real, std::atomic<bool>& given_up)
      : real_(real), given_up_(given_up) {}
  int rank() const override { return real_.rank(); }
  Bytes exchange(std::span<const std::byte> mine) override {
    Bytes theirs = real_.exchange(mine);
    if (++exchanges_ < 2) return theirs;
    std::this_thread::sleep_for(300ms);
    given_up_ = true;
    throw TransportError("the initiator died after the connect outcome");
  }
  void barrier() override { real_.barrier(); }

 private:
  PeerChannel& real_;
  std::atomic<bool>& given_up_;
  int exchanges_ = 0;
};

TEST(UcxSetupCancel, AResponderWaitingForTheHandshakeStopsWhenTheTestIsGivenUp) {
  loader::PluginRegistry plugins{{std::filesystem::path(UNIPERF_PLUGIN_DIR)}};
  Plugin* ucx = plugins.find("ucx");
  if (ucx == nullptr) GTEST_SKIP() << "the ucx plugin: " << plugins.why_missing("ucx");
  const auto config = suite::load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/ucx-shm.yaml");
  std::unique_ptr<Context> initiator_context;
  std::unique_ptr<Context> responder_context;
  try {
    const auto options = suite::validate_options(config, ucx->options());
    initiator_context = ucx->open(options);
    responder_context = ucx->open(options);
  } catch (const Unavailable& e) {
    GTEST_SKIP() << "unavailable: " << e.what();
  }
  EndpointParams params;
  params.max_message = 4096;

  auto [initiator_end, responder_end] = bootstrap::make_in_process_pair();
  std::atomic<bool> given_up{false};
  // Its worker stays open (the test holds the context), so the responder's
  // endpoint to it is made; only its handshake never comes.
  auto initiator = std::async(std::launch::async, [&, end = initiator_end.get()] {
    bootstrap::BootstrapPeerChannel real(*end);
    DiesAfterTheOutcome channel(real, given_up);
    try {
      initiator_context->connect(params, channel);
    } catch (const TransportError&) {
      // its death, as staged
    }
  });

  bootstrap::BootstrapPeerChannel channel(*responder_end, &given_up);
  const auto [why, waited] = connect_timed(*responder_context, params, channel);
  initiator.get();
  EXPECT_NE(why.find("given up"), std::string::npos) << why;
  // Without the check the wait is the plugin's 10 s handshake limit; a
  // loaded machine stretches 0.3 s, never to 8.
  EXPECT_LT(waited, 8s) << std::chrono::duration<double>(waited).count() << " s: " << why;
}

}  // namespace
}  // namespace uniperf
