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

std::string find_shipped(const std::string& given, ShippedKind kind,
                         const std::filesystem::path& data_dir) {
  std::error_code error;
  if (given.empty() || std::filesystem::exists(given, error)) return given;
  const std::filesystem::path path(given);
  if (path.is_absolute()) return given;
  const char* shelf = kind == ShippedKind::suite ? "suites" : "configs";
  // The working directory's shelf first (a source tree: `-c ucx-shm` in it
  // means its configs/ucx-shm.yaml), then the install's.
  std::vector<std::filesystem::path> candidates = {
      std::filesystem::path(shelf) / path, std::filesystem::path(shelf) / (given + ".yaml")};
  if (!data_dir.empty()) {
    for (const auto& c :
         {data_dir / path, data_dir / shelf / path, data_dir / shelf / (given + ".yaml")}) {
      candidates.push_back(c);
    }
  }
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return given;
}

}  // namespace uniperf::cli
