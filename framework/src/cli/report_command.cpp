#include "cli/report_command.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/exit_codes.hpp"
#include "report/concurrent_pairs.hpp"
#include "report/csv_reporter.hpp"
#include "report/html_report.hpp"
#include "report/junit_reporter.hpp"
#include "report/stage_costs_view.hpp"
#include "report/table.hpp"
#include "results/bounded_json.hpp"
#include "results/jsonl_writer.hpp"
#include "results/samples_file.hpp"
#include "results/trace_file.hpp"
#include "suite/diagnostics.hpp"

namespace uniperf::cli {
namespace {

using Records = std::vector<results::Record>;

}  // namespace

/// What a view may need beside the records.
struct ViewContext {
  std::string title;
  report::SuspectRule suspects;
  const report::CompletionSampler* completions = nullptr;
  const report::LatencySampler* latency_samples = nullptr;
  const nlohmann::json* stage_costs = nullptr;  ///< a file of `uniperf stages`
};

/// A view a run or `uniperf report` can write to a file: a new view is one
/// row of kViews (and its field in ReportFiles).
struct ReportView {
  const char* flag;
  std::string ReportFiles::*path;
  const char* help;
  const char* written;  ///< what the "written to" line calls it
  void (*write)(std::ostream& out, const Records& records, const ViewContext& context);
};

namespace {

const ReportView kViews[] = {
    {"--csv", &ReportFiles::csv, "Write the results as CSV to FILE (atomically)", "CSV",
     [](std::ostream& out, const Records& records, const ViewContext&) {
       report::write_csv(out, records);
     }},
    {"--junit", &ReportFiles::junit,
     "Write the results as JUnit XML to FILE, a testcase per record", "JUnit XML",
     [](std::ostream& out, const Records& records, const ViewContext& context) {
       report::write_junit(out, records, context.title);
     }},
    {"--html", &ReportFiles::html, "Write a self-contained HTML report with plots to FILE",
     "HTML report",
     [](std::ostream& out, const Records& records, const ViewContext& context) {
       report::write_html(
           out, records, context.title, context.suspects,
           context.completions != nullptr ? context.completions->to_json() : nlohmann::json(),
           context.latency_samples != nullptr ? context.latency_samples->to_json()
                                              : nlohmann::json(),
           context.stage_costs != nullptr ? *context.stage_costs : nlohmann::json());
     }},
    {"--matrix", &ReportFiles::matrix,
     "Write the node-pair matrices of `pairs: all` tests (a launched job) as JSON to FILE, with "
     "the suspect pairs and ranks",
     "node-pair matrices",
     [](std::ostream& out, const Records& records, const ViewContext& context) {
       report::write_matrix_json(out, records, context.suspects);
     }},
    {"--matrix-csv", &ReportFiles::matrix_csv,
     "Write the node-pair matrices as CSV to FILE, a row per pair and direction", "matrix CSV",
     [](std::ostream& out, const Records& records, const ViewContext& context) {
       report::write_matrix_csv(out, records, context.suspects);
     }},
};

}  // namespace

void add_report_file_options(CLI::App* command, ReportFiles& files) {
  for (const ReportView& view : kViews) command->add_option(view.flag, files.*view.path, view.help);
  command
      ->add_option("--suspect-latency", files.suspects.latency_factor,
                   "Node-pair matrices: a pair whose latency is above X times the lowest pair's "
                   "is a suspect (default 2.1)")
      ->check(CLI::Range(1.0, 1000.0));
  command
      ->add_option("--suspect-bandwidth", files.suspects.bandwidth_fraction,
                   "Node-pair matrices: a pair whose bandwidth is below X times the highest "
                   "pair's is a suspect (default 0.93)")
      ->check(CLI::Range(0.0, 1.0));
}

PendingReports::PendingReports(const ReportFiles& files) : suspects_(files.suspects) {
  for (const ReportView& view : kViews) {
    if (!(files.*view.path).empty()) {
      files_.push_back({&view, std::make_unique<results::AtomicFile>(files.*view.path)});
    }
  }
}

PendingReports::~PendingReports() = default;

void PendingReports::commit(const Records& records, const std::string& title,
                            const report::CompletionSampler* completions,
                            const report::LatencySampler* latency_samples,
                            const nlohmann::json* stage_costs) {
  for (const auto& [view, file] : files_) {
    std::ostringstream text;
    view->write(text, records,
                {.title = title,
                 .suspects = suspects_,
                 .completions = completions,
                 .latency_samples = latency_samples,
                 .stage_costs = stage_costs});
    file->commit(text.str());
    std::cerr << "uniperf: " << view->written << " written to " << file->target().string() << "\n";
  }
}

std::string default_title(const std::vector<results::Record>& records) {
  if (records.empty()) return "uniperf";
  for (const auto& r : records) {
    if (r.suite != records.front().suite) return "uniperf";
  }
  return records.front().suite.empty() ? "uniperf" : records.front().suite;
}

void add_report_command(CLI::App& app, ReportCommand& options) {
  options.command = app.add_subcommand(
      "report",
      "Side-by-side table, CSV, JUnit XML and HTML from JSON Lines results (several files "
      "compare: each config against the first file's same config, else the first config)");
  options.command->add_option("results", options.inputs, "JSON Lines result files")
      ->required()
      ->check(CLI::ExistingFile);
  add_report_file_options(options.command, options.files);
  options.command->add_option("--title", options.title, "Report title (default: the suite's name)");
  options.command
      ->add_option("--stages", options.stages,
                   "A file of `uniperf stages -o` (docs/pipeline.md): its copy and registration "
                   "costs as tables in the HTML report, beside the fragment sweeps")
      ->check(CLI::ExistingFile);
  options.command->add_flag("--quiet", options.quiet, "Do not print the table");
  options.command
      ->add_option("--units", options.units,
                   "Bandwidth in the table: MB (10^6 B/s) or MiB (2^20 B/s, as perftest and "
                   "ucx_perftest count)")
      ->check(CLI::IsMember({"MB", "MiB"}))
      ->default_val("MB");
}

std::size_t count_standard_outputs(const ReportFiles& files, const std::string& results) {
  std::size_t count = 0;
  for (const std::string* path :
       {&results, &files.csv, &files.junit, &files.html, &files.matrix, &files.matrix_csv}) {
    count += results::is_standard_output(*path) ? 1 : 0;
  }
  return count;
}

std::ostream& table_stream(const ReportFiles& files, const std::string& results) {
  const std::size_t on_stdout = count_standard_outputs(files, results);
  if (on_stdout > 1) {
    throw std::invalid_argument(
        "only one of -o, --csv, --junit, --html, --matrix and --matrix-csv can be '-' (standard "
        "output)");
  }
  return on_stdout == 1 ? std::cerr : std::cout;
}

namespace {

/// Relabels, per input, each config that several inputs hold; returns what
/// each input's configs were renamed to (its trace file's rows follow them).
std::vector<std::map<std::string, std::string>> label_repeated_configs(
    std::vector<std::vector<results::Record>>& files, const std::vector<std::string>& inputs) {
  std::map<std::string, std::set<std::size_t>> files_of_config;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (const auto& r : files[i]) files_of_config[r.config].insert(i);
  }
  std::vector<std::string> labels;
  for (const auto& input : inputs) labels.push_back(std::filesystem::path(input).stem().string());
  // Two inputs named alike (a/results.jsonl, b/results.jsonl): the paths.
  if (std::set<std::string>(labels.begin(), labels.end()).size() != labels.size()) labels = inputs;
  std::vector<std::map<std::string, std::string>> renamed(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (auto& r : files[i]) {
      if (files_of_config[r.config].size() <= 1) continue;
      const std::string label = r.config + " [" + labels[i] + "]";
      renamed[i][r.config] = label;
      r.config = label;
    }
  }
  return renamed;
}

}  // namespace

