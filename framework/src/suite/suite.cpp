#include "suite/suite.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "model/metrics.hpp"
#include "suite/layers.hpp"
#include "suite/presets.hpp"
#include "suite/units.hpp"

namespace uniperf::suite {
namespace {

/// Measured iterations of a latency test: 8 bytes of timestamp and 8 of
/// sample each, 512 MiB at this bound.
constexpr std::uint64_t kMaxLatencyIterations = std::uint64_t{1} << 25;

using model::CompletionMode;
using model::Direction;
using model::FlowSpec;
using model::Pattern;
using model::SendBuffers;
using model::StreamEnd;
using model::TargetWatch;
using model::TestSpec;
using model::WindowMode;

/// The most concurrent flows a test may have: each is a thread (and a
/// Context unless the plugin's endpoints are thread-safe), and YAML aliases
/// let a short file list thousands.
constexpr std::size_t kMaxFlows = 256;

/// The keys a flow may set: every row of the flow table.
const std::vector<std::string>& flow_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> names;
    for (const model::FlowField& field : model::kFlowFields) names.emplace_back(field.name);
    return names;
  }();
  return keys;
}

/// A test's keys: its own, the run length's, then every flow key.
std::vector<std::string> test_keys() {
  std::vector<std::string> keys = {"name",  "preset",   "sizes",   "pairs",
                                   "until", "baseline", "process", "configs"};
  for (const model::RunField& field : model::kRunFields) {
    if (!field.suite_key.empty()) keys.emplace_back(field.suite_key);
  }
  keys.emplace_back("flows");
  keys.insert(keys.end(), flow_keys().begin(), flow_keys().end());
  return keys;
}

std::vector<std::string> defaults_keys() {
  std::vector<std::string> keys = test_keys();
  keys.erase(std::find(keys.begin(), keys.end(), "name"));
  return keys;
}

/// The value a flow key resolves to on its own (pattern and op pick the
/// built-in and preset values before the rest of the flow is read).
FlowSpec probe(const Reader& r, std::string_view key) {
  FlowSpec flow;
  r.read(*model::find_flow_field(key), flow);
  return flow;
}

// ---------------------------------------------------------------- flows

/// A pipelined flow (fragment > 0; docs/pipeline.md): its delivery names
/// the op, and it is one way: a stream, or a ping-pong (pattern: latency)
/// of one message at a time per endpoint.
void check_pipelined(const Reader& r, const FlowSpec& f) {
  const Op wanted = f.delivery == model::Delivery::direct ? Op::write : Op::send;
  if (f.op != wanted) {
    r.fail("op", std::string("a pipelined transfer with delivery ") +
                     std::string(model::to_string(f.delivery)) + " moves its fragments by " +
                     std::string(to_string(wanted)) + " (op: " + std::string(to_string(wanted)) +
                     ")");
  }
  if (f.direction == Direction::bi) r.fail("fragment", "a pipelined transfer is one way");
  if (f.window_mode == WindowMode::window_ack) {
    r.fail("fragment", "a pipelined transfer keeps `window` fragments in flight (streaming)");
  }
  if (f.rate_limit.per_second > 0) {
    r.fail("rate_limit", "paces whole messages, not a pipelined transfer's fragments");
  }
  if (f.rail_policy != model::RailPolicy::bind) {
    r.fail("rail_policy", "a pipelined transfer runs on one rail (rail_policy: bind)");
  }
}

