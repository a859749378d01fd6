// The stage-cost file reader (`uniperf report --stages`) on arbitrary bytes:
// what is not JSON, too deep, or not a file of `uniperf stages` is refused
// with a reason; what passes is drawn as the HTML report's tables.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "report/stage_costs_view.hpp"
#include "results/bounded_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nlohmann::json stages;
  try {
    stages = uniperf::results::parse_bounded_json(
        std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const nlohmann::json::exception&) {
    return 0;  // not JSON, or a number out of range (1e999), as the CLI says
  } catch (const uniperf::results::JsonTooDeep&) {
    return 0;
  }
  if (!uniperf::report::stage_costs_problem(stages).empty()) return 0;
  std::ostringstream html;
  uniperf::report::write_stage_costs(html, stages);
  return 0;
}
