#include "results/samples_file.hpp"

#include <fmt/format.h>

#include <iterator>

#include "results/csv_field.hpp"

namespace uniperf::results {
namespace {

constexpr std::size_t kWriteChunk = std::size_t{1} << 20;

}  // namespace

std::filesystem::path samples_path_for(const std::string& results_path) {
  // Results going to standard output or a device: no file to sit beside.
  if (results_path.empty() || written_in_place(results_path)) return "samples.csv";
  std::filesystem::path path = results_path;
  if (path.extension() == ".jsonl") path.replace_extension();
  path += ".samples.csv";
  return path;
}

SamplesFile::SamplesFile(std::filesystem::path target, const std::string& suite)
    : file_(std::move(target)) {
  file_.write(fmt::format(
      "# uniperf latency samples, format 1 (docs/results.md, \"Kept samples\"); suite {}\n"
      "# one row per measured iteration, in the order they ran; latency_us as in the record "
      "(one-way = half the round trip where its latency_us.one_way is true)\n{}\n",
      suite, kSamplesColumns));
}

void SamplesFile::add(const Record& record) {
  if (record.kept_samples.empty()) return;
  std::string text;
  for (const Record::KeptSamples& kept : record.kept_samples) {
    const std::string key = fmt::format("{},{},{},{}", csv_field(record.config),
                                        csv_field(record.test), record.size, kept.flow + 1);
    for (std::size_t i = 0; i < kept.us.size(); ++i) {
      fmt::format_to(std::back_inserter(text), "{},{},{}\n", key, i, kept.us[i]);
      // Written a megabyte at a time: millions of samples never become
      // one string of hundreds of megabytes.
      if (text.size() >= kWriteChunk) {
        file_.write(text);
        text.clear();
      }
    }
  }
  file_.write(text);
}

void SamplesFile::commit() {
  if (committed_) return;
  committed_ = true;
  file_.commit();
}

}  // namespace uniperf::results
