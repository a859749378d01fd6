// JSON Lines results, written atomically through AtomicFile: the lines go to
// a temporary file beside the target as records arrive, and only commit()
// renames it over the target.
#pragma once

#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "results/atomic_file.hpp"
#include "results/record.hpp"

namespace uniperf::results {

class JsonlWriter {
 public:
  /// Creates the temporary file at once, so an unwritable destination fails
  /// before anything is measured. Throws std::runtime_error naming the path.
  explicit JsonlWriter(std::filesystem::path target) : file_(std::move(target)) {}

  /// Appends one line. Throws std::runtime_error on a write error and
  /// std::logic_error after commit().
  void add(const Record& record);
  /// Flushes and fsyncs the temporary file, renames it over the target and
  /// fsyncs the directory, so the result survives a crash right after.
  /// Calling it again does nothing.
  void commit();

  const std::filesystem::path& target() const { return file_.target(); }
  const std::filesystem::path& temporary() const { return file_.temporary(); }

 private:
  AtomicFile file_;
  bool committed_ = false;
};

/// Reads a JSON Lines result file back (blank lines are ignored). Throws
/// std::runtime_error naming the file and line for unreadable files, invalid
/// JSON and invalid records.
std::vector<Record> read_jsonl(const std::filesystem::path& path);
/// The same from a stream; `label` names it in errors (the fuzz target's way in).
std::vector<Record> read_jsonl(std::istream& in, const std::string& label);

}  // namespace uniperf::results