/// Resolves one flow from its layer and checks the knobs against each other.
/// `anchor_line` is reported when a required key is missing altogether.
FlowSpec build_flow(const Reader& r, int anchor_line, const std::string& file) {
  FlowSpec f;
  for (const model::FlowField& field : model::kFlowFields) {
    const std::string key(field.name);
    if (r.has(key)) {
      r.read(field, f);
    } else if (field.required) {
      const std::string choices = field.choice_list(", ");
      throw SpecError(
          file, anchor_line, key,
          "missing: every test needs " + key + (choices.empty() ? "" : " (" + choices + ")"));
    }
  }

  const bool latency = f.pattern == Pattern::latency;
  // A pipelined message keeps `window` of its fragments in flight.
  if (latency && f.window != 1 && f.fragment == 0)
    r.fail("window", "latency is a ping-pong: the window must be 1 (or, pipelined, fragments)");
  if (latency && f.direction == Direction::bi) {
    r.fail("direction", "latency is a ping-pong: direction must be uni");
  }
  if (latency && f.window_mode == WindowMode::window_ack) {
    r.fail("window_mode", "window_ack applies to bandwidth and message_rate, not latency");
  }
  if (latency && f.stream_end == StreamEnd::delivered) {
    r.fail("stream_end",
           "delivered ends a stream: for bandwidth and message_rate (a ping-pong's answer "
           "already says its message arrived)");
  }
  if (f.target_watch != TargetWatch::none &&
      (f.op != Op::write || latency || f.direction == Direction::bi || f.fragment != 0)) {
    r.fail("target_watch",
           "watches what a write stream lands at its target: for op write, pattern bandwidth "
           "or message_rate, one way, whole messages (a write ping-pong's target watches "
           "its last byte anyway)");
  }
  if (f.send_buffers == SendBuffers::untouched && f.validate) {
    r.fail("send_buffers",
           "untouched send buffers hold no pattern for validate to check: one or the other");
  }
  if (f.rate_limit.per_second > 0 && latency) {
    r.fail("rate_limit",
           "paces a stream: for bandwidth and message_rate (a ping-pong is "
           "spaced out by latency_gap)");
  }
  if (f.rate_limit.per_second > 0 && f.window_mode == WindowMode::window_ack) {
    r.fail("rate_limit", "paces the streaming window (window_mode: streaming)");
  }
  if (!latency && f.keep_samples) {
    r.fail("keep_samples", "a stream keeps no per-iteration samples: for latency tests only");
  }
  if (!latency && f.latency_gap > 0) {
    r.fail("latency_gap",
           "a pause between ping-pongs: for latency tests only (a stream is "
           "paced by rate_limit)");
  }

  if (f.fragment > 0) check_pipelined(r, f);

  // 0 asks for the automatic value, as if the key were absent.
  const std::uint32_t half_window = std::max(1u, f.window / 2);
  if (!r.has("signal_every") || f.signal_every == 0) f.signal_every = half_window;
  if (!latency && f.signal_every > f.window) {
    // A preset's signaling interval follows its tool in being capped to the
    // window (perftest caps cq_mod to tx_depth); a user's is an error.
    if (r.level("signal_every") == Level::preset) {
      f.signal_every = f.window;
    } else {
      r.fail("signal_every", "must not exceed the window (" + std::to_string(f.window) + ")");
    }
  }
  // Latency may signal less often than every post (perftest's send latency
  // signals every 100th): one op is in flight at a time, and a signaled
  // completion covers the unsignaled ones before it.
  if (f.window % f.post_list != 0) {
    r.fail("post_list",
           "the window (" + std::to_string(f.window) + ") must be a multiple of post_list");
  }
  if (f.signal_every % f.post_list != 0) {
    r.fail("post_list",
           "signal_every (" + std::to_string(f.signal_every) + ") must be a multiple of post_list");
  }
  if (!r.has("cq_moderation")) f.cq_moderation = std::max(1u, f.window / f.signal_every);
  if (!r.has("rx_depth") || f.rx_depth == 0) f.rx_depth = std::max(2 * f.window, 64u);
  if (f.rx_replenish > f.rx_depth) {
    r.fail("rx_replenish", "must not exceed rx_depth (" + std::to_string(f.rx_depth) + ")");
  }
  if (f.iterations > 0 && f.seconds > 0) {
    r.fail("flow_duration", "give a flow its own iterations or its own duration, not both");
  }
  if (f.role == model::Role::load) {
    // A load runs until it is told to stop, which only the side that
    // streams on its own (the initiator, one way) can be.
    if (f.iterations > 0 || f.seconds > 0) {
      r.fail(f.iterations > 0 ? "flow_iterations" : "flow_duration",
             "a load flow runs until the measured flows are done: it has no length of its own");
    }
    if (latency) r.fail("role", "a load flow is a stream: pattern bandwidth or message_rate");
    if (f.direction == Direction::bi) r.fail("role", "a load flow runs one way (direction: uni)");
    if (f.window_mode == WindowMode::window_ack)
      r.fail("role", "a load flow streams (window_mode: streaming)");
  }
  return f;
}

std::vector<std::uint64_t> parse_sizes(const YAML::Node& node, const std::string& file) {
  std::vector<std::uint64_t> sizes;
  auto add = [&](const YAML::Node& item) {
    if (!item.IsScalar()) {
      throw SpecError(file, line_of(item), "sizes", "expected a size or a range such as 2..8M x2");
    }
    std::vector<std::uint64_t> these;
    try {
      these = parse_size_range(item.Scalar());
    } catch (const std::invalid_argument& e) {
      throw SpecError(file, line_of(item), "sizes", e.what());
    }
    for (const std::uint64_t size : these) {
      if (size == 0 || size > kMaxMessageSize) {
        throw SpecError(file, line_of(item), "sizes",
                        "size " + std::to_string(size) + " is outside 1 B .. 1 GiB");
      }
      sizes.push_back(size);
    }
    if (sizes.size() > kMaxSizes) {
      throw SpecError(file, line_of(node), "sizes",
                      "more than " + std::to_string(kMaxSizes) + " sizes in one test");
    }
  };
  if (node.IsSequence()) {
    for (const auto& item : node) add(item);
  } else {
    add(node);
  }
  if (sizes.empty()) throw SpecError(file, line_of(node), "sizes", "no sizes given");
  return sizes;
}

