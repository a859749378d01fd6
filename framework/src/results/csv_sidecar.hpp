// A CSV file that sits beside a run's results (the per-request trace, the
// kept latency samples): written through AtomicFile as records arrive, so a
// run holds none of its rows in memory beyond the record being written and
// a run that dies leaves no partial file; rows go out a megabyte at a time,
// so millions of them never become one string of hundreds of megabytes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "results/atomic_file.hpp"

namespace uniperf::results {

/// Where a run's side file goes when its results go to `results_path`:
/// beside it, its ".jsonl" (if any) replaced by `suffix` (".trace.csv");
/// the suffix without its dot ("trace.csv") in the working directory when
/// the results go to no file, standard output or a device.
std::filesystem::path sidecar_path_for(const std::string& results_path, std::string_view suffix);

class CsvSidecar {
 public:
  /// Creates the temporary file at once and writes `header` (its comment
  /// lines and column names). Throws std::runtime_error naming the path.
  CsvSidecar(std::filesystem::path target, std::string_view header);

  /// Where the caller formats rows; end_row() after each.
  std::string& rows() { return pending_; }
  /// Writes what rows() holds once it reaches a megabyte.
  void end_row() {
    if (pending_.size() >= kChunk) flush();
  }
  /// Writes what rows() holds.
  void flush();
  /// Writes the rest and names the file. Calling it again does nothing.
  void commit();

  const std::filesystem::path& target() const { return file_.target(); }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 20;
  AtomicFile file_;
  std::string pending_;
  bool committed_ = false;
};

}  // namespace uniperf::results
