// The results reader (`uniperf compare`, `uniperf report`) on arbitrary JSON
// Lines: a file it cannot read is a std::runtime_error naming file and line.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "results/jsonl_writer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto records = uniperf::results::read_jsonl(in, "fuzz.jsonl");
    // What was read is written back as a record can be.
    for (const auto& record : records) (void)uniperf::results::to_json(record).dump();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