/// Iterations or duration: the higher level wins; both at one level (or in
/// the test) is a contradiction.
void resolve_run_length(const Reader& r, TestSpec& test) {
  const bool has_duration = r.has("duration");
  bool duration_mode = has_duration;
  if (has_duration && r.has("iterations")) {
    const Level iterations_level = r.level("iterations");
    const Level duration_level = r.level("duration");
    if (iterations_level == duration_level) {
      r.fail("duration", "give iterations or duration, not both");
    }
    duration_mode = duration_level > iterations_level;
  }
  if (duration_mode) {
    if (r.text("duration") == "forever") {
      // Reported (and pooled) in windows of this length; --report-interval
      // changes it.
      test.duration.forever = true;
      test.duration.seconds = 5;
    } else {
      test.duration.seconds = r.seconds("duration");
    }
    if (test.duration.seconds <= 0) r.fail("duration", "must be positive");
    test.duration.iterations = 0;
  } else {
    test.duration.seconds = 0;
    test.duration.iterations = r.whole_number("iterations", UINT64_MAX);
    if (test.duration.iterations == 0) r.fail("iterations", "must be at least 1");
  }
  if (r.has("margin")) {
    if (duration_mode) {
      test.duration.margin = r.seconds("margin");
      if (2 * test.duration.margin >= test.duration.seconds) {
        r.fail("margin", "twice the margin must be shorter than the duration");
      }
    } else if (!has_duration || r.level("margin") >= r.level("iterations")) {
      r.fail("margin", "margin applies to duration mode only");
    }
  }
  test.duration.warmup_iterations = r.whole_number("warmup", UINT64_MAX);
  test.duration.trials = r.count("trials", 1);
}

/// A structured key (sizes, flows) of the test, else of the suite defaults.
/// (yaml-cpp throws when an absent node is assigned to, hence no fallback by
/// assignment.)
std::optional<YAML::Node> structured_key(const YAML::Node& test, const YAML::Node* defaults,
                                         const char* key) {
  if (const YAML::Node own = test[key]) return own;
  if (defaults != nullptr && defaults->IsMap()) {
    if (const YAML::Node inherited = (*defaults)[key]) return inherited;
  }
  return std::nullopt;
}

/// `configs:`: a config's name, or a list of them (each once).
std::vector<std::string> config_names(const YAML::Node& given, const std::string& file) {
  constexpr std::size_t kMostConfigNames = 256;
  const auto expected = [&] {
    return SpecError(file, line_of(given), "configs",
                     "expected a config's name or a list of them (the names records give "
                     "configs: the file's `name:` or its stem)");
  };
  std::vector<std::string> names;
  if (given.IsScalar()) {
    names.push_back(given.Scalar());
  } else if (given.IsSequence() && given.size() > 0 && given.size() <= kMostConfigNames) {
    for (const YAML::Node& item : given) {
      if (!item.IsScalar()) throw expected();
      if (std::find(names.begin(), names.end(), item.Scalar()) != names.end())
        throw SpecError(file, line_of(item), "configs", "'" + item.Scalar() + "' is listed twice");
      names.push_back(item.Scalar());
    }
  } else {
    throw expected();
  }
  for (const std::string& name : names) {
    if (name.empty()) throw expected();
  }
  return names;
}

/// A test key that names one of an enum's `count` choices (each spelled by
/// model::to_string): sets `choice` when `given` has the key, or throws a
/// SpecError at its line that names the nearest choice and all of them;
/// `what` says what the value is ("pairing", "stop rule").
template <typename Choice>
void test_choice(Layer& given, const std::string& key, std::string_view what, std::size_t count,
                 Choice& choice, const std::string& file) {
  if (!given.count(key)) return;
  const std::string& text = given[key].text;
  std::vector<std::string> choices;
  for (std::size_t i = 0; i < count; ++i) {
    const auto candidate = static_cast<Choice>(i);
    choices.emplace_back(model::to_string(candidate));
    if (text == choices.back()) {
      choice = candidate;
      return;
    }
  }
  throw SpecError(file, given[key].line, key,
                  "unknown " + std::string(what) + " '" + text + "'" + suggestion(text, choices) +
                      "; expected one of: " + join(choices));
}

}  // namespace

// ---------------------------------------------------------------- enum names

namespace {

/// The enum a flow key names, by the key's row.
template <auto Member>
auto parse_choice(std::string_view key, std::string_view name)
    -> std::optional<model::field_detail::MemberType<Member>> {
  FlowSpec flow;
  if (!model::find_flow_field(key)->set_text(flow, name)) return std::nullopt;
  return flow.*Member;
}

}  // namespace

