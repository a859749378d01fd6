#include "results/csv_sidecar.hpp"

namespace uniperf::results {

std::filesystem::path sidecar_path_for(const std::string& results_path, std::string_view suffix) {
  // Results going to standard output or a device: no file to sit beside.
  if (results_path.empty() || written_in_place(results_path)) return std::string(suffix.substr(1));
  std::filesystem::path path = results_path;
  if (path.extension() == ".jsonl") path.replace_extension();
  path += std::string(suffix);
  return path;
}

CsvSidecar::CsvSidecar(std::filesystem::path target, std::string_view header)
    : file_(std::move(target)) {
  file_.write(header);
}

void CsvSidecar::flush() {
  file_.write(pending_);
  pending_.clear();
}

void CsvSidecar::commit() {
  if (committed_) return;
  committed_ = true;
  flush();
  file_.commit();
}

}  // namespace uniperf::results
