#include "results/jsonl_writer.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "results/bounded_json.hpp"

namespace uniperf::results {

void JsonlWriter::add(const Record& record) {
  if (committed_) throw std::logic_error("JsonlWriter::add after commit: " + target().string());
  // Reasons carry exception texts from plugins and libraries: replace bytes
  // that are not UTF-8 instead of letting dump() throw and lose the record.
  std::string line = to_json(record).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  file_.write(line);
}

void JsonlWriter::commit() {
  if (committed_) return;
  file_.commit();
  committed_ = true;
}

std::vector<Record> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  return read_jsonl(in, path.string());
}

std::vector<Record> read_jsonl(std::istream& in, const std::string& label) {
  std::vector<Record> records;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      records.push_back(record_from_json(parse_bounded_json(line)));
    } catch (const SchemaMismatch& e) {
      throw SchemaMismatch(label + ":" + std::to_string(number) + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error(label + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (in.bad()) throw std::runtime_error("cannot read " + label + ": " + std::strerror(errno));
  return records;
}

}  // namespace uniperf::results