std::optional<Pattern> parse_pattern(std::string_view name) {
  return parse_choice<&FlowSpec::pattern>("pattern", name);
}
std::optional<Direction> parse_direction(std::string_view name) {
  return parse_choice<&FlowSpec::direction>("direction", name);
}
std::optional<WindowMode> parse_window_mode(std::string_view name) {
  return parse_choice<&FlowSpec::window_mode>("window_mode", name);
}
std::optional<CompletionMode> parse_completion_mode(std::string_view name) {
  return parse_choice<&FlowSpec::completion>("completion", name);
}
std::optional<model::BufferMode> parse_buffer_mode(std::string_view name) {
  return parse_choice<&FlowSpec::buffers>("buffers", name);
}

// ---------------------------------------------------------------- tests

TestSpec parse_test(const YAML::Node& node, const std::string& file, const YAML::Node* defaults) {
  if (!node.IsMap()) throw SpecError(file, line_of(node), "tests", "each test must be a mapping");
  const std::vector<std::string> known = test_keys();
  check_keys(node, known, file, "a test");
  if (defaults != nullptr && !*defaults) defaults = nullptr;

  TestSpec test;
  test.source_line = static_cast<std::uint32_t>(line_of(node));
  if (!node["name"]) {
    throw SpecError(file, line_of(node), "name", "missing: every test needs a name");
  }
  test.name = scalar(node["name"], file, "name");
  if (test.name.empty() ||
      test.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos) {
    throw SpecError(file, line_of(node["name"]), "name",
                    "'" + test.name + "': use letters, digits, '_', '.' and '-' only");
  }

  // What the files say: suite defaults, then the test's own keys.
  Layer given;
  overlay(given, defaults, known, Level::defaults, file);
  overlay(given, &node, known, Level::test, file);
  if (given.count("preset")) {
    test.preset = given["preset"].text;
    if (std::find(preset_names().begin(), preset_names().end(), test.preset) ==
        preset_names().end()) {
      throw SpecError(file, given["preset"].line, "preset",
                      "unknown preset '" + test.preset + "'" +
                          suggestion(test.preset, preset_names()) +
                          "; expected one of: " + join(preset_names()));
    }
  }

  // Which ranks of a launched job it pairs, when its flows stop, where
  // they run.
  test_choice(given, "pairs", "pairing", model::kRankPairsCount, test.pairs, file);
  test_choice(given, "until", "stop rule", model::kStopRuleCount, test.until, file);
  test_choice(given, "process", "choice", model::kFlowProcessesCount, test.process, file);
  if (const std::optional<YAML::Node> configs = structured_key(node, defaults, "configs"))
    test.configs = config_names(*configs, file);

  // Flows: the `flows:` list (the test's, else the defaults'), or the test itself.
  const std::optional<YAML::Node> flow_list = structured_key(node, defaults, "flows");
  std::vector<YAML::Node> flow_nodes;
  if (flow_list) {
    if (!flow_list->IsSequence() || flow_list->size() == 0) {
      throw SpecError(file, line_of(*flow_list), "flows", "expected a non-empty list of flows");
    }
    if (flow_list->size() > kMaxFlows) {
      throw SpecError(file, line_of(*flow_list), "flows",
                      "more than " + std::to_string(kMaxFlows) + " flows in one test");
    }
    for (const auto& flow_node : *flow_list) {
      require_map(flow_node, file, "flows");
      check_keys(flow_node, flow_keys(), file, "a flow");
      flow_nodes.push_back(flow_node);
    }
  }

  // Each flow resolves on its own ladder, because the built-in and preset
  // values depend on its pattern and op.
  std::optional<Layer> first_layer;
  auto resolve = [&](const YAML::Node* flow_node) {
    Layer flow_given = given;
    overlay(flow_given, flow_node, flow_keys(), Level::flow, file);
    const Reader given_reader(flow_given, file);
    const Pattern pattern =
        flow_given.count("pattern") ? probe(given_reader, "pattern").pattern : Pattern::latency;
    // A missing op is reported by build_flow; send stands in for the preset.
    const Op op = flow_given.count("op") ? probe(given_reader, "op").op : Op::send;
    Layer layer = builtin_defaults(pattern, test.source_line);
    if (!test.preset.empty()) {
      for (auto& [key, value] : preset_values(test.preset, pattern, op, given["preset"].line)) {
        layer[key] = value;
      }
    }
    for (auto& [key, value] : flow_given) layer[key] = value;
    const int anchor = flow_node != nullptr ? line_of(*flow_node) : test.source_line;
    test.flows.push_back(build_flow(Reader(layer, file), anchor, file));
    if (!first_layer) first_layer = std::move(layer);
  };
  if (flow_nodes.empty()) {
    resolve(nullptr);
  } else {
    for (const auto& flow_node : flow_nodes) resolve(&flow_node);
  }

  // A flow's own size, length and start set it apart from the others of
  // its test; a lone flow's are the test's.
  if (test.flows.size() == 1) {
    const FlowSpec& lone = test.flows.front();
    const char* key = lone.size != 0           ? "flow_size"
                      : lone.iterations != 0   ? "flow_iterations"
                      : lone.seconds != 0      ? "flow_duration"
                      : lone.start_offset != 0 ? "start_offset"
                                               : nullptr;
    if (key != nullptr) {
      throw SpecError(file, test.source_line, key,
                      std::string(key) +
                          " sets a flow apart from the others of its test; a test of one flow "
                          "takes the test's sizes:, iterations: or duration:");
    }
  }

  // Separate processes are for flows that run beside each other.
  if (test.process == model::FlowProcesses::separate) {
    const int line = given["process"].line;
    if (test.flows.size() < 2) {
      throw SpecError(file, line, "process",
                      "process: separate runs each flow of a test in a process pair of its own; "
                      "this test has one flow (give it a flows: list)");
    }
    if (test.pairs != model::RankPairs::first) {
      throw SpecError(file, line, "process",
                      "process: separate places flow k on ranks 2k and 2k+1; it cannot also "
                      "pair the ranks by pairs: " +
                          std::string(model::to_string(test.pairs)));
    }
  }

  // A load is measured against: a test needs a measured flow.
  const bool any_measured = std::any_of(test.flows.begin(), test.flows.end(), [](const auto& f) {
    return f.role == model::Role::measured;
  });
  if (!any_measured) {
    throw SpecError(file, test.source_line, "role",
                    "every flow is a load: a test needs a measured flow (role: measured) for "
                    "its loads to run beside");
  }

  // How long, from the first flow's ladder (the run-length keys are test
  // keys, which flows do not override).
  const Reader run_reader(*first_layer, file);
  resolve_run_length(run_reader, test);
  // A latency loop keeps a timestamp per measured iteration (and the
  // record a sample): bounded, so no count asks for more memory than a
  // machine has. Longer latency runs are duration mode (samples capped).
  for (const auto& flow : test.flows) {
    if (flow.seconds > 0 && 2 * test.duration.margin >= flow.seconds) {
      throw SpecError(file, test.source_line, "flow_duration",
                      "twice the test's margin must be shorter than a flow's own duration");
    }
    if (test.duration.forever && (flow.seconds > 0 || flow.iterations > 0)) {
      throw SpecError(file, test.source_line,
                      flow.seconds > 0 ? "flow_duration" : "flow_iterations",
                      "a test that runs forever gives its flows no length of their own");
    }
    if (flow.pattern == Pattern::latency && test.duration.iterations > kMaxLatencyIterations) {
      run_reader.fail("iterations", "a latency test keeps one sample per iteration: at most " +
                                        std::to_string(kMaxLatencyIterations) + " (" +
                                        std::to_string(test.duration.iterations) +
                                        " given); for longer runs give a duration");
    }
  }

  // Sizes, shared by the flows.
  const std::optional<YAML::Node> sizes = structured_key(node, defaults, "sizes");
  const FlowSpec& first = test.flows.front();
  test.sizes =
      sizes ? parse_sizes(*sizes, file) : default_sizes(first.op, first.pattern, test.preset);
  for (const auto& flow : test.flows) {
    if (is_atomic(flow.op) && (test.sizes.size() != 1 || test.sizes.front() != 8)) {
      throw SpecError(file, sizes ? line_of(*sizes) : test.source_line, "sizes",
                      "atomics operate on 8 bytes: sizes must be [8]");
    }
  }
  return test;
}

