// The run's per-request trace file (docs/traces.md): CSV, one row per traced
// work request of every record that has some, beside the results
// (results/csv_sidecar.hpp). Lines starting with '#' say what the file is
// and where it came from; pandas reads it with pd.read_csv(path,
// comment="#").
#pragma once

#include <filesystem>
#include <string>

#include "results/csv_sidecar.hpp"
#include "results/record.hpp"

namespace uniperf::results {

/// The columns, in order.
inline constexpr std::string_view kTraceColumns =
    "config,test,size,flow,lane,id,op,bytes,posted_ns,completed_ns,completion,side,returned_ns,"
    "pair";

/// Where a run's trace goes when its results go to `results_path`: beside
/// it, its ".jsonl" (if any) replaced by ".trace.csv"; "trace.csv" in the
/// working directory when the run writes no results file, or writes it to
/// standard output or a device (AtomicFile: written in place).
std::filesystem::path trace_path_for(const std::string& results_path);

/// The pair of ranks whose rows flow `flow` (0-based) of `record` are, as
/// the trace file's `pair` column says it ("0-2", initiator first): the
/// flow's own pair (flows in separate processes), else the record's; ""
/// outside a job of more than two ranks.
std::string trace_pair(const Record& record, std::uint32_t flow);

class TraceFile {
 public:
  /// Creates the temporary file at once. Throws std::runtime_error naming
  /// the path.
  TraceFile(std::filesystem::path target, const std::string& suite);

  /// Appends `record`'s rows (none: nothing) and, with the first, the
  /// record's provenance as a comment line.
  void add(const Record& record);
  /// Names the file. Calling it again does nothing.
  void commit();

  const std::filesystem::path& target() const { return file_.target(); }

 private:
  CsvSidecar file_;
  bool provenance_written_ = false;
};

}  // namespace uniperf::results
