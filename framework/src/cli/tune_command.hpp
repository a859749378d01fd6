// `uniperf tune SUITE -c CONFIG`: self-tuning (docs/pipeline.md). For every
// test of the suite with `fragment: auto` and/or `source: auto` and each of
// its sizes, searches the fragment, the source (zero_copy or staged) or the
// pair of them that gives the most bandwidth on this host and config
// (results/setting_search.hpp: every candidate measured, then the contenders
// again until their 95% intervals separate or the budget ends), by runs of
// this same executable over generated suites in a local pair, or against a
// `uniperf serve` (--peer) to tune the path between two hosts. Prints the
// choice per size with its interval, the runner-up and the measured curve,
// and writes them as a tuning file.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace uniperf::cli {

struct TuneCommand {
  CLI::App* command = nullptr;
  std::string suite;
  std::string config;
  std::string output;           ///< -o: the tuning file (YAML); "" = none
  std::string peer;             ///< --peer HOST[:PORT]: a `uniperf serve`; "" = a local pair
  std::optional<int> cpu;       ///< --cpu N: each round's initiating process, pinned
  std::optional<int> peer_cpu;  ///< --peer-cpu N: each round's local responder, pinned
  std::size_t first_round = 2;  ///< measurements of every candidate before any repeat
  /// Measurements per (test, size), at most; 0: kMeasurementsPerCandidate
  /// per candidate, and at least kLeastBudget, so a search over both
  /// sources has the room for repeats a search over fragments alone has.
  std::size_t budget = 0;
  static constexpr std::size_t kMeasurementsPerCandidate = 4;
  static constexpr std::size_t kLeastBudget = 40;
};

void add_tune_command(CLI::App& app, TuneCommand& tune);
/// The exit code (cli/exit_codes.hpp).
int run_tune_command(const TuneCommand& tune);

}  // namespace uniperf::cli