// ---------------------------------------------------------------- baselines

/// The flows of `test` a baseline applies to: its measured latency flows,
/// in a test of several flows.
std::vector<std::size_t> latency_flows_beside_others(const TestSpec& test) {
  std::vector<std::size_t> flows;
  if (test.flows.size() < 2) return flows;
  for (std::size_t k = 0; k < test.flows.size(); ++k) {
    const FlowSpec& flow = test.flows[k];
    if (flow.pattern == Pattern::latency && flow.role == model::Role::measured) flows.push_back(k);
  }
  return flows;
}

/// Flow `k` of `test` as a test of its own: the same flow at the same
/// message size, for as long, with nothing beside it.
TestSpec alone_test(const TestSpec& test, std::size_t k, bool several) {
  TestSpec alone;
  alone.name = test.name + (several ? ".flow" + std::to_string(k + 1) : "") + ".alone";
  alone.preset = test.preset;
  FlowSpec flow = test.flows[k];
  alone.sizes = flow.size != 0 ? std::vector<std::uint64_t>{flow.size} : test.sizes;
  alone.duration = model::run_length_of(test, flow);
  flow.size = flow.iterations = 0;
  flow.seconds = flow.start_offset = 0;
  alone.flows = {flow};
  alone.pairs = test.pairs;
  alone.configs = test.configs;
  alone.source_line = test.source_line;
  return alone;
}

