// JSON Lines results, written atomically: records go to a temporary file in
// the target's directory, and only commit() renames it over the target. A
// run that fails before commit() leaves no file, never a partial one.
#pragma once

#include <cstdio>
#include <filesystem>

#include "report/record.hpp"

namespace uniperf::report {

class JsonlWriter {
 public:
  explicit JsonlWriter(std::filesystem::path target);
  ~JsonlWriter();  ///< removes the temporary file unless committed
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  void add(const Record& record);
  /// Flushes, syncs and renames the temporary file over the target.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
};

}  // namespace uniperf::report
