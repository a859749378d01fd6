// Pieces shared by the ucx plugin's context and endpoints: settings, the
// per-worker state every endpoint of a Context uses, and status helpers.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>
#include <vector>

namespace uniperf::ucx {

/// Which UCP two-sided API carries Op::send.
enum class TwoSidedApi : std::uint8_t { tag, active_message };

/// What the plugin's options asked for, already validated by type.
struct Settings {
  std::string transports;                       ///< UCX_TLS; "" = UCX's default
  std::string devices;                          ///< UCX_NET_DEVICES; "" = UCX's default
  std::optional<std::uint64_t> rndv_threshold;  ///< UCX_RNDV_THRESH in bytes
  TwoSidedApi api = TwoSidedApi::tag;
  bool wakeup = true;        ///< UCP_FEATURE_WAKEUP: Endpoint::wait() works
  bool allocate = true;      ///< Context::allocate_memory() hands out UCP-allocated memory
  bool peer_errors = false;  ///< UCP_ERR_HANDLING_MODE_PEER on every endpoint
};

/// The UCP objects of one Context and what its endpoints share. Endpoints
/// keep a reference: the engine destroys every endpoint before the Context.
struct WorkerState {
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  int event_fd = -1;             ///< -1 unless wake-up was requested
  std::size_t request_size = 0;  ///< bytes UCP needs in front of a user request
  TwoSidedApi api = TwoSidedApi::tag;
  bool peer_errors = false;
  /// Completion callbacks run so far, and that count when wait() last
  /// looked. All endpoints share the worker, so one endpoint's progress call
  /// may finish another endpoint's request; the event descriptor will not
  /// signal that again, and wait() must not sleep through it.
  std::uint64_t callbacks = 0;
  std::uint64_t callbacks_seen_by_wait = 0;
  /// Active-message ids in use; an endpoint takes the lowest free one.
  std::vector<bool> am_ids_in_use;
  /// Tags are unique for the Context's life, so a message left unmatched by
  /// an earlier test can never be taken for one of a later test.
  std::uint64_t next_channel = 1;
};

inline std::string status_text(ucs_status_t status) {
  return ucs_status_string(status);
}

/// Throws TransportError("ucx: <what>: <status>") unless status is UCS_OK.
inline void check(ucs_status_t status, std::string_view what) {
  if (status != UCS_OK) {
    throw TransportError("ucx: " + std::string(what) + ": " + status_text(status));
  }
}

}  // namespace uniperf::ucx
