#include "cli/compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "cli/exit_codes.hpp"
#include "model/metrics.hpp"
#include "results/compare.hpp"
#include "results/jsonl_writer.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

std::string describe(const results::MetricChange& m) {
  std::string text = fmt::format("{} {:.4g} -> {:.4g} ({:+.1f}%, tolerance {:g}%", m.metric, m.base,
                                 m.now, m.change_percent, m.tolerance_percent);
  if (m.intervals_used) text += m.intervals_overlap ? ", 95% CIs overlap" : ", 95% CIs apart";
  return text + ")";
}

}  // namespace

void add_compare_command(CLI::App& app, CompareCommand& options) {
  options.command = app.add_subcommand(
      "compare",
      "Compare two result files; exit 0 pass, 1 regression, 2 bad input, 3 incomparable");
  options.command->add_option("base", options.base, "Baseline results (JSON Lines)")
      ->required()
      ->check(CLI::ExistingFile);
  options.command->add_option("new", options.now, "New results (JSON Lines)")
      ->required()
      ->check(CLI::ExistingFile);
  std::string names, defaults;
  for (const model::MetricInfo& metric : model::kMetrics) {
    names += (names.empty() ? "" : ", ") + std::string(metric.name);
    if (metric.default_tolerance > 0) {
      defaults += fmt::format(" {}={:g}", metric.name, metric.default_tolerance);
    }
  }
  options.command->add_option("--tolerance", options.tolerances,
                              "METRIC=PERCENT (" + names + "); repeatable; default" + defaults);
  options.command->add_option("--suite", options.suite, "Take tolerances: from this suite file")
      ->check(CLI::ExistingFile);
  options.command->add_flag("--quiet", options.quiet, "Print only what changed and the summary");
}

int run_compare_command(const CompareCommand& options) {
  results::Tolerances tolerances = results::default_tolerances();
  std::vector<results::Record> base, now;
  try {
    // Lowest precedence first: defaults, the suite, the command line.
    if (!options.suite.empty()) {
      for (const auto& [metric, percent] : suite::load_suite(options.suite).tolerances)
        tolerances[metric] = percent;
    }
    for (const auto& text : options.tolerances) {
      const auto [metric, percent] = results::parse_tolerance(text);
      tolerances[metric] = percent;
    }
    base = results::read_jsonl(options.base);
    now = results::read_jsonl(options.now);
  } catch (const results::SchemaMismatch& e) {
    std::cerr << "uniperf compare: incomparable: " << e.what() << "\n";
    return kExitIncomparable;
  } catch (const std::exception& e) {
    std::cerr << "uniperf compare: " << e.what() << "\n";
    return kExitBadInput;
  }

  const results::CompareResult result = results::compare(base, now, tolerances);
  for (const auto& row : result.rows) {
    const bool changed =
        row.outcome != results::Outcome::unchanged && row.outcome != results::Outcome::skipped;
    if (options.quiet && !changed) continue;
    std::string detail = row.note;
    for (const auto& m : row.metrics) {
      if (!detail.empty()) detail += "; ";
      detail += describe(m);
    }
    std::cout << fmt::format("{:<10} {} {}{} {}  {}\n", to_string(row.outcome), row.config,
                             row.test, row.pair.empty() ? "" : " ranks " + row.pair, row.size,
                             detail);
  }
  auto count = [&](results::Outcome o) {
    const auto it = result.counts.find(o);
    return it == result.counts.end() ? std::size_t{0} : it->second;
  };
  using results::Outcome;
  std::cout << fmt::format(
      "\n{} regressed, {} improved, {} unchanged, {} missing, {} new, {} skipped\n",
      count(Outcome::regressed), count(Outcome::improved), count(Outcome::unchanged),
      count(Outcome::missing), count(Outcome::added), count(Outcome::skipped));
  // Two identical back-to-back single runs on a busy machine differ by more
  // than the default tolerances often enough to call a dozen sizes changed:
  // only trials (95% confidence intervals) tell noise from a change.
  const auto single_runs = [](const std::vector<results::Record>& records) {
    return std::count_if(records.begin(), records.end(), [](const results::Record& r) {
      return r.status == results::Status::ok && r.trials.size() < 2;
    });
  };
  if (result.compared() > 0 && single_runs(base) + single_runs(now) > 0) {
    std::cerr << fmt::format(
        "uniperf compare: warning: {} of the base's and {} of the new records are single runs "
        "(no --trials): a single run cannot tell noise from a change, so some of the above may "
        "be noise; run both with --trials 5 or more and compare uses their 95% confidence "
        "intervals\n",
        single_runs(base), single_runs(now));
  }
  if (count(Outcome::regressed) > 0) return kExitRegression;
  if (result.compared() == 0) {
    std::cerr << "uniperf compare: incomparable: no (config, test, size) was measured in both "
                 "files\n";
    return kExitIncomparable;
  }
  return kExitOk;
}

}  // namespace uniperf::cli
