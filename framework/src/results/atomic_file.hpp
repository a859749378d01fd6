// A file written whole or not at all: the content goes to an unnamed file in
// the target's directory (O_TMPFILE; where the file system lacks it, a named
// "<target>.tmp.<pid>"), which commit() names "<target>.tmp.<pid>" and
// renames over the target (one file system, so the rename is atomic). The
// file is created at once, so an unwritable destination fails before
// anything is measured; a run that fails or is killed before commit()
// leaves no file, never a partial one, and an existing target stays
// untouched until the new one is complete.
// The report files and JsonlWriter are written through it.
//
// Only a regular file is replaced that way. A target that is no regular
// file is written in place, as the shell's `>` would: "-" is standard
// output, a path leading to one of the process's descriptors (/dev/stdout,
// /dev/stderr) is written through it, and an existing device, FIFO or
// socket (/dev/null, a pipe to another tool) is opened and written as the
// content comes; none is ever replaced by a plain file. A symbolic link is followed: the file it
// names is replaced, the link stays.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
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

  /// The file written: the given target, or the file a link names; "-"
  /// for standard output.
  const std::filesystem::path& target() const { return target_; }
  /// Empty for a target written in place.
  const std::filesystem::path& temporary() const { return temporary_; }
  /// Written as the content comes (standard output, a device, a FIFO).
  bool in_place() const { return in_place_; }

 private:
  void open_in_place();
  void open_temporary();

  std::filesystem::path target_;
  std::filesystem::path temporary_;
  std::FILE* file_ = nullptr;
  bool in_place_ = false;
  bool unnamed_ = false;  // O_TMPFILE: no name until commit()
  bool committed_ = false;
};

/// The descriptor of this process a target names: "-" is standard output,
/// and a path whose links lead to /proc/self/fd/N or /dev/fd/N (such as
/// /dev/stdout, /dev/stderr) is N. None for any other path.
std::optional<int> descriptor_named(const std::filesystem::path& target);
/// "-", /dev/stdout and the like.
bool is_standard_output(const std::filesystem::path& target);
/// Whether AtomicFile writes `target` in place: one of this process's
/// descriptors, or an existing file (through any links) that is no regular
/// file (a device, a FIFO).
bool written_in_place(const std::filesystem::path& target);

/// AtomicFile(target).commit(content).
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

}  // namespace uniperf::results
