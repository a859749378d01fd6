// The config reader on arbitrary text, then its options checked against one
// declared option of each type: every failure is a SpecError naming the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "suite/config.hpp"

namespace {

const std::vector<uniperf::OptionSpec>& specs() {
  using uniperf::OptionType;
  static const std::vector<uniperf::OptionSpec> all = {
      {.name = "transports", .type = OptionType::string, .default_value = "", .help = ""},
      {.name = "mode",
       .type = OptionType::string,
       .default_value = "rc",
       .help = "",
       .choices = {"rc", "ud"}},
      {.name = "port",
       .type = OptionType::integer,
       .default_value = "1",
       .help = "",
       .min = 1,
       .max = 255},
      {.name = "inline",
       .type = OptionType::size,
       .default_value = "0",
       .help = "",
       .min = 0,
       .max = 1 << 20},
      {.name = "events", .type = OptionType::boolean, .default_value = "false", .help = ""},
  };
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto config = uniperf::suite::parse_config(text, "fuzz.yaml");
    (void)uniperf::suite::validate_options(config, specs());
  } catch (const uniperf::suite::SpecError&) {
  }
  return 0;
}
