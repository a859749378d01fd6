// The suite reader on arbitrary text: every failure is a SpecError naming the
// file (anything else escaping, a crash, a leak or a hang is a finding).
#include <cstddef>
#include <cstdint>
#include <string>

#include "suite/suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)uniperf::suite::parse_suite(text, "fuzz.yaml");
  } catch (const uniperf::suite::SpecError&) {
  }
  return 0;
}