int run_report_command(const ReportCommand& options) {
  std::vector<std::vector<results::Record>> per_input;
  try {
    for (const auto& input : options.inputs) per_input.push_back(results::read_jsonl(input));
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  }
  nlohmann::json stage_costs;
  if (!options.stages.empty()) {
    std::string problem;
    try {
      stage_costs = results::parse_bounded_json(suite::read_whole_file(options.stages));
      problem = report::stage_costs_problem(stage_costs);
    } catch (const suite::SpecError& e) {
      problem = e.what();  // cannot read it
    } catch (const nlohmann::json::exception& e) {
      // A syntax error, or a number out of range (1e999): found by fuzzing.
      problem = std::string("not JSON: ") + e.what();
    } catch (const results::JsonTooDeep& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      std::cerr << "uniperf: " << options.stages << ": --stages: " << problem << "\n";
      return kExitBadInput;
    }
  }
  // The same config in several files (a baseline and a new run) are
  // different columns, named by their file; else the last would hide the rest.
  const auto renamed = label_repeated_configs(per_input, options.inputs);
  std::vector<results::Record> records;
  for (auto& file : per_input) {
    records.insert(records.end(), std::make_move_iterator(file.begin()),
                   std::make_move_iterator(file.end()));
  }
  // Each input's trace file (beside it, if the run wrote one) gives the
  // HTML report its completion timelines.
  report::CompletionSampler completions;
  // And its samples file, its latency CDFs and latency over time.
  report::LatencySampler latency_samples;
  if (!options.files.html.empty()) {
    for (std::size_t i = 0; i < options.inputs.size(); ++i) {
      const auto trace = results::trace_path_for(options.inputs[i]);
      if (std::filesystem::exists(trace)) {
        if (const std::string stopped = completions.read_file(trace, renamed[i]); !stopped.empty())
          std::cerr << "uniperf: warning: " << stopped << " (the rows before it are drawn)\n";
      }
      const auto samples = results::samples_path_for(options.inputs[i]);
      if (std::filesystem::exists(samples)) {
        if (const std::string stopped = latency_samples.read_file(samples, renamed[i]);
            !stopped.empty())
          std::cerr << "uniperf: warning: " << stopped << " (the series before it are drawn)\n";
      }
    }
  }
  std::ostream& table_out = table_stream(options.files);
  PendingReports files(options.files);
  if (!options.quiet) {
    report::ComparisonTable table(report::parse_bandwidth_unit(options.units));
    for (const auto& r : records) table.add(r);
    table.print(table_out);
    // A launched job's records: its node-pair matrices and its pairs run
    // at once, as rank 0 printed them after the run.
    report::print_matrices(table_out, report::build_matrices(records, options.files.suspects),
                           options.files.suspects);
    report::print_concurrent_pairs(table_out, records);
  }
  files.commit(records, options.title.empty() ? default_title(records) : options.title,
               &completions, &latency_samples, stage_costs.is_null() ? nullptr : &stage_costs);
  return kExitOk;
}

}  // namespace uniperf::cli
