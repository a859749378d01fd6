#include "engine/test_spec.hpp"

namespace uniperf::engine {

std::string_view to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::latency:
      return "latency";
    case Pattern::bandwidth:
      return "bandwidth";
    case Pattern::message_rate:
      return "message_rate";
  }
  return "?";
}

std::string_view to_string(Direction direction) {
  return direction == Direction::uni ? "uni" : "bi";
}

std::string_view to_string(WindowMode mode) {
  return mode == WindowMode::streaming ? "streaming" : "window_ack";
}

std::string_view to_string(CompletionMode mode) {
  return mode == CompletionMode::poll ? "poll" : "event";
}

}  // namespace uniperf::engine
