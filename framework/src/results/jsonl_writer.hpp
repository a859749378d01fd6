// JSON Lines results, written atomically: records go to a temporary file in
// the target's directory ("<target>.tmp.<pid>"), and only commit() renames it
// over the target. A run that fails before commit() leaves no file, never a
// partial one, and an existing target stays untouched until the new one is
// complete.
#pragma once

#include <cstdio>
#include <filesystem>
#include <vector>

#include "results/record.hpp"

namespace uniperf::results {

class JsonlWriter {
 public:
  /// Creates the temporary file at once, so an unwritable destination fails
  /// before anything is measured. Throws std::runtime_error naming the path.
  explicit JsonlWriter(std::filesystem::path target);
  ~JsonlWriter();  ///< removes the temporary file unless committed
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  /// Appends one line. Throws std::runtime_error on a write error and
  /// std::logic_error after commit().
  void add(const Record& record);
  /// Flushes and fsyncs the temporary file, renames it over the target and
  /// fsyncs the directory, so the result survives a crash right after.
  /// Calling it again does nothing.
  void commit();

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Reads a JSON Lines result file back (blank lines are ignored). Throws
/// std::runtime_error naming the file and line for unreadable files, invalid
/// JSON and invalid records.
std::vector<Record> read_jsonl(const std::filesystem::path& path);

}  // namespace uniperf::results
