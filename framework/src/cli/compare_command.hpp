// `uniperf compare BASE.jsonl NEW.jsonl`: the CI gate. Exit codes (also in
// docs/results.md): 0 no regression, 1 a regression, 2 bad input (unreadable
// file, invalid record, bad tolerance), 3 incomparable (a schema major this
// build cannot read, or no pair of records both measured).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace uniperf::cli {

struct CompareCommand {
  CLI::App* command = nullptr;
  std::string base, now;
  std::vector<std::string> tolerances;  ///< METRIC=PERCENT
  std::string suite;                    ///< its `tolerances:` apply
  bool quiet = false;                   ///< only regressions and the summary
};

void add_compare_command(CLI::App& app, CompareCommand& options);
int run_compare_command(const CompareCommand& options);

}  // namespace uniperf::cli
