#include "results/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace uniperf::results {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(error));
}

}  // namespace

std::optional<int> descriptor_named(const std::filesystem::path& target) {
  if (target == "-") return STDOUT_FILENO;
  // /dev/stdout -> /proc/self/fd/1 and the like: the links are followed by
  // hand, since the file at their end (a terminal, a pipe, the file the
  // shell opened) is not to be reopened at offset 0 but shared.
  std::filesystem::path path = target;
  std::error_code error;
  for (int hop = 0; hop < 40; ++hop) {
    for (const char* prefix : {"/proc/self/fd/", "/dev/fd/"}) {
      const std::string text = path.string();
      if (text.rfind(prefix, 0) != 0) continue;
      int fd = -1;
      const char* digits = text.c_str() + std::strlen(prefix);
      const auto [end, ec] = std::from_chars(digits, text.c_str() + text.size(), fd);
      if (ec == std::errc() && *end == '\0') return fd;
    }
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, error))) break;
    const std::filesystem::path next = std::filesystem::read_symlink(path, error);
    if (error) break;
    path = next.is_absolute() ? next : path.parent_path() / next;
  }
  return std::nullopt;
}

bool is_standard_output(const std::filesystem::path& target) {
  return descriptor_named(target) == STDOUT_FILENO;
}

bool written_in_place(const std::filesystem::path& target) {
  if (descriptor_named(target)) return true;
  std::error_code error;
  const auto status = std::filesystem::status(target, error);  // through links
  return !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  // rename() cannot replace a directory: say so now, not after a whole run.
  std::error_code ignored;
  if (std::filesystem::is_directory(target_, ignored)) fail("cannot write to", target_, EISDIR);
  if (written_in_place(target_)) {
    open_in_place();
    return;
  }
  // A link stays a link: the file it names is the one replaced (a dangling
  // link names the file to create).
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(target_, ignored))) {
    target_ = std::filesystem::weakly_canonical(target_, ignored);
    if (ignored) fail("cannot follow the link", target_, ignored.value());
  }
  open_temporary();
}

void AtomicFile::open_in_place() {
  in_place_ = true;
  // One of this process's descriptors (standard output, /dev/stderr) is
  // written through a copy of its own, sharing its offset, so closing the
  // file at commit() leaves the process's descriptor open.
  const std::optional<int> named = descriptor_named(target_);
  const int fd =
      named ? ::fcntl(*named, F_DUPFD_CLOEXEC, 0) : ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot write to", target_, errno);
  file_ = ::fdopen(fd, "w");
  if (file_ == nullptr) {
    const int error = errno;
    ::close(fd);
    fail("cannot write to", target_, error);
  }
}

void AtomicFile::open_temporary() {
  temporary_ = target_;
  temporary_ += ".tmp." + std::to_string(::getpid());
  // An unnamed file in the target's directory (O_TMPFILE): a process killed
  // before commit() (SIGKILL, a crash) leaves nothing behind; it gets the
  // temporary name only for the moment of commit(). File systems without
  // O_TMPFILE get the named temporary file at once.
  std::filesystem::path directory = target_.parent_path();
  if (directory.empty()) directory = ".";
  // O_CLOEXEC, so the responder process of a local pair never holds it.
  const int fd = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0) {
    file_ = ::fdopen(fd, "w");
    if (file_ == nullptr) ::close(fd);
    unnamed_ = file_ != nullptr;
  } else if (errno == ENOENT || errno == EACCES || errno == EROFS || errno == ENOTDIR) {
    fail("cannot write", temporary_, errno);  // the directory itself is the problem
  }
  if (file_ == nullptr) {
    file_ = std::fopen(temporary_.c_str(), "we");
    if (file_ == nullptr) fail("cannot write", temporary_, errno);
  }
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    if (!unnamed_ && !in_place_) std::remove(temporary_.c_str());
  }
}

void AtomicFile::write(std::string_view content) {
  if (committed_ || file_ == nullptr) {
    throw std::logic_error("AtomicFile::write after commit: " + target_.string());
  }
  if (std::fwrite(content.data(), 1, content.size(), file_) != content.size()) {
    fail("cannot write", in_place_ ? target_ : temporary_, errno);
  }
  // In place, a reader (a pipe to jq, a terminal) sees each piece as it comes.
  if (in_place_ && std::fflush(file_) != 0) fail("cannot write to", target_, errno);
}

void AtomicFile::commit(std::string_view content) {
  if (committed_ || file_ == nullptr) {
    throw std::logic_error("AtomicFile::commit called twice: " + target_.string());
  }
  std::FILE* const file = file_;
  file_ = nullptr;
  if (in_place_) {
    // Nothing to rename or sync: a device or pipe takes the bytes as written.
    const bool written =
        content.empty() || std::fwrite(content.data(), 1, content.size(), file) == content.size();
    const int write_error = errno;
    if (std::fclose(file) != 0 || !written)
      fail("cannot write to", target_, written ? errno : write_error);
    committed_ = true;
    return;
  }
  bool written =
      (content.empty() || std::fwrite(content.data(), 1, content.size(), file) == content.size()) &&
      std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
  if (written && unnamed_) {
    // The unnamed file gets its temporary name, then the rename below.
    const std::string self = "/proc/self/fd/" + std::to_string(::fileno(file));
    std::remove(temporary_.c_str());  // a stale one from an earlier process of this pid
    written =
        ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temporary_.c_str(), AT_SYMLINK_FOLLOW) == 0;
  }
  const int write_error = errno;
  if (std::fclose(file) != 0 || !written) {
    const int error = written ? errno : write_error;
    std::remove(temporary_.c_str());
    fail("cannot write", temporary_, error);
  }
  // rename() replaces an existing target atomically: a reader sees the old
  // file or the new one, never a mix.
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary_.c_str());
    fail("cannot create", target_, error);
  }
  committed_ = true;
  std::filesystem::path directory = target_.parent_path();
  if (directory.empty()) directory = ".";
  // The new directory entry is only durable once the directory is synced;
  // some file systems cannot sync one (EINVAL), the rename stands anyway.
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  AtomicFile(target).commit(content);
}

}  // namespace uniperf::results
