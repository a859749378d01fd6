// `uniperf stages -c CONFIG`: the pipeline's stage costs on this host
// (docs/pipeline.md, "Stage costs"), each measured on its own, no peer
// needed: memory copy bandwidth per size, and the config's plugin's
// register_memory() and release per size, over normal and, where the
// kernel has them reserved, huge pages. Prints a table per config and
// writes the samples' statistics with the run's provenance as JSON.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace uniperf::cli {

struct StagesCommand {
  CLI::App* command = nullptr;
  std::vector<std::string> configs;
  std::string sizes = "256..4M x4";
  std::string pages = "normal";  ///< normal, huge or both
  std::size_t trials = 10;       ///< copy trials per size
  std::size_t repeats = 20;      ///< registrations per size
  double trial_ms = 20;          ///< the length of one copy trial
  std::string output;            ///< -o: the JSON file; "" = none
};

void add_stages_command(CLI::App& app, StagesCommand& stages);
/// The exit code (cli/exit_codes.hpp).
int run_stages_command(const StagesCommand& stages);

}  // namespace uniperf::cli
