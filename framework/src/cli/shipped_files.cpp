#include "cli/shipped_files.hpp"

#include <system_error>
#include <vector>

namespace uniperf::cli {

std::filesystem::path shipped_data_dir() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  return exe.parent_path().parent_path() / "share" / "uniperf";
}

std::vector<std::filesystem::path> shelves(ShippedKind kind,
                                           const std::filesystem::path& data_dir) {
  const char* shelf = kind == ShippedKind::suite ? "suites" : "configs";
  // The working directory's shelf first (a source tree: `-c ucx-shm` in it
  // means its configs/ucx-shm.yaml), then the install's.
  std::vector<std::filesystem::path> found = {shelf};
  if (!data_dir.empty()) found.push_back(data_dir / shelf);
  return found;
}

std::string find_shipped(const std::string& given, ShippedKind kind,
                         const std::filesystem::path& data_dir) {
  std::error_code error;
  if (given.empty() || std::filesystem::exists(given, error)) return given;
  const std::filesystem::path path(given);
  if (path.is_absolute()) return given;
  std::vector<std::filesystem::path> candidates;
  // The install's DATA/suites/quick.yaml, named as suites/quick.yaml.
  if (!data_dir.empty()) candidates.push_back(data_dir / path);
  for (const auto& shelf : shelves(kind, data_dir)) {
    candidates.push_back(shelf / path);
    candidates.push_back(shelf / (given + ".yaml"));
  }
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return given;
}

}  // namespace uniperf::cli
