// The declared value sets of plugin options (OptionSpec::choices, min, max):
// checked here, once for every plugin, so no plugin parses its enums or
// checks its ranges by hand, and every error names file, line and key.
#pragma once

#include <string>
#include <uniperf/plugin.hpp>

#include "model/suite_spec.hpp"

namespace uniperf::suite {

/// Throws SpecError naming `config.file`, `line` and "options.KEY" when
/// `value` (already checked to parse as spec.type) is not one of
/// spec.choices, or is a number outside [spec.min, spec.max].
void check_option_value(const model::ConfigSpec& config, int line, const OptionSpec& spec,
                        const std::string& value);

/// What `uniperf info` prints after an option's help: " (one of: tag, am)",
/// " (0..65535)", " (>= 1)"; "" when any value of the type is accepted.
std::string describe_option_values(const OptionSpec& spec);

}  // namespace uniperf::suite
