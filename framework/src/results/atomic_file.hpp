// A file written whole or not at all: the content goes to an unnamed file in
// the target's directory (O_TMPFILE; where the file system lacks it, a named
// "<target>.tmp.<pid>"), which commit() names "<target>.tmp.<pid>" and
// renames over the target (one file system, so the rename is atomic). The
// file is created at once, so an unwritable destination fails before
// anything is measured; a run that fails or is killed before commit()
// leaves no file, never a partial one, and an existing target stays
// untouched until the new one is complete.
// The report files and JsonlWriter are written through it.
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

  /// Appends to the temporary file. Throws std::runtime_error on a write
  /// error and std::logic_error after commit().
  void write(std::string_view content);
  /// Writes `content`, fsyncs, renames over the target and syncs the
  /// directory. Once only: a second call throws std::logic_error. Throws
  /// std::runtime_error on I/O errors, leaving the old target (if any)
  /// untouched.
  void commit(std::string_view content = {});

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool unnamed_ = false;  // O_TMPFILE: no name until commit()
  bool committed_ = false;
};

/// AtomicFile(target).commit(content).
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace uniperf::results