/// Applies a test's `baseline:` (`solo`, or the name of an earlier test that
/// measured the flow alone): appends the tests it needs, then the test, to
/// `tests`. A suite default applies where it can; a test's own must.
void add_with_baseline(std::vector<TestSpec>& tests, TestSpec test, const YAML::Node& node,
                       const YAML::Node* defaults, const std::string& file) {
  const bool own = static_cast<bool>(node["baseline"]);
  std::optional<YAML::Node> given;
  if (own) {
    given = node["baseline"];
  } else if (defaults != nullptr && (*defaults)["baseline"]) {
    given = (*defaults)["baseline"];
  }
  const std::string baseline = given ? scalar(*given, file, "baseline") : "";
  const std::vector<std::size_t> latency = latency_flows_beside_others(test);
  if (baseline.empty() || (latency.empty() && !own)) {
    tests.push_back(std::move(test));
    return;
  }
  const int line = line_of(*given);
  if (latency.empty()) {
    throw SpecError(file, line, "baseline",
                    "a baseline compares a latency flow beside other flows with the same flow "
                    "alone; test '" +
                        test.name + "' has no measured latency flow beside others");
  }
  if (test.duration.forever) {
    throw SpecError(file, line, "baseline", "a test that runs forever has no baseline");
  }
  test.baselines.assign(test.flows.size(), "");
  if (baseline == "solo") {
    for (const std::size_t k : latency) {
      TestSpec alone = alone_test(test, k, latency.size() > 1);
      test.baselines[k] = alone.name;
      tests.push_back(std::move(alone));
    }
  } else {
    const auto named = std::find_if(tests.begin(), tests.end(),
                                    [&](const TestSpec& t) { return t.name == baseline; });
    if (named == tests.end()) {
      std::vector<std::string> names;
      for (const TestSpec& t : tests) names.push_back(t.name);
      throw SpecError(file, line, "baseline",
                      "'" + baseline + "' names no earlier test" + suggestion(baseline, names) +
                          " (solo, or the name of a test before this one that runs the flow "
                          "alone)");
    }
    if (named->flows.size() != 1 || named->flows.front().pattern != Pattern::latency) {
      throw SpecError(file, line, "baseline",
                      "'" + baseline +
                          "' is no latency test of one flow: a baseline measures "
                          "the flow alone");
    }
    for (const std::size_t k : latency) test.baselines[k] = baseline;
  }
  tests.push_back(std::move(test));
}

// ---------------------------------------------------------------- suites

namespace {

/// NODE's own KEY, else the suite defaults' KEY (either may be absent).
/// (A YAML::Node assigned to is written through, so the two stay apart.)
YAML::Node own_or_default(const YAML::Node& node, const YAML::Node* defaults, const char* key) {
  const YAML::Node own = node[key];
  return own || defaults == nullptr ? own : (*defaults)[key];
}

bool is_auto(const YAML::Node& given) {
  return given && given.IsScalar() && given.Scalar() == "auto";
}

/// One copy of the test NODE per choice, with KEY set to value_of(choice)
/// and (if it has a name) named NAME.KEY_CHOICE: how every sweep of one
/// setting becomes tests whose records say which point they measured.
template <class Choices, class ValueOf>
std::vector<YAML::Node> one_test_per_choice(const YAML::Node& node, const std::string& key,
                                            const Choices& choices, ValueOf value_of) {
  const std::string name = node["name"] && node["name"].IsScalar() ? node["name"].Scalar() : "";
  std::vector<YAML::Node> tests;
  for (const auto& choice : choices) {
    YAML::Node one = YAML::Clone(node);
    one[key] = value_of(choice);
    if (!name.empty()) one["name"] = name + "." + key + "_" + std::string(choice);
    tests.push_back(one);
  }
  return tests;
}

/// A test whose `fragment` (its own, else the defaults') is a sweep - a
/// list of sizes, a range (`256..64K x2`), or `auto` (kAutoFragments) - is
/// one test per fragment,
/// named NAME.fragment_SIZE, so that with its sizes it measures the grid
/// of (message size, fragment) (docs/pipeline.md). Any other test is itself.
std::vector<YAML::Node> fragment_sweep(const YAML::Node& node, const YAML::Node* defaults,
                                       const std::string& file) {
  if (!node.IsMap()) return {node};
  const YAML::Node given = own_or_default(node, defaults, "fragment");
  const bool automatic = is_auto(given);
  const bool sweep =
      given && (given.IsSequence() || automatic ||
                (given.IsScalar() && given.Scalar().find("..") != std::string::npos));
  if (!sweep) return {node};
  std::vector<std::string> fragments;
  const auto add = [&](const YAML::Node& item) {
    if (!item.IsScalar())
      throw SpecError(file, line_of(item), "fragment",
                      "expected a size or a range such as 256..64K x2");
    if (item.Scalar().find("..") == std::string::npos) {
      fragments.push_back(item.Scalar());
      return;
    }
    try {
      for (const std::uint64_t f : parse_size_range(item.Scalar()))
        fragments.push_back(std::to_string(f));
    } catch (const std::invalid_argument& e) {
      throw SpecError(file, line_of(item), "fragment", e.what());
    }
  };
  if (automatic) {
    // `uniperf run` measures the tuner's candidates (the curve); `uniperf
    // tune` searches them with repeats and picks one per size.
    for (const std::uint32_t f : kAutoFragments) fragments.push_back(std::to_string(f));
  } else if (given.IsSequence()) {
    for (const auto& item : given) add(item);
  } else {
    add(given);
  }
  return one_test_per_choice(node, "fragment", fragments,
                             [](const std::string& fragment) { return fragment; });
}

/// A test whose `source` (its own, else the defaults') is `auto` is one
/// test per kAutoSources, named NAME.source_S (after the fragment sweep's
/// suffix, if any). Any other test is itself.
std::vector<YAML::Node> source_sweep(const YAML::Node& node, const YAML::Node* defaults) {
  if (!node.IsMap() || !is_auto(own_or_default(node, defaults, "source"))) return {node};
  return one_test_per_choice(node, "source", kAutoSources,
                             [](std::string_view source) { return std::string(source); });
}

/// A test whose `inline` (its own, else the defaults') is `auto` is one
/// test per kAutoInlines, named NAME.inline_I (after the other sweeps'
/// suffixes): `inline: 0`, and `inline: kInlineAsPluginAllows`. Any other
/// test is itself.
std::vector<YAML::Node> inline_sweep(const YAML::Node& node, const YAML::Node* defaults) {
  if (!node.IsMap() || !is_auto(own_or_default(node, defaults, "inline"))) return {node};
  return one_test_per_choice(node, "inline", kAutoInlines, [](std::string_view choice) {
    return choice == "on" ? kInlineAsPluginAllows : 0;
  });
}

}  // namespace

