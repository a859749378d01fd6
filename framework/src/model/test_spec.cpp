#include "model/test_spec.hpp"

#include <algorithm>

namespace uniperf::model {

Duration run_length_of(const TestSpec& test, const FlowSpec& flow) {
  Duration run = test.duration;
  if (flow.iterations > 0) {
    run.iterations = flow.iterations;
    run.seconds = run.margin = 0;
  } else if (flow.seconds > 0) {
    run.seconds = flow.seconds;
    run.iterations = 0;
  }
  return run;
}

double longest_timed_seconds(const TestSpec& test) {
  double longest = 0;
  for (const FlowSpec& flow : test.flows) {
    const Duration run = run_length_of(test, flow);
    longest = std::max(longest, flow.start_offset + run.seconds + 2 * run.margin);
  }
  return longest;
}

bool runs_over(const std::vector<std::string>& configs, std::string_view config) {
  return configs.empty() || std::find(configs.begin(), configs.end(), config) != configs.end();
}

// The names are the suite file's spellings and the result records' (the
// knob table parses them back by index, model/flow_fields.cpp), so they
// never change.

std::string_view to_string(RankPairs pairs) {
  switch (pairs) {
    case RankPairs::first:
      return "first";
    case RankPairs::all:
      return "all";
    case RankPairs::ring:
      return "ring";
    case RankPairs::bisection:
      return "bisection";
    case RankPairs::incast:
      return "incast";
    case RankPairs::fanout:
      return "fanout";
    case RankPairs::neighbors:
      return "neighbors";
    case RankPairs::all_to_all:
      return "all_to_all";
  }
  return "unknown";
}

std::string_view to_string(Role role) {
  switch (role) {
    case Role::measured:
      return "measured";
    case Role::load:
      return "load";
  }
  return "unknown";
}

std::string_view to_string(RailPolicy policy) {
  switch (policy) {
    case RailPolicy::bind:
      return "bind";
    case RailPolicy::stripe:
      return "stripe";
    case RailPolicy::round_robin:
      return "round_robin";
  }
  return "unknown";
}

std::string_view to_string(FlowProcesses process) {
  switch (process) {
    case FlowProcesses::shared:
      return "shared";
    case FlowProcesses::separate:
      return "separate";
  }
  return "unknown";
}

std::string_view to_string(StopRule rule) {
  switch (rule) {
    case StopRule::all_done:
      return "all_done";
    case StopRule::first_done:
      return "first_done";
  }
  return "unknown";
}

std::string_view to_string(Delivery delivery) {
  switch (delivery) {
    case Delivery::direct:
      return "direct";
    case Delivery::copy:
      return "copy";
  }
  return "unknown";
}

std::string_view to_string(Reassembly reassembly) {
  switch (reassembly) {
    case Reassembly::store_and_forward:
      return "store_and_forward";
    case Reassembly::cut_through:
      return "cut_through";
  }
  return "unknown";
}

std::string_view to_string(Source source) {
  switch (source) {
    case Source::zero_copy:
      return "zero_copy";
    case Source::staged:
      return "staged";
  }
  return "unknown";
}

std::string_view to_string(Pages pages) {
  switch (pages) {
    case Pages::normal:
      return "normal";
    case Pages::huge:
      return "huge";
  }
  return "unknown";
}

std::string_view to_string(StreamEnd end) {
  switch (end) {
    case StreamEnd::last_completion:
      return "last_completion";
    case StreamEnd::delivered:
      return "delivered";
  }
  return "unknown";
}

std::string_view to_string(SendBuffers buffers) {
  switch (buffers) {
    case SendBuffers::pattern:
      return "pattern";
    case SendBuffers::untouched:
      return "untouched";
  }
  return "unknown";
}

std::string_view to_string(TargetWatch watch) {
  switch (watch) {
    case TargetWatch::none:
      return "none";
    case TargetWatch::last_byte:
      return "last_byte";
  }
  return "unknown";
}

std::string_view to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::latency:
      return "latency";
    case Pattern::bandwidth:
      return "bandwidth";
    case Pattern::message_rate:
      return "message_rate";
  }
  return "unknown";
}

std::string_view to_string(Direction direction) {
  switch (direction) {
    case Direction::uni:
      return "uni";
    case Direction::bi:
      return "bi";
  }
  return "unknown";
}

std::string_view to_string(WindowMode mode) {
  switch (mode) {
    case WindowMode::streaming:
      return "streaming";
    case WindowMode::window_ack:
      return "window_ack";
  }
  return "unknown";
}

std::string_view to_string(CompletionMode mode) {
  switch (mode) {
    case CompletionMode::poll:
      return "poll";
    case CompletionMode::event:
      return "event";
  }
  return "unknown";
}

std::string_view to_string(BufferMode mode) {
  switch (mode) {
    case BufferMode::cycle:
      return "cycle";
    case BufferMode::single:
      return "single";
  }
  return "unknown";
}

}  // namespace uniperf::model
