// A report file written whole or not at all: the content goes to a temporary
// file beside the target ("<target>.tmp.<pid>") and commit() renames it over
// the target, like JsonlWriter. The temporary file is created at once, so an
// unwritable destination fails before anything is measured.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string_view>

namespace uniperf::results {

class AtomicFile {
 public:
  /// Throws std::runtime_error naming the path when it cannot be created.
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();  ///< removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Writes `content`, fsyncs, renames over the target. Once only: a second
  /// call throws std::logic_error. Throws std::runtime_error on I/O errors,
  /// leaving the old target (if any) untouched.
  void commit(std::string_view content);

  const std::filesystem::path& target() const { return target_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// AtomicFile(target).commit(content).
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace uniperf::results
