// What the `udapl` plugin hands from its option parsing (udapl_plugin.cpp,
// no DAT dependency) to the DAT implementation module it loads at open().
#pragma once

#include <string>
#include <uniperf/plugin.hpp>

namespace uniperf::udapl {

struct Settings {
  std::string provider;      ///< IA name in the DAT registry, e.g. ofa-v2-cma-roe-rxe
  std::string dat_conf;      ///< dat.conf applied through DAT_OVERRIDE ("" = registry default)
  int port = 0;              ///< conn_qual base of the responder's PSP; 0 = any free one
  std::string peer_address;  ///< IA address the initiator connects to ("" = the responder's)
  int evd_qlen = 0;          ///< DTO EVD length; 0 = send_depth + recv_depth + slack
};

/// Exported by libuniperf_udapl_dat.so: opens the IA and returns a Context
/// (owned by the caller), or throws Unavailable / TransportError.
using OpenFunction = Context* (*)(const Settings&);
inline constexpr const char* kOpenSymbol = "uniperf_udapl_open";
inline constexpr const char* kDatModule = "libuniperf_udapl_dat.so";

}  // namespace uniperf::udapl
