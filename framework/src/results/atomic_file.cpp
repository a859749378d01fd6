#include "results/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace uniperf::results {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(error));
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  // rename() cannot replace a directory: say so now, not after a whole run.
  std::error_code ignored;
  if (std::filesystem::is_directory(target_, ignored)) fail("cannot write to", target_, EISDIR);
  temporary_ = target_;
  temporary_ += ".tmp." + std::to_string(::getpid());
  // "e": O_CLOEXEC, so the responder process of a local pair never holds it.
  file_ = std::fopen(temporary_.c_str(), "we");
  if (file_ == nullptr) fail("cannot write", temporary_, errno);
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void AtomicFile::write(std::string_view content) {
  if (committed_ || file_ == nullptr) {
    throw std::logic_error("AtomicFile::write after commit: " + target_.string());
  }
  if (std::fwrite(content.data(), 1, content.size(), file_) != content.size()) {
    fail("cannot write", temporary_, errno);
  }
}

void AtomicFile::commit(std::string_view content) {
  if (committed_ || file_ == nullptr) {
    throw std::logic_error("AtomicFile::commit called twice: " + target_.string());
  }
  std::FILE* const file = file_;
  file_ = nullptr;
  const bool written =
      (content.empty() || std::fwrite(content.data(), 1, content.size(), file) == content.size()) &&
      std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
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
