#include "results/samples_file.hpp"

#include <fmt/format.h>

#include <iterator>

#include "results/csv_field.hpp"
#include "results/trace_file.hpp"

namespace uniperf::results {

std::filesystem::path samples_path_for(const std::string& results_path) {
  return sidecar_path_for(results_path, ".samples.csv");
}

SamplesFile::SamplesFile(std::filesystem::path target, const std::string& suite)
    : file_(std::move(target),
            fmt::format("# uniperf latency samples, format 2 (docs/results.md, \"Kept samples\"); "
                        "suite {}\n"
                        "# one row per measured iteration, in the order they ran; latency_us as "
                        "in the record (one-way = half the round trip where its "
                        "latency_us.one_way is true)\n{}\n",
                        suite, kSamplesColumns)) {}

void SamplesFile::add(const Record& record) {
  for (const Record::KeptSamples& kept : record.kept_samples) {
    const std::string key = fmt::format("{},{},{},{}", csv_field(record.config),
                                        csv_field(record.test), record.size, kept.flow + 1);
    // A launched job's pair: the pairs of a round measure one test and size.
    const std::string pair = trace_pair(record, kept.flow);
    for (std::size_t i = 0; i < kept.us.size(); ++i) {
      fmt::format_to(std::back_inserter(file_.rows()), "{},{},{},{}\n", key, i, kept.us[i], pair);
      file_.end_row();
    }
  }
  file_.flush();
}

void SamplesFile::commit() {
  file_.commit();
}

}  // namespace uniperf::results
