#include "cli/device_flags.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace uniperf::cli {
namespace {

/// One flag, and the option it sets for one plugin. A flag that no row
/// names for a plugin is refused for that plugin.
struct Mapping {
  std::string_view plugin;
  std::string_view flag;
  std::string_view key;
  std::string DeviceFlags::*value;
};

// ucx's -i is not here: UCX names a port as part of the device (mlx5_0:1).
constexpr std::array kMappings{
    Mapping{"verbs", "-d", "device", &DeviceFlags::device},
    Mapping{"verbs", "-i", "port", &DeviceFlags::port},
    Mapping{"verbs", "-x", "gid_index", &DeviceFlags::gid},
    Mapping{"ucx", "--tls", "transports", &DeviceFlags::tls},
    Mapping{"ucx", "-d", "devices", &DeviceFlags::device},
    Mapping{"ucx", "-x", "env.UCX_IB_GID_INDEX", &DeviceFlags::gid},
    Mapping{"ofi", "--provider", "provider", &DeviceFlags::provider},
    Mapping{"ofi", "--endpoint", "endpoint", &DeviceFlags::endpoint},
    Mapping{"ofi", "-d", "domain", &DeviceFlags::device},
    Mapping{"udapl", "-d", "provider", &DeviceFlags::device},
};

/// Every flag with the plugin it names when --plugin does not say: the
/// plugin-specific ones decide; -d, -i and -x are perftest's, so verbs'
/// unless another flag names the plugin.
struct Flag {
  std::string_view name;
  std::string DeviceFlags::*value;
  std::string_view home;
  bool decides;
};
constexpr std::array kFlags{
    Flag{"--tls", &DeviceFlags::tls, "ucx", true},
    Flag{"--provider", &DeviceFlags::provider, "ofi", true},
    Flag{"--endpoint", &DeviceFlags::endpoint, "ofi", true},
    Flag{"-d", &DeviceFlags::device, "verbs", false},
    Flag{"-i", &DeviceFlags::port, "verbs", false},
    Flag{"-x", &DeviceFlags::gid, "verbs", false},
};

std::string plugin_of(const DeviceFlags& flags) {
  if (!flags.plugin.empty()) return flags.plugin;
  std::string decided;
  std::string_view decided_by;
  for (const Flag& flag : kFlags) {
    if (!flag.decides || (flags.*flag.value).empty()) continue;
    if (!decided.empty() && decided != flag.home) {
      throw std::invalid_argument(
          fmt::format("{} is a flag of {}, {} one of {}: say which plugin with --plugin",
                      decided_by, decided, flag.name, flag.home));
    }
    decided = flag.home;
    decided_by = flag.name;
  }
  return decided.empty() ? "verbs" : decided;
}

std::string flags_of(std::string_view plugin) {
  std::string names;
  for (const Mapping& m : kMappings) {
    if (m.plugin == plugin) names += fmt::format("{}{}", names.empty() ? "" : ", ", m.flag);
  }
  if (plugin == "ucx") names += ", -i (with -d)";
  return names;
}

}  // namespace

void add_device_flags(CLI::App* command, DeviceFlags& flags) {
  const std::string group =
      "Device (perftest, fi_pingpong and ucx_perftest style; a config inline)";
  command
      ->add_option("--plugin", flags.plugin,
                   "The plugin the flags below configure (default: the one they belong to: "
                   "verbs for -d/-i/-x alone); alone, the plugin's defaults")
      ->group(group);
  command
      ->add_option("-d,--ib-dev", flags.device,
                   "Device: verbs' device (mlx5_0), ucx's devices (mlx5_0:1, eth0), ofi's "
                   "domain, udapl's IA name")
      ->group(group);
  command
      ->add_option("-i,--ib-port", flags.port, "Device port (verbs; ucx: joined to -d as DEV:PORT)")
      ->group(group);
  command
      ->add_option("-x,--gid-index", flags.gid,
                   "GID index, for RoCE (verbs; ucx: UCX_IB_GID_INDEX)")
      ->group(group);
  command
      ->add_option("--provider", flags.provider, "libfabric provider: tcp, shm, verbs;ofi_rxm ...")
      ->group(group);
  command->add_option("--endpoint", flags.endpoint, "libfabric endpoint type: msg or rdm")
      ->group(group);
  command
      ->add_option("--tls", flags.tls, "UCX transports (UCX_TLS): posix,self | tcp | rc_verbs ...")
      ->group(group);
}

std::optional<std::string> inline_config_of(const DeviceFlags& flags) {
  if (!flags.any()) return std::nullopt;
  const std::string plugin = plugin_of(flags);
  std::vector<std::string> pieces;
  for (const Flag& flag : kFlags) {
    std::string value = flags.*flag.value;
    if (value.empty()) continue;
    // '=' would start another KEY=VALUE of the text composed below.
    if (value.find('=') != std::string::npos)
      throw std::invalid_argument(fmt::format("{} {}: a value holds no '='", flag.name, value));
    if (plugin == "ucx" && flag.value == &DeviceFlags::port) {
      if (flags.device.empty())
        throw std::invalid_argument("-i with ucx: give the device too (-d)");
      continue;  // joined to -d below
    }
    const Mapping* mapping = nullptr;
    for (const Mapping& m : kMappings) {
      if (m.plugin == plugin && m.value == flag.value) mapping = &m;
    }
    if (mapping == nullptr) {
      const std::string takes = flags_of(plugin);
      throw std::invalid_argument(fmt::format(
          "{} does not apply to plugin {}: it takes {} (any option: -c {}:KEY=VALUE; uniperf info "
          "{})",
          flag.name, plugin, takes.empty() ? "none of these flags" : takes, plugin, plugin));
    }
    if (plugin == "ucx" && mapping->value == &DeviceFlags::device && !flags.port.empty())
      value += ":" + flags.port;
    pieces.push_back(fmt::format("{}={}", mapping->key, value));
  }
  std::string text = plugin;
  for (std::size_t i = 0; i < pieces.size(); ++i) text += (i == 0 ? ":" : ",") + pieces[i];
  return text;
}

std::string command_line_of(const DeviceFlags& flags) {
  std::string text = flags.plugin.empty() ? "" : "--plugin " + flags.plugin;
  for (const Flag& flag : kFlags) {
    const std::string& value = flags.*flag.value;
    if (!value.empty()) text += fmt::format("{}{} {}", text.empty() ? "" : " ", flag.name, value);
  }
  return text;
}

}  // namespace uniperf::cli
