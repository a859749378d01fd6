// `uniperf lat|bw|rate`: one test from perftest-like flags instead of a
// suite file. The flags are the knob tables' (model/flow_fields.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/flow_fields.hpp"
#include "model/suite_spec.hpp"

namespace uniperf::cli {

/// What one knob's flag received: a number (checked by CLI11 as it
/// parses), a text (checked by the suite reader), or a switch.
struct FlagValue {
  std::optional<std::uint64_t> number;
  std::optional<std::string> text;
  bool on = false;
};

struct OneOffOptions {
  std::vector<std::string> sizes;
  bool all_sizes = false;
  std::optional<std::string> preset;
  /// By row of model::kFlowFields and model::kRunFields; sized once, because
  /// CLI11 keeps pointers into them.
  std::vector<FlagValue> flow = std::vector<FlagValue>(std::size(model::kFlowFields));
  std::vector<FlagValue> run = std::vector<FlagValue>(std::size(model::kRunFields));
};

/// Adds the size flags, one flag per knob that names one, and --preset.
/// `pattern`: the subcommand's (latency, bandwidth, message_rate), whose
/// defaults each flag's help states.
void add_one_off_options(CLI::App* command, OneOffOptions& o, const std::string& pattern);

/// The one-test suite the flags describe; `pattern` is the subcommand's.
model::SuiteSpec one_off_suite(const std::string& pattern, const OneOffOptions& o);

}  // namespace uniperf::cli
