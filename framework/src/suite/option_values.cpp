#include "suite/option_values.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::suite {
namespace {

/// The range as text: "0..65535", ">= 1", "<= 64".
std::string range_text(const OptionSpec& spec) {
  if (spec.min && spec.max) return std::to_string(*spec.min) + ".." + std::to_string(*spec.max);
  if (spec.min) return ">= " + std::to_string(*spec.min);
  if (spec.max) return "<= " + std::to_string(*spec.max);
  return "";
}

/// The option's value as a number (sizes in bytes), saturated to int64:
/// a size above 8 EiB is above any max a plugin can declare.
std::int64_t number_of(const OptionSpec& spec, const std::string& value) {
  if (spec.type == OptionType::size) {
    const std::uint64_t bytes = parse_size(value).value_or(0);
    return bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(bytes);
  }
  std::int64_t number = 0;
  std::from_chars(value.data(), value.data() + value.size(), number);
  return number;
}

}  // namespace

void check_option_value(const model::ConfigSpec& config, int line, const OptionSpec& spec,
                        const std::string& value) {
  const std::string key = "options." + spec.name;
  // "" is "not set" (the plugin's default decides), never a choice to check.
  if (spec.type == OptionType::string && !spec.choices.empty() && !value.empty() &&
      std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
    throw SpecError(config.file, line, key,
                    "expected one of " + join(spec.choices) + ", got '" + value + "'");
  }
  const bool numeric = spec.type == OptionType::integer || spec.type == OptionType::size;
  if (!numeric || value.empty() || (!spec.min && !spec.max)) return;
  const std::int64_t number = number_of(spec, value);
  if ((spec.min && number < *spec.min) || (spec.max && number > *spec.max)) {
    throw SpecError(config.file, line, key,
                    "expected " + range_text(spec) +
                        (spec.type == OptionType::size ? " bytes" : "") + ", got '" + value + "'");
  }
}

std::string describe_option_values(const OptionSpec& spec) {
  if (!spec.choices.empty()) return " (one of: " + join(spec.choices) + ")";
  const std::string range = range_text(spec);
  return range.empty() ? "" : " (" + range + ")";
}

}  // namespace uniperf::suite
