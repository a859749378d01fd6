// The run's latency samples file (docs/results.md, "Kept samples"): CSV, one
// row per iteration of every latency flow that set `keep_samples`, in the
// order the iterations ran, beside the results (results/csv_sidecar.hpp).
// Lines starting with '#' say what the file is; pandas reads it with
// pd.read_csv(path, comment="#").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "results/csv_sidecar.hpp"
#include "results/record.hpp"

namespace uniperf::results {

/// The columns, in order. `iteration` counts from 0 over the record's
/// measured iterations (a record of several trials: one trial after the
/// other). `latency_us` is the record's kind of sample: one-way (half the
/// round trip) where the record's latency_us.one_way says so, else the
/// round trip.
inline constexpr std::string_view kSamplesColumns =
    "config,test,size,flow,iteration,latency_us,pair";

/// Where a run's samples go when its results go to `results_path`: beside
/// it, its ".jsonl" (if any) replaced by ".samples.csv"; "samples.csv" in
/// the working directory when the results go to no file, standard output or
/// a device.
std::filesystem::path samples_path_for(const std::string& results_path);

class SamplesFile {
 public:
  /// Creates the temporary file at once. Throws std::runtime_error naming
  /// the path.
  SamplesFile(std::filesystem::path target, const std::string& suite);

  /// Appends `record`'s kept samples (none: nothing).
  void add(const Record& record);
  /// Names the file. Calling it again does nothing.
  void commit();

  const std::filesystem::path& target() const { return file_.target(); }

 private:
  CsvSidecar file_;
};

}  // namespace uniperf::results
