// `uniperf run --tuning FILE ...`: each tuning file of `uniperf tune` applied
// to the config of the run it was tuned on (docs/pipeline.md, "Applying a
// tuning file").
#pragma once

#include <string>
#include <vector>

#include "model/suite_spec.hpp"

namespace uniperf::cli {

/// `suite` with every tuning file applied to the config of `configs` it
/// names under `config:` (matched by the config's name: the file's `name:`,
/// else its stem). A tuning file for none of the run's configs, a second
/// one for the same config, or one without `config:` is a SpecError naming
/// the file, its line and the run's configs. The result is parsed from the
/// tuned text and names each file in `tuned_by` under its config.
model::SuiteSpec tuned_suite(const model::SuiteSpec& suite,
                             const std::vector<std::string>& tuning_files,
                             const std::vector<model::ConfigSpec>& configs);

}  // namespace uniperf::cli
