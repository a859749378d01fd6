// `uniperf report RESULTS.jsonl...` and the report files `uniperf run` writes
// (--csv, --junit, --html): every view is made from the same records.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/completions.hpp"
#include "report/latency_samples.hpp"
#include "report/pair_matrix.hpp"
#include "results/atomic_file.hpp"
#include "results/record.hpp"

namespace uniperf::cli {

/// Where to write the report files; an empty path is "not asked for".
struct ReportFiles {
  std::string csv;
  std::string junit;
  std::string html;
  std::string matrix;            ///< pairs: all as N x N matrices, JSON
  std::string matrix_csv;        ///< the same, a row per cell
  report::SuspectRule suspects;  ///< --suspect-latency, --suspect-bandwidth
};

/// How many of `files` and `results` (a results file; "" for none) are
/// standard output ("-"). At most one may be; where one is, the table goes
/// to standard error, so a pipe reads that output alone.
std::size_t count_standard_outputs(const ReportFiles& files, const std::string& results = {});
/// The stream for the table: standard error when an output is "-". Throws
/// std::invalid_argument when more than one is.
std::ostream& table_stream(const ReportFiles& files, const std::string& results = {});

/// Adds --csv, --junit, --html, --matrix, --matrix-csv and the suspect
/// rule's factors to `command`.
void add_report_file_options(CLI::App* command, ReportFiles& files);

struct ReportView;  ///< one per view (report_command.cpp)

/// The report files of one run: opened (as temporary files) before the run,
/// so an unwritable path fails before anything is measured, and written
/// whole at the end, atomically.
class PendingReports {
 public:
  explicit PendingReports(const ReportFiles& files);
  ~PendingReports();
  /// Writes every file asked for from `records`; `title` names the report.
  /// `completions`: sampled trace rows for the HTML report's completion
  /// timelines; `latency_samples`: the kept samples' CDFs and latency over
  /// time; `stage_costs`: a file of `uniperf stages` (none: null).
  void commit(const std::vector<results::Record>& records, const std::string& title,
              const report::CompletionSampler* completions = nullptr,
              const report::LatencySampler* latency_samples = nullptr,
              const nlohmann::json* stage_costs = nullptr);

 private:
  std::vector<std::pair<const ReportView*, std::unique_ptr<results::AtomicFile>>> files_;
  report::SuspectRule suspects_;
};

struct ReportCommand {
  CLI::App* command = nullptr;
  std::vector<std::string> inputs;
  ReportFiles files;
  std::string title;
  bool quiet = false;
  std::string units = "MB";  ///< --units MB|MiB for the table
  std::string stages;        ///< --stages FILE: `uniperf stages` costs for the HTML report
};

/// Registers `uniperf report` on `app`.
void add_report_command(CLI::App& app, ReportCommand& options);

/// Reads the inputs, prints the side-by-side table (unless quiet), writes
/// the files asked for. Returns 0, or 2 for unreadable input (the message,
/// naming file and line, goes to stderr).
int run_report_command(const ReportCommand& options);

/// The title for a set of records: the suite name when all records share
/// one, else "uniperf".
std::string default_title(const std::vector<results::Record>& records);

}  // namespace uniperf::cli
