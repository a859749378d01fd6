// Shared pieces of the `ofi` plugin: owning handles for libfabric objects,
// error text, and the settings parsed from a config's options.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <cstdint>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>

namespace uniperf::ofi {

/// The libfabric API version this plugin was written against (Debian 12
/// ships 1.17); fi_getinfo answers with structures of this version.
inline constexpr std::uint32_t kApiVersion = FI_VERSION(1, 17);

/// Closes any fid-derived object (fid_fabric, fid_domain, fid_ep, ...).
template <class T>
void close_fid(T* object) noexcept {
  fi_close(&object->fid);
}
template <class T>
using FiPtr = support::Handle<T*, &close_fid<T>>;
using InfoPtr = support::Handle<fi_info*, &fi_freeinfo>;

/// "what: libfabric's text for rc" (rc as returned: negative errno).
inline std::string fi_error(const std::string& what, long rc) {
  return "ofi: " + what + ": " + fi_strerror(static_cast<int>(rc < 0 ? -rc : rc));
}

inline void check(long rc, const std::string& what) {
  if (rc != 0) throw TransportError(fi_error(what, rc));
}

enum class EndpointKind : std::uint8_t { msg, rdm };

struct Settings {
  std::string provider;  ///< fi_info prov_name, e.g. "tcp", "shm", "udp;ofi_rxd"
  EndpointKind kind = EndpointKind::rdm;
  std::string fabric;        ///< fabric name filter ("" = any)
  std::string domain;        ///< domain name filter ("" = any)
  std::string address;       ///< msg: where the responder listens
  int port = 0;              ///< msg: the responder's port (0 = any)
  std::string peer_address;  ///< msg: where the initiator connects ("" = control peer)
  std::string progress;      ///< "" | auto | manual: requested data progress
  /// Inline requests (kInline): false = posted with FI_INJECT | FI_COMPLETION
  /// and completed by the provider's CQ entry; true = posted with fi_inject
  /// (fi_inject_write, fi_inject_writedata), which make no CQ entry, and
  /// completed when the call returns, as fabtests count an inject.
  bool inject_at_return = false;
};

}  // namespace uniperf::ofi
