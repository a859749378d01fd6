#include "cli/shipped_files.hpp"

#include <system_error>

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
  if (given.empty() || std::filesystem::exists(given, error) || data_dir.empty()) return given;
  const std::filesystem::path path(given);
  if (path.is_absolute()) return given;
  const std::filesystem::path shelf =
      data_dir / (kind == ShippedKind::suite ? "suites" : "configs");
  for (const auto& candidate : {data_dir / path, shelf / path, shelf / (given + ".yaml")}) {
    if (std::filesystem::is_regular_file(candidate, error)) return candidate.string();
  }
  return given;
}

}  // namespace uniperf::cli
