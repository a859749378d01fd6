#include "results/bounded_json.hpp"

#include <string>

namespace uniperf::results {

nlohmann::json parse_bounded_json(std::string_view text) {
  using json = nlohmann::json;
  const json::parser_callback_t limit = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw JsonTooDeep("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    return true;
  };
  return json::parse(text, limit);
}

}  // namespace uniperf::results
