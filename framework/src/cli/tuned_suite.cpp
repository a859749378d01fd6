#include "cli/tuned_suite.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "cli/shipped_files.hpp"
#include "suite/config.hpp"
#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"
#include "suite/tuning.hpp"

namespace uniperf::cli {
namespace {

namespace fs = std::filesystem;

/// The name records give the config a tuning file was tuned on, as `uniperf
/// tune -c` was given it: that config file's `name:` where the file is at
/// hand (here, or shipped), else its stem (a file tuned elsewhere).
std::string name_of_tuned_config(const std::string& given) {
  const std::string path = find_shipped(given, ShippedKind::config);
  std::error_code error;
  if (fs::is_regular_file(path, error)) {
    try {
      return suite::load_config(path).name;
    } catch (const suite::SpecError&) {
      // changed since it was tuned: its name is the stem's guess below
    }
  }
  return fs::path(given).stem().string();
}

}  // namespace

model::SuiteSpec tuned_suite(const model::SuiteSpec& suite,
                             const std::vector<std::string>& tuning_files,
                             const std::vector<model::ConfigSpec>& configs) {
  if (tuning_files.empty()) return suite;
  std::vector<std::string> run_configs;
  for (const model::ConfigSpec& config : configs) run_configs.push_back(config.name);

  std::vector<suite::ConfigTuning> tunings;
  for (const std::string& file : tuning_files) {
    suite::TuningChoices tuning = suite::parse_tuning(suite::read_whole_file(file), file);
    if (tuning.config.empty())
      throw suite::SpecError(file, 1, "tuning.config",
                             "missing: the config it was tuned on (uniperf tune writes it)");
    const std::string name = name_of_tuned_config(tuning.config);
    if (std::find(run_configs.begin(), run_configs.end(), name) == run_configs.end())
      throw suite::SpecError(
          file, tuning.config_line, "tuning.config",
          "tuned on config '" + name + "' (" + tuning.config +
              "), not a config of this run (its configs: " + suite::join(run_configs) +
              "): a tuning file applies to the config it was tuned on");
    const auto same = std::find_if(tunings.begin(), tunings.end(),
                                   [&](const suite::ConfigTuning& t) { return t.config == name; });
    if (same != tunings.end())
      throw suite::SpecError(
          file, tuning.config_line, "tuning.config",
          "config '" + name + "' has a tuning file already: " + same->tuning.file);
    tunings.push_back({std::move(tuning), name});
  }
  model::SuiteSpec tuned = suite::parse_suite(
      suite::apply_tuning(suite.source, suite.file, tunings, run_configs), suite.file);
  for (const suite::ConfigTuning& tuning : tunings)
    tuned.tuned_by[tuning.config] = tuning.tuning.file;
  return tuned;
}

}  // namespace uniperf::cli
