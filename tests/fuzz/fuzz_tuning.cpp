// The tuning-file reader (`uniperf run --tuning FILE`) on arbitrary text, and
// its application to the shipped pipeline suite: every failure is a
// SpecError naming the file (anything else escaping, a crash, a leak or a
// hang is a finding).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "suite/suite.hpp"
#include "suite/tuning.hpp"

namespace {

/// The suite a tuning file is applied to: suites/pipeline.yaml (its
/// `fragment: auto` test), read once; UNIPERF_SOURCE_DIR is set by the build.
const std::string& pipeline_suite() {
  static const std::string text = [] {
    std::ifstream in(std::string(UNIPERF_SOURCE_DIR) + "/suites/pipeline.yaml");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto choices = uniperf::suite::parse_tuning(text, "fuzz.tuning.yaml");
    // Applied over a run of two configs, the tuned one and one untuned.
    (void)uniperf::suite::apply_tuning(pipeline_suite(), "suites/pipeline.yaml", {{choices, "tcp"}},
                                       {"tcp", "ucx-shm"});
  } catch (const uniperf::suite::SpecError&) {
  }
  return 0;
}
