// Where a run's finished records go (the results file, the report files)
// and how they get there when the run cannot end normally: a second Ctrl-C,
// a transport call that never returns after its loop was aborted, or a
// crash. The
// records that finished land in the files either way, and no temporary file
// stays behind.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/report_command.hpp"
#include "results/jsonl_writer.hpp"
#include "results/record.hpp"
#include "results/samples_file.hpp"
#include "results/trace_file.hpp"

namespace uniperf::cli {

class RunOutput {
 public:
  /// Opens the files at once (a bad path fails before anything runs); an
  /// empty `results_path` writes no results file, an empty `trace_path` no
  /// trace file, an empty `samples_path` no samples file.
  RunOutput(const std::string& results_path, const ReportFiles& reports, std::string title,
            const std::filesystem::path& trace_path = {},
            const std::filesystem::path& samples_path = {});

  /// One finished record (the session's thread). Its trace rows and kept
  /// samples go to their files at once; the copy kept has neither.
  void add(const results::Record& record);
  /// Every file written from the records added. Once; later calls do
  /// nothing.
  void commit();
  /// From any thread: writes what finished, says why on stderr, and ends the
  /// process with `exit_code` without unwinding (the session's thread may
  /// be inside a transport call that never returns).
  [[noreturn]] void finish_now(const std::string& why, int exit_code);
  /// finish_now() without the end: says why and writes what finished, from
  /// any thread, for a crash whose signal then ends the process.
  void keep_finished(const std::string& why);
  /// finish_now() for a side that writes nothing (a responder): says why
  /// and ends the process the same way.
  [[noreturn]] static void end_now(const std::string& why, int exit_code);

  const std::vector<results::Record>& records() const { return records_; }

 private:
  void commit_locked();

  std::mutex mutex_;
  std::optional<results::JsonlWriter> jsonl_;
  std::optional<results::TraceFile> trace_;
  std::optional<results::SamplesFile> samples_;
  std::string results_path_;
  PendingReports reports_;
  std::string title_;
  std::vector<results::Record> records_;
  /// The traced requests, sampled for the HTML report (bounded), when one
  /// is asked for.
  report::CompletionSampler completions_;
  /// The kept latency samples, summarised for the HTML report.
  report::LatencySampler latency_samples_;
  const bool sample_completions_;
  bool committed_ = false;
};

/// How long the process may take to tear itself down once a run is over
/// (the endpoints' and contexts' last words, each transport library's
/// cleanup as its plugin unloads) before bound_teardown() ends it.
inline constexpr std::chrono::seconds kTeardownGrace{10};

/// The run is over and its exit status decided: from here on the process
/// only tears down. A transport library can spin there on a peer that is
/// gone (a `uniperf serve --once` over ucx-verbs once stayed up, a core
/// busy, 15 minutes after it lost its client), so if the process is still
/// there after `grace`, it says so and ends with `exit_code` without the
/// rest of its teardown. Returns `exit_code`: `return bound_teardown(code);`
/// in a function that still holds the plugins covers their unloading too.
int bound_teardown(int exit_code, std::chrono::seconds grace = kTeardownGrace);

}  // namespace uniperf::cli
