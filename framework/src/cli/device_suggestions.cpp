#include "cli/device_suggestions.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace uniperf::cli {
namespace {

namespace fs = std::filesystem;

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

/// The GID index perftest users pass as -x: the lowest of `port` whose type
/// is RoCE v2 and whose GID is an IPv4-mapped address (routable, as
/// mlx5's index 3 usually is), else the lowest RoCE v2 one that is set; ""
/// when there is none (InfiniBand, or RoCE v1 only).
std::string roce_v2_gid_index(const fs::path& port) {
  std::vector<int> indexes;
  for (const auto& type : sorted_entries(port / "gid_attrs" / "types")) {
    try {
      indexes.push_back(std::stoi(type.filename().string()));
    } catch (const std::exception&) {
    }
  }
  std::sort(indexes.begin(), indexes.end());
  std::string any_v2;
  for (const int index : indexes) {
    const std::string name = std::to_string(index);
    if (first_line(port / "gid_attrs" / "types" / name) != "RoCE v2") continue;
    const std::string gid = first_line(port / "gids" / name);
    if (gid.empty() || gid.find_first_not_of("0:") == std::string::npos) continue;
    // sysfs spells an IPv4-mapped GID 0000:0000:0000:0000:0000:ffff:0a4d:0002.
    if (gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0) return name;
    if (any_v2.empty()) any_v2 = name;
  }
  return any_v2;
}

}  // namespace

std::string DeviceSuggestion::command_line() const {
  return command_line_of(flags);
}

std::vector<DeviceSuggestion> rdma_suggestions(const std::string& sysfs_root) {
  std::vector<DeviceSuggestion> found;
  for (const auto& device : sorted_entries(fs::path(sysfs_root) / "class" / "infiniband")) {
    for (const auto& port : sorted_entries(device / "ports")) {
      // "4: ACTIVE"
      if (first_line(port / "state").find("ACTIVE") == std::string::npos) continue;
      DeviceSuggestion s{.plugin = "verbs", .flags = {}};
      s.flags.device = device.filename().string();
      s.flags.port = port.filename().string();
      s.flags.gid = roce_v2_gid_index(port);
      found.push_back(s);
    }
  }
  return found;
}

std::vector<DeviceSuggestion> device_suggestions() {
  std::vector<DeviceSuggestion> all = rdma_suggestions("/sys");
  std::set<std::string> interfaces;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET && (a->ifa_flags & IFF_UP))
        interfaces.insert(a->ifa_name);
    }
    ::freeifaddrs(list);
  }
  for (const auto& name : interfaces) {
    DeviceSuggestion ofi{.plugin = "ofi", .flags = {}};
    ofi.flags.provider = "tcp";
    ofi.flags.endpoint = "msg";
    ofi.flags.device = name;
    all.push_back(ofi);
    DeviceSuggestion ucx{.plugin = "ucx", .flags = {}};
    ucx.flags.tls = "tcp";
    ucx.flags.device = name;
    all.push_back(ucx);
  }
  DeviceSuggestion ucx_shm{.plugin = "ucx", .flags = {}};
  ucx_shm.flags.tls = "posix,self";
  all.push_back(ucx_shm);
  DeviceSuggestion ofi_shm{.plugin = "ofi", .flags = {}};
  ofi_shm.flags.provider = "shm";
  all.push_back(ofi_shm);
  return all;
}

}  // namespace uniperf::cli
