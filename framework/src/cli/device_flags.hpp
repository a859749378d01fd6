// The native tools' device flags, as one config inline: perftest's
// `-d DEV -i PORT -x GID_INDEX`, libfabric's `--provider`/`--endpoint`
// (fi_pingpong's -p/-e), ucx_perftest's `--tls`, and `--plugin NAME` to say
// which plugin takes them. They compose the text a user could have given as
// `-c PLUGIN:KEY=VALUE,...`, so the config is checked by the plugin's option
// specs, named in records and shipped to a bare server exactly as that one.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace uniperf::cli {

struct DeviceFlags {
  std::string plugin;    // --plugin NAME
  std::string device;    // -d, --ib-dev DEV
  std::string port;      // -i, --ib-port N
  std::string gid;       // -x, --gid-index N
  std::string provider;  // --provider NAME (ofi)
  std::string endpoint;  // --endpoint msg|rdm (ofi)
  std::string tls;       // --tls LIST (ucx)

  bool any() const {
    return !(plugin.empty() && device.empty() && port.empty() && gid.empty() && provider.empty() &&
             endpoint.empty() && tls.empty());
  }
};

/// Adds --plugin, -d/--ib-dev, -i/--ib-port, -x/--gid-index, --provider,
/// --endpoint and --tls to `command`, in a group of their own.
void add_device_flags(CLI::App* command, DeviceFlags& flags);

/// The config inline these flags say (`verbs:device=mlx5_0,port=1,gid_index=3`),
/// or nothing when none was given. Without --plugin the plugin is the one
/// the flags belong to (-d/-i/-x: verbs, --provider/--endpoint: ofi, --tls:
/// ucx). Throws std::invalid_argument naming the flag that no plugin of the
/// line takes, or the flags that name different plugins.
std::optional<std::string> inline_config_of(const DeviceFlags& flags);

/// The flags as a user types them ("--plugin ucx --tls tcp -d eth0",
/// "-d rxe0 -i 1 -x 1"): the ones given, in the order --help lists them.
std::string command_line_of(const DeviceFlags& flags);

}  // namespace uniperf::cli
