#include "report/jsonl_writer.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace uniperf::report {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

}  // namespace

JsonlWriter::JsonlWriter(std::filesystem::path target) : target_(std::move(target)) {
  temporary_ = target_;
  temporary_ += ".tmp." + std::to_string(::getpid());
  file_ = std::fopen(temporary_.c_str(), "w");
  if (file_ == nullptr) fail("cannot write results to", temporary_);
}

JsonlWriter::~JsonlWriter() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(temporary_.c_str());
  }
}

void JsonlWriter::add(const Record& record) {
  const std::string line = to_json(record).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size())
    fail("cannot write", temporary_);
}

void JsonlWriter::commit() {
  if (file_ == nullptr) return;
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) fail("cannot write", temporary_);
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
    std::remove(temporary_.c_str());
    fail("cannot create", target_);
  }
}

}  // namespace uniperf::report
