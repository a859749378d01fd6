// The values a test starts from before its suite says anything: the
// built-in defaults of its pattern, and the presets that copy another
// tool's choices (perftest, osu, itperf).
#pragma once

#include <string>
#include <vector>

#include "model/test_spec.hpp"
#include "suite/layers.hpp"

namespace uniperf::suite {

/// The preset names a suite may give.
const std::vector<std::string>& preset_names();

Layer builtin_defaults(model::Pattern pattern, int line);
Layer preset_values(const std::string& preset, model::Pattern pattern, Op op, int line);
/// Sizes when a test gives none.
std::vector<std::uint64_t> default_sizes(Op op, model::Pattern pattern, const std::string& preset);

}  // namespace uniperf::suite
