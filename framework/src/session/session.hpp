// A run: the handshake between the two uniperf processes, then every config
// x test x size of a suite in lockstep on both sides, producing records on
// the initiator. Sits above the engine, loader, suite model and reporters
// and below the CLI; tests drive it in-process with two threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "loader/plugin_registry.hpp"
#include "model/suite_spec.hpp"
#include "results/record.hpp"

namespace uniperf::session {

/// The control protocol's version: bumped on any change to the messages the
/// two sides exchange (handshake, engine control, plugin blobs framing).
// 2: provenance, trial counts, run-forever stop; 3: the engine's typed messages
// (engine/peer_protocol.hpp) replace CBOR keys, JSON "done" and a decimal count.
inline constexpr int kProtocolVersion = 3;

struct HandshakeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Both sides call it first. Rejects a peer of another protocol version,
/// another suite or other configs with a message that says which. Each side
/// sends its own `provenance` facts (an object, or null) and gets the peer's
/// back (null from a peer that sent none), so the initiator's records
/// describe both hosts.
nlohmann::json handshake(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                         const std::vector<model::ConfigSpec>& configs,
                         const nlohmann::json& provenance = nullptr);

struct Observer {
  /// Called on the initiator before each (config, test, size) runs.
  std::function<void(const model::ConfigSpec&, const model::TestSpec&, std::uint64_t size,
                     std::size_t index, std::size_t total)>
      on_start;
  /// Called on the initiator with each finished record.
  std::function<void(const results::Record&)> on_record;
  /// Called on the initiator after each trial / run-forever window with that
  /// window's own record (`number` from 1), before the final record.
  std::function<void(const results::Record& window, std::size_t number)> on_interim;
  /// Called on both sides when the run stops early: a test failed
  /// (`peer_lost` false) or the control connection was lost (true). The
  /// responder keeps no records, so this is how it learns its run failed.
  std::function<void(const std::string& reason, bool peer_lost)> on_stop;
};

struct RunSettings {
  /// Longest one size may take beyond its own duration before the run is
  /// aborted as hung.
  std::chrono::seconds size_timeout{120};
  /// Copied into every record: the run's provenance (see
  /// results::Record::provenance) and the preflight warnings.
  nlohmann::json provenance = nlohmann::json::object();
  std::vector<std::string> warnings;
  /// Run-forever: raised (by a SIGINT handler) to end the current test after
  /// its current window; the two sides agree on it at each window boundary,
  /// so either side's Ctrl-C ends both cleanly. Sizes not reached are
  /// recorded as skipped ("interrupted").
  const std::atomic<bool>* stop_requested = nullptr;
};

/// Runs the suite over every config on an established, handshaken control
/// connection. Returns the records (initiator) or nothing (responder).
/// An error that leaves the two sides out of step (a transport failure in
/// the middle of a test, a dead peer) ends the run: the failing test gets an
/// error record, every test not run after it gets one saying why, and the
/// function returns. Both sides return within seconds.
std::vector<results::Record> run(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                                 const std::vector<model::ConfigSpec>& configs,
                                 loader::PluginRegistry& plugins, const RunSettings& settings,
                                 const Observer& observer = {});

}  // namespace uniperf::session
