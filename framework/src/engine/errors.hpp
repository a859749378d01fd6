// The engine's own failures, as types the session can tell apart without
// reading their text. A plugin's failures stay the plugin's (TransportError,
// Unsupported, Unavailable: uniperf/plugin.hpp).
#pragma once

#include <stdexcept>
#include <string>
#include <uniperf/plugin.hpp>

namespace uniperf::engine {

/// The run was stopped from outside the loop: the session's watchdog saw the
/// peer's control connection close or the size's deadline pass, or another
/// flow of the same test failed. Whoever stopped it has the real reason.
/// A TransportError, as the endpoint it interrupted is no longer usable.
struct Aborted : TransportError {
  Aborted() : TransportError("run aborted: the peer is gone or the test passed its deadline") {}
  /// `where`: how far the loop got ("after 12 of 200 messages of ...").
  explicit Aborted(const std::string& where) : TransportError("run aborted " + where) {}
};

/// The peer sent a control message the engine did not expect here: the two
/// sides disagree about where they are in a test.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace uniperf::engine
