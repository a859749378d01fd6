#include "results/jsonl_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace uniperf::results {
namespace {

/// `error` is passed in, not read from errno here, because cleanup between
/// the failing call and the throw (fclose, remove) may overwrite errno.
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(error));
}

/// Makes a rename durable: the new directory entry is only on disk once the
/// directory itself is synced.
void sync_directory(const std::filesystem::path& file) {
  std::filesystem::path directory = file.parent_path();
  if (directory.empty()) directory = ".";
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", directory, errno);
  const int status = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot sync a directory (EINVAL); the rename stands.
  if (status != 0 && error != EINVAL) fail("cannot sync directory", directory, error);
}

}  // namespace

JsonlWriter::JsonlWriter(std::filesystem::path target) : target_(std::move(target)) {
  temporary_ = target_;
  temporary_ += ".tmp." + std::to_string(::getpid());
  // "e": O_CLOEXEC, so the responder process of a local pair never holds it.
  file_ = std::fopen(temporary_.c_str(), "we");
  if (file_ == nullptr) fail("cannot write results to", temporary_, errno);
}

JsonlWriter::~JsonlWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void JsonlWriter::add(const Record& record) {
  if (committed_) throw std::logic_error("JsonlWriter::add after commit: " + target_.string());
  // Reasons carry exception texts from plugins and libraries: replace bytes
  // that are not UTF-8 instead of letting dump() throw and lose the record.
  std::string line = to_json(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
    fail("cannot write", temporary_, errno);
  }
}

void JsonlWriter::commit() {
  if (committed_) return;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    fail("cannot write", temporary_, errno);
  }
  std::FILE* const file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) {
    const int error = errno;
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
  sync_directory(target_);
}

std::vector<Record> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read", path, errno);
  std::vector<Record> records;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      records.push_back(record_from_json(nlohmann::json::parse(line)));
    } catch (const SchemaMismatch& e) {
      throw SchemaMismatch(path.string() + ":" + std::to_string(number) + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error(path.string() + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (in.bad()) fail("cannot read", path, errno);
  return records;
}

}  // namespace uniperf::results
