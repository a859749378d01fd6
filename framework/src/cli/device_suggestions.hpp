// What device flags are worth trying on this host, found without opening a
// transport: the RDMA ports sysfs lists (with the RoCE v2 GID index a
// perftest user would pass as -x), the network interfaces that have an
// address, and shared memory. `uniperf list` opens each before it shows it.
#pragma once

#include <string>
#include <vector>

#include "cli/device_flags.hpp"

namespace uniperf::cli {

struct DeviceSuggestion {
  std::string plugin;  ///< the plugin the flags compose a config of
  DeviceFlags flags;   ///< --plugin left empty: the flags name their plugin

  /// The flags as a user types them: "-d rxe0 -i 1 -x 1".
  std::string command_line() const;
};

/// Under `sysfs_root` (/sys in a run; a tree of files in the tests):
/// class/infiniband/DEV/ports/N with state ACTIVE, each with its first
/// RoCE v2 GID index whose GID is set (none on InfiniBand: no -x).
std::vector<DeviceSuggestion> rdma_suggestions(const std::string& sysfs_root);

/// Every suggestion for this host: rdma_suggestions("/sys"), then each
/// interface that is up with an IPv4 address for ofi tcp and ucx tcp, then
/// shared memory for ucx and ofi.
std::vector<DeviceSuggestion> device_suggestions();

}  // namespace uniperf::cli
