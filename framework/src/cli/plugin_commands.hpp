// `uniperf list`, `uniperf info [PLUGIN]` and `uniperf validate FILE...`:
// what is installed, what a plugin offers, what a suite may say, whether
// files are well formed.
#pragma once

#include <string>
#include <vector>

namespace uniperf::cli {

/// The plugins found, their versions and availability; `configs_too`: and
/// which configs at hand open here (each opened in a child process).
int list_plugins(bool configs_too);
/// A plugin's options and, opened with defaults or `config_path`'s
/// options, its capabilities. With no plugin named: the suite vocabulary
/// (every test knob with its values and default, the run-length keys, the
/// metrics), from the same tables the suite reader uses.
int plugin_info(const std::string& name, const std::string& config_path);
/// Checks suites and configs; exit 2 when any is invalid.
int validate_files(const std::vector<std::string>& files);

}  // namespace uniperf::cli
