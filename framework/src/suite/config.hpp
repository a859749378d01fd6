// Configs: which plugin, with which options, in YAML.
//
//   name: ucx-shm                # optional; default: the file's stem
//   plugin: ucx                  # required
//   description: ...             # optional
//   options:                     # checked by validate_options() against the plugin's
//     transports: posix,self     # declared OptionSpecs
//   env:                         # environment set before the plugin opens
//     UCX_RNDV_THRESH: 8K
//   rails:                       # optional: two or more rails, each its options
//     - {devices: eth0}          # over the config's (docs/rails.md)
//     - {devices: eth1}
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

/// A config given on the command line instead of a file (`-c
/// ucx:transports=posix,self`): PLUGIN[:KEY=VALUE[,KEY=VALUE...]], where
/// `env.NAME=VALUE` sets an environment variable as a file's env: does, and
/// a piece without '=' continues the value before it (transports=posix,self
/// is one option). Named by the text itself, so records and tables show
/// exactly what was given; its content_hash is that text's SHA-256, so two
/// peers given the same text agree. Throws SpecError (file "-c", line 0)
/// naming the key.
model::ConfigSpec parse_inline_config(const std::string& text);
/// Whether a -c argument is a config inline rather than a file: no file of
/// that name exists, it names no directory or YAML file, and it has a ':' or
/// is one of `plugins` (a bare plugin name: its defaults).
bool is_inline_config(const std::string& argument, const std::vector<std::string>& plugins);

/// Checks a config's options against what the plugin declares and fills in
/// the defaults. An unknown key or a value that does not parse as its
/// OptionType throws SpecError naming file, line and "options.KEY".
Options validate_options(const model::ConfigSpec& config, const std::vector<OptionSpec>& specs);
/// validate_options() of every rail (ConfigSpec::rail): one Options per
/// rail, one for a config without rails.
std::vector<Options> validate_rails(const model::ConfigSpec& config,
                                    const std::vector<OptionSpec>& specs);

}  // namespace uniperf::suite