model::SuiteSpec parse_suite(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap()) {
    throw SpecError(file, 1, "suite", "a suite file is a mapping with suite: and tests:");
  }
  check_keys(root,
             {"suite", "description", "defaults", "tests", "tolerances", "fail_on_skip", "quick"},
             file, "a suite");
  if (const YAML::Node quick = root["quick"]; quick && !quick.IsNull()) {
    // What --quick sets (suite/quick.hpp): keys a test may have.
    require_map(quick, file, "quick");
    check_keys(quick, defaults_keys(), file, "quick");
  }
  model::SuiteSpec suite;
  suite.file = file;
  suite.content_hash = sha256_hex(text);
  suite.source = text;
  if (!root["suite"]) throw SpecError(file, 1, "suite", "missing: name the suite (suite: NAME)");
  suite.name = scalar(root["suite"], file, "suite");
  if (suite.name.empty()) throw SpecError(file, line_of(root["suite"]), "suite", "empty name");
  if (root["description"] && !root["description"].IsNull()) {
    suite.description = scalar(root["description"], file, "description");
  }

  if (const YAML::Node fail_on_skip = root["fail_on_skip"]; fail_on_skip) {
    const std::string value = scalar(fail_on_skip, file, "fail_on_skip");
    if (value != "true" && value != "false") {
      throw SpecError(file, line_of(fail_on_skip), "fail_on_skip",
                      "expected true or false, got '" + value + "'");
    }
    suite.fail_on_skip = value == "true";
  }

  if (const YAML::Node tolerances = root["tolerances"]; tolerances && !tolerances.IsNull()) {
    // The metrics of `uniperf compare`.
    std::vector<std::string> metrics;
    for (const model::MetricInfo& metric : model::kMetrics) metrics.emplace_back(metric.name);
    require_map(tolerances, file, "tolerances");
    check_keys(tolerances, metrics, file, "tolerances");
    for (auto it = tolerances.begin(); it != tolerances.end(); ++it) {
      const std::string metric = key_text(it->first, file);
      std::string percent_text = scalar(it->second, file, metric);
      if (!percent_text.empty() && percent_text.back() == '%') percent_text.pop_back();
      double percent = -1;
      const auto [end, ec] =
          std::from_chars(percent_text.data(), percent_text.data() + percent_text.size(), percent);
      if (ec != std::errc() || end != percent_text.data() + percent_text.size() ||
          !(percent >= 0)) {
        throw SpecError(
            file, line_of(it->second), metric,
            "expected a non-negative percentage (5 or 5%), got '" + it->second.Scalar() + "'");
      }
      suite.tolerances[metric] = percent;
    }
  }

  const YAML::Node defaults = root["defaults"];
  if (defaults && !defaults.IsNull()) {
    require_map(defaults, file, "defaults");
    check_keys(defaults, defaults_keys(), file, "defaults");
  }
  const YAML::Node tests = root["tests"];
  if (!tests || !tests.IsSequence() || tests.size() == 0) {
    throw SpecError(file, tests ? line_of(tests) : 1, "tests",
                    "a suite needs a non-empty list of tests");
  }
  const YAML::Node* suite_defaults = defaults && defaults.IsMap() ? &defaults : nullptr;
  for (const auto& node : tests) {
    for (const YAML::Node& by_fragment : fragment_sweep(node, suite_defaults, file)) {
      const std::vector<YAML::Node> points = source_sweep(by_fragment, suite_defaults);
      for (const YAML::Node& by_source : points) {
        const std::vector<YAML::Node> inlines = inline_sweep(by_source, suite_defaults);
        for (const YAML::Node& one : inlines) {
          TestSpec test = parse_test(one, file, suite_defaults);
          const bool pipelined =
              std::any_of(test.flows.begin(), test.flows.end(),
                          [](const FlowSpec& flow) { return flow.fragment > 0; });
          // Like delivery and reassembly, a source is ignored without
          // fragments; swept there, it would measure one thing twice.
          if (points.size() > 1 && !pipelined)
            throw SpecError(file, line_of(node), "source",
                            "auto chooses how a pipelined transfer's fragments are sent: the test "
                            "needs fragment > 0");
          // Inline applies to a pipeline's fragments, not its messages:
          // one choice per message size could not say which.
          if (inlines.size() > 1 && pipelined)
            throw SpecError(file, line_of(node), "inline",
                            "auto chooses whether each message of a size goes inline: a "
                            "pipelined test (fragment > 0) posts fragments, give it a number");
          add_with_baseline(suite.tests, std::move(test), one, suite_defaults, file);
        }
      }
    }
  }
  // Names are unique, a baseline's generated ones (NAME.alone) included,
  // but over disjoint `configs:`: a record is of one config and test name.
  std::map<std::string, std::vector<const TestSpec*>> by_name;
  for (const TestSpec& test : suite.tests) {
    std::vector<const TestSpec*>& same = by_name[test.name];
    for (const TestSpec* other : same) {
      const bool overlap =
          test.configs.empty() || other->configs.empty() ||
          std::any_of(test.configs.begin(), test.configs.end(),
                      [&](const std::string& config) { return model::runs_over(*other, config); });
      if (overlap) {
        throw SpecError(file, static_cast<int>(test.source_line), "name",
                        "duplicate test name '" + test.name +
                            "' (a name repeats only over disjoint `configs:`)");
      }
    }
    same.push_back(&test);
  }
  return suite;
}

