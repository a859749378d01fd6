// Configs: which plugin, with which options, in YAML.
//
//   name: ucx-shm                # optional; default: the file's stem
//   plugin: ucx                  # required
//   description: ...             # optional
//   options:                     # checked by validate_options() against the plugin's
//     transports: posix,self     # declared OptionSpecs
//   env:                         # environment set before the plugin opens
//     UCX_RNDV_THRESH: 8K
//
// In options and env values, ${config_dir} stands for the absolute directory
// of the config file (dat_conf: ${config_dir}/udapl-rxe.dat.conf).
#pragma once

#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

#include "model/suite_spec.hpp"
#include "suite/diagnostics.hpp"

namespace uniperf::suite {

/// Reads a config file; content_hash is the SHA-256 of its bytes.
model::ConfigSpec load_config(const std::string& path);
model::ConfigSpec parse_config(const std::string& yaml_text, const std::string& file_label);

/// Checks a config's options against what the plugin declares and fills in
/// the defaults. An unknown key or a value that does not parse as its
/// OptionType throws SpecError naming file, line and "options.KEY".
Options validate_options(const model::ConfigSpec& config, const std::vector<OptionSpec>& specs);

}  // namespace uniperf::suite
