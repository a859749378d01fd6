// JSON from outside the process (result files, the peer's handshake) is
// parsed with a nesting limit. nlohmann::json parses deep nesting fine, but
// copying, comparing and printing a value recurse once per level, so a line
// of a million '[' (two megabytes) would overflow the stack later, far from
// the parse, instead of failing with a message.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace uniperf::results {

/// Deeper than any record or handshake uniperf writes (those nest 4 levels).
inline constexpr int kMaxJsonDepth = 64;

struct JsonTooDeep : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// json::parse, refusing nesting deeper than kMaxJsonDepth with JsonTooDeep
/// ("JSON nested deeper than 64 levels"); other errors as json::parse.
nlohmann::json parse_bounded_json(std::string_view text);

}  // namespace uniperf::results