AutoSettings auto_settings(const YAML::Node& test, const YAML::Node& defaults) {
  const auto is_auto = [&](const char* key) {
    const YAML::Node own = test[key];
    const YAML::Node given = own || !defaults.IsMap() ? own : defaults[key];
    return given && given.IsScalar() && given.Scalar() == "auto";
  };
  if (!test.IsMap()) return {};
  return {is_auto("fragment"), is_auto("source"), is_auto("inline")};
}

std::vector<TunedSetting> sweep_points(AutoSettings swept) {
  std::vector<TunedSetting> points;
  for (const std::uint32_t fragment : kAutoFragments) {
    for (const std::string_view source : kAutoSources) {
      for (const std::string_view inlining : kAutoInlines) {
        points.push_back({swept.fragment ? fragment : 0,
                          swept.source ? std::string(source) : std::string(),
                          swept.inlining ? std::string(inlining) : std::string()});
        if (!swept.inlining) break;  // one point: the test's own inline
      }
      if (!swept.source) break;
    }
    if (!swept.fragment) break;
  }
  return points;
}

std::string sweep_point_name(const std::string& name, AutoSettings swept,
                             const TunedSetting& point) {
  std::string named = name;
  if (swept.fragment) named += ".fragment_" + std::to_string(point.fragment);
  if (swept.source) named += ".source_" + point.source;
  if (swept.inlining) named += ".inline_" + point.inlining;
  return named;
}

const std::vector<std::uint64_t>* auto_sweep_sizes(const model::SuiteSpec& suite,
                                                   const std::string& name, AutoSettings swept,
                                                   const std::vector<std::string>& configs) {
  const std::string first = sweep_point_name(name, swept, sweep_points(swept).front());
  for (const model::TestSpec& test : suite.tests) {
    if (test.name == first && test.configs == configs) return &test.sizes;
  }
  return nullptr;
}

std::vector<std::string> test_configs(const YAML::Node& test, const YAML::Node& defaults,
                                      const std::string& file) {
  if (!test.IsMap()) return {};
  const YAML::Node own = test["configs"];
  const YAML::Node given = own || !defaults.IsMap() ? own : defaults["configs"];
  return given ? config_names(given, file) : std::vector<std::string>();
}

model::SuiteSpec load_suite(const std::string& path) {
  return parse_suite(read_whole_file(path), path);
}

}  // namespace uniperf::suite
