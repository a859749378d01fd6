#include "suite/suite.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace uniperf::suite {
namespace {

using engine::CompletionMode;
using engine::Direction;
using engine::FlowSpec;
using engine::Pattern;
using engine::TestSpec;
using engine::WindowMode;

constexpr std::uint64_t kMaxMessageSize = std::uint64_t{1} << 30;

const std::vector<std::string> kFlowKeys = {
    "op",           "pattern",       "direction",  "window",   "window_mode",
    "signal_every", "cq_moderation", "completion", "rx_depth", "rx_replenish",
    "post_list",    "inline",        "endpoints",  "validate"};
const std::vector<std::string> kTestOnlyKeys = {"name",     "preset", "sizes",  "iterations",
                                                "duration", "margin", "warmup", "flows"};

/// One resolved value and where it came from, for messages.
struct Value {
  std::string text;
  int line = 0;
  bool explicit_ = false;  // from the file, not a default or preset
};
using Layer = std::map<std::string, Value>;

int line_of(const YAML::Node& node) {
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(const std::string& key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& k : known) {
    const std::size_t d = edit_distance(key, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, 0, "file", std::string("cannot read: ") + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

YAML::Node load_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw SpecError(file, e.mark.line + 1, "yaml", e.msg);
  }
}

void require_map(const YAML::Node& node, const std::string& file, const std::string& key) {
  if (!node.IsMap()) throw SpecError(file, line_of(node), key, "expected a mapping");
}

/// Checks every key of a mapping against `known`.
void check_keys(const YAML::Node& node, const std::vector<std::string>& known,
                const std::string& file, const std::string& where) {
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw SpecError(
          file, line_of(it->first), key,
          "unknown key in " + where + suggestion(key, known) + "; known keys: " + join(known));
    }
  }
}

void overlay(Layer& layer, const YAML::Node& node, const std::vector<std::string>& keys,
             const std::string& file) {
  if (!node || !node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    if (key == "sizes" || key == "flows") continue;  // structured, handled apart
    if (!it->second.IsScalar())
      throw SpecError(file, line_of(it->second), key, "expected a single value");
    layer[key] = Value{it->second.Scalar(), line_of(it->second), true};
  }
}

// ---------------------------------------------------------------- typed reads

class Reader {
 public:
  Reader(const Layer& layer, const std::string& file) : layer_(layer), file_(file) {}

  bool has(const std::string& key) const { return layer_.count(key) != 0; }
  bool explicit_(const std::string& key) const {
    auto it = layer_.find(key);
    return it != layer_.end() && it->second.explicit_;
  }
  int line(const std::string& key) const {
    auto it = layer_.find(key);
    return it == layer_.end() ? 0 : it->second.line;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw SpecError(file_, line(key), key, message);
  }

  std::uint32_t count(const std::string& key, std::uint32_t minimum = 1) const {
    const std::string& text = layer_.at(key).text;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value > UINT32_MAX) {
      fail(key, "expected a whole number, got '" + text + "'");
    }
    if (value < minimum) fail(key, "must be at least " + std::to_string(minimum));
    return static_cast<std::uint32_t>(value);
  }

  std::uint64_t size(const std::string& key) const {
    const std::string& text = layer_.at(key).text;
    const auto value = parse_size(text);
    if (!value) fail(key, "expected a size such as 64, 4K or 1M, got '" + text + "'");
    return *value;
  }

  bool boolean(const std::string& key) const {
    const std::string& text = layer_.at(key).text;
    if (text == "true" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "no" || text == "off") return false;
    fail(key, "expected true or false, got '" + text + "'");
  }

  double seconds(const std::string& key) const {
    try {
      return parse_seconds(layer_.at(key).text);
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }

  template <class Enum, std::size_t N>
  Enum choice(const std::string& key,
              const std::array<std::pair<const char*, Enum>, N>& values) const {
    const std::string& text = layer_.at(key).text;
    std::vector<std::string> names;
    for (const auto& [name, value] : values) {
      if (text == name) return value;
      names.emplace_back(name);
    }
    fail(key, "unknown value '" + text + "'; expected one of: " + join(names));
  }

  std::string text(const std::string& key) const { return layer_.at(key).text; }

 private:
  const Layer& layer_;
  const std::string& file_;
};

constexpr std::array kPatterns = {std::pair{"latency", Pattern::latency},
                                  std::pair{"bandwidth", Pattern::bandwidth},
                                  std::pair{"message_rate", Pattern::message_rate}};
constexpr std::array kDirections = {std::pair{"uni", Direction::uni},
                                    std::pair{"bi", Direction::bi}};
constexpr std::array kWindowModes = {std::pair{"streaming", WindowMode::streaming},
                                     std::pair{"window_ack", WindowMode::window_ack}};
constexpr std::array kCompletions = {std::pair{"poll", CompletionMode::poll},
                                     std::pair{"event", CompletionMode::event}};
constexpr std::array kOps = {std::pair{"send", Op::send},           std::pair{"write", Op::write},
                             std::pair{"write_imm", Op::write_imm}, std::pair{"read", Op::read},
                             std::pair{"fetch_add", Op::fetch_add}, std::pair{"cswap", Op::cswap}};

// ---------------------------------------------------------------- presets

/// The anchors' choices (docs/reference/anchors.md §2), so numbers can be
/// cross-checked against those tools on the same machine.
Layer preset_values(const std::string& preset, Pattern pattern, Op op, int line) {
  Layer p;
  auto set = [&](const char* key, const std::string& value) { p[key] = Value{value, line, false}; };
  const bool latency = pattern == Pattern::latency;
  if (preset == "perftest") {
    // perftest: ib_*_lat tx depth 1, 1000 iterations, no warm-up, inline
    // 220 B, send latency signals every cq_mod (100) sends; ib_*_bw tx depth
    // 128, cq_mod 100, rx depth 512, 5000 iterations for write, else 1000.
    if (latency) {
      set("window", "1");
      set("iterations", "1000");
      set("warmup", "0");
      set("inline", "220");
      if (op == Op::send) set("signal_every", "100");
    } else {
      set("window", "128");
      set("signal_every", "100");
      set("cq_moderation", "16");
      set("rx_depth", "512");
      set("rx_replenish", "1");
      set("iterations", op == Op::write ? "5000" : "1000");
      set("warmup", "0");
      set("window_mode", "streaming");
      set("inline", "220");
    }
  } else if (preset == "osu") {
    // OSU: osu_latency 10000 iterations after 200 warm-up; osu_bw windows of
    // 64 non-blocking sends, wait for all, 1-byte ack; 100 iterations, 10 skipped.
    if (latency) {
      set("window", "1");
      set("iterations", "10000");
      set("warmup", "200");
    } else {
      set("window_mode", "window_ack");
      set("window", "64");
      set("signal_every", "1");
      set("cq_moderation", "1");
      set("iterations", "6400");  // 100 windows of 64
      set("warmup", "640");       // 10 windows
    }
  } else if (preset == "itperf") {
    // itperf over the IT-API: a window of 16 buffers, a send completion every
    // half window, the receive queue replenished on every message, polling.
    set("window", latency ? "1" : "16");
    set("signal_every", latency ? "1" : "8");
    set("rx_replenish", "1");
    set("completion", "poll");
    set("iterations", "1000");
  }
  return p;
}

// ---------------------------------------------------------------- flows

FlowSpec build_flow(const Reader& r, bool multi_flow) {
  FlowSpec f;
  if (!r.has("op"))
    r.fail("op",
           "missing: every test needs an op (send, write, write_imm, read, fetch_add, cswap)");
  f.op = r.choice("op", kOps);
  f.pattern = r.choice("pattern", kPatterns);
  f.direction = r.choice("direction", kDirections);
  f.window = r.count("window");
  f.window_mode = r.choice("window_mode", kWindowModes);
  f.completion = r.choice("completion", kCompletions);
  f.post_list = r.count("post_list");
  f.endpoints = r.count("endpoints");
  f.inline_size = r.count("inline", 0);
  f.validate = r.boolean("validate");
  f.rx_replenish = r.count("rx_replenish");

  const bool latency = f.pattern == Pattern::latency;
  if (latency && f.window != 1) r.fail("window", "latency is a ping-pong: the window must be 1");
  if (latency && f.direction == Direction::bi)
    r.fail("direction", "latency is a ping-pong: direction must be uni");
  if (latency && f.window_mode == WindowMode::window_ack) {
    r.fail("window_mode", "window_ack applies to bandwidth and message_rate, not latency");
  }
  const std::uint32_t default_signal = latency ? 1 : std::max(1u, f.window / 2);
  f.signal_every = r.has("signal_every") ? r.count("signal_every") : default_signal;
  if (!latency && f.signal_every > f.window) {
    r.fail("signal_every", "must not exceed the window (" + std::to_string(f.window) + ")");
  }
  if (f.window % f.post_list != 0) {
    r.fail("post_list",
           "the window (" + std::to_string(f.window) + ") must be a multiple of post_list");
  }
  if (f.signal_every % f.post_list != 0) {
    r.fail("post_list",
           "signal_every (" + std::to_string(f.signal_every) + ") must be a multiple of post_list");
  }
  f.cq_moderation = r.has("cq_moderation") ? r.count("cq_moderation")
                                           : std::max(1u, f.window / std::max(1u, f.signal_every));
  f.rx_depth = r.has("rx_depth") ? r.count("rx_depth") : std::max(2 * f.window, 64u);
  if (f.rx_replenish > f.rx_depth) {
    r.fail("rx_replenish", "must not exceed rx_depth (" + std::to_string(f.rx_depth) + ")");
  }
  (void)multi_flow;
  return f;
}

Layer builtin_defaults(Pattern pattern, int line) {
  Layer d;
  auto set = [&](const char* key, const char* value) { d[key] = Value{value, line, false}; };
  set("pattern", "latency");
  set("direction", "uni");
  set("window_mode", "streaming");
  set("completion", "poll");
  set("post_list", "1");
  set("endpoints", "1");
  set("inline", "0");
  set("validate", "false");
  set("rx_replenish", "1");
  switch (pattern) {
    case Pattern::latency:
      set("window", "1");
      set("iterations", "1000");
      set("warmup", "100");
      break;
    case Pattern::bandwidth:
      set("window", "64");
      set("iterations", "5000");
      set("warmup", "200");
      break;
    case Pattern::message_rate:
      set("window", "64");
      set("iterations", "20000");
      set("warmup", "1000");
      break;
  }
  return d;
}

std::vector<std::uint64_t> parse_sizes(const YAML::Node& node, const std::string& file) {
  std::vector<std::uint64_t> sizes;
  auto add = [&](const YAML::Node& item) {
    if (!item.IsScalar())
      throw SpecError(file, line_of(item), "sizes", "expected a size or a range");
    try {
      for (auto s : parse_size_range(item.Scalar())) sizes.push_back(s);
    } catch (const std::invalid_argument& e) {
      throw SpecError(file, line_of(item), "sizes", e.what());
    }
  };
  if (node.IsSequence()) {
    for (const auto& item : node) add(item);
  } else {
    add(node);
  }
  if (sizes.empty()) throw SpecError(file, line_of(node), "sizes", "no sizes given");
  for (auto s : sizes) {
    if (s == 0 || s > kMaxMessageSize) {
      throw SpecError(file, line_of(node), "sizes",
                      "size " + std::to_string(s) + " is outside 1 B .. 1 GiB");
    }
  }
  return sizes;
}

bool is_atomic(Op op) {
  return op == Op::fetch_add || op == Op::cswap;
}

}  // namespace

SpecError::SpecError(std::string file_, int line_, std::string key_, const std::string& message)
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": " + key_ + ": " + message),
      file(std::move(file_)),
      line(line_),
      key(std::move(key_)) {}

// ---------------------------------------------------------------- tests

TestSpec parse_test(const YAML::Node& node, const std::string& file, const YAML::Node& defaults) {
  if (!node.IsMap()) throw SpecError(file, line_of(node), "tests", "each test must be a mapping");
  std::vector<std::string> known = kTestOnlyKeys;
  known.insert(known.end(), kFlowKeys.begin(), kFlowKeys.end());
  check_keys(node, known, file, "a test");

  TestSpec test;
  test.source_line = static_cast<std::uint32_t>(line_of(node));
  if (!node["name"])
    throw SpecError(file, line_of(node), "name", "missing: every test needs a name");
  test.name = node["name"].Scalar();
  if (test.name.empty() ||
      test.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos) {
    throw SpecError(file, line_of(node["name"]), "name",
                    "use letters, digits, '_', '.' and '-' only");
  }

  // Explicit keys: suite defaults, then the test's own.
  Layer explicit_keys;
  overlay(explicit_keys, defaults, known, file);
  overlay(explicit_keys, node, known, file);

  const Reader explicit_reader(explicit_keys, file);
  const Pattern pattern = explicit_keys.count("pattern")
                              ? explicit_reader.choice("pattern", kPatterns)
                              : Pattern::latency;
  // The preset's values depend on the op; an absent op is reported below.
  const Op op = explicit_keys.count("op") ? explicit_reader.choice("op", kOps) : Op::send;

  Layer layer = builtin_defaults(pattern, test.source_line);
  if (explicit_keys.count("preset")) {
    test.preset = explicit_keys["preset"].text;
    if (test.preset != "perftest" && test.preset != "osu" && test.preset != "itperf") {
      explicit_reader.fail(
          "preset", "unknown preset '" + test.preset + "'; expected one of: perftest, osu, itperf");
    }
    for (auto& [key, value] :
         preset_values(test.preset, pattern, op, explicit_keys["preset"].line)) {
      layer[key] = value;
    }
  }
  for (auto& [key, value] : explicit_keys) layer[key] = value;
  const Reader r(layer, file);

  // How long.
  if (r.explicit_("iterations") && r.explicit_("duration")) {
    r.fail("duration", "give iterations or duration, not both");
  }
  if (r.has("duration")) {
    test.duration.seconds = r.seconds("duration");
    if (test.duration.seconds <= 0) r.fail("duration", "must be positive");
    test.duration.iterations = 0;
  } else {
    test.duration.iterations = r.count("iterations");
  }
  if (r.has("margin")) {
    if (!r.has("duration")) r.fail("margin", "margin applies to duration mode only");
    test.duration.margin = r.seconds("margin");
  }
  test.duration.warmup_iterations = r.count("warmup", 0);

  // What.
  if (node["flows"] || (defaults && defaults.IsMap() && defaults["flows"])) {
    const YAML::Node flows = node["flows"] ? node["flows"] : defaults["flows"];
    if (!flows.IsSequence() || flows.size() == 0) {
      throw SpecError(file, line_of(flows), "flows", "expected a non-empty list of flows");
    }
    for (const auto& flow_node : flows) {
      require_map(flow_node, file, "flows");
      check_keys(flow_node, kFlowKeys, file, "a flow");
      Layer flow_layer = layer;
      overlay(flow_layer, flow_node, kFlowKeys, file);
      test.flows.push_back(build_flow(Reader(flow_layer, file), true));
    }
  } else {
    test.flows.push_back(build_flow(r, false));
  }

  // Sizes.
  const YAML::Node sizes = node["sizes"]
                               ? node["sizes"]
                               : (defaults && defaults.IsMap() ? defaults["sizes"] : YAML::Node());
  const Op first_op = test.flows.front().op;
  if (sizes) {
    test.sizes = parse_sizes(sizes, file);
  } else if (is_atomic(first_op)) {
    test.sizes = {8};
  } else {
    test.sizes = {pattern == Pattern::latency ? (test.preset == "perftest" ? 2u : 8u) : 65536u};
  }
  for (const auto& flow : test.flows) {
    if (is_atomic(flow.op) && (test.sizes.size() != 1 || test.sizes.front() != 8)) {
      throw SpecError(file, sizes ? line_of(sizes) : test.source_line, "sizes",
                      "atomics operate on 8 bytes: sizes must be [8]");
    }
  }
  return test;
}

// ---------------------------------------------------------------- suites

engine::SuiteSpec parse_suite(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap())
    throw SpecError(file, 1, "suite", "a suite file is a mapping with suite: and tests:");
  check_keys(root, {"suite", "description", "defaults", "tests"}, file, "a suite");
  engine::SuiteSpec suite;
  suite.file = file;
  suite.content_hash = sha256_hex(text);
  if (!root["suite"]) throw SpecError(file, 1, "suite", "missing: name the suite (suite: NAME)");
  suite.name = root["suite"].Scalar();
  if (root["description"]) suite.description = root["description"].Scalar();
  const YAML::Node defaults = root["defaults"];
  if (defaults) {
    require_map(defaults, file, "defaults");
    std::vector<std::string> known = kTestOnlyKeys;
    known.insert(known.end(), kFlowKeys.begin(), kFlowKeys.end());
    known.erase(std::find(known.begin(), known.end(), "name"));
    check_keys(defaults, known, file, "defaults");
  }
  const YAML::Node tests = root["tests"];
  if (!tests || !tests.IsSequence() || tests.size() == 0) {
    throw SpecError(file, tests ? line_of(tests) : 1, "tests",
                    "a suite needs a non-empty list of tests");
  }
  std::set<std::string> names;
  for (const auto& node : tests) {
    TestSpec test = parse_test(node, file, defaults);
    if (!names.insert(test.name).second) {
      throw SpecError(file, line_of(node["name"]), "name",
                      "duplicate test name '" + test.name + "'");
    }
    suite.tests.push_back(std::move(test));
  }
  return suite;
}

engine::SuiteSpec load_suite(const std::string& path) {
  return parse_suite(read_file(path), path);
}

// ---------------------------------------------------------------- configs

engine::ConfigSpec parse_config(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap())
    throw SpecError(file, 1, "plugin", "a config file is a mapping with plugin:");
  check_keys(root, {"name", "plugin", "description", "options", "env"}, file, "a config");
  engine::ConfigSpec config;
  config.file = file;
  config.content_hash = sha256_hex(text);
  config.name = root["name"] ? root["name"].Scalar() : std::filesystem::path(file).stem().string();
  if (!root["plugin"]) throw SpecError(file, 1, "plugin", "missing: name the plugin (plugin: ucx)");
  config.plugin = root["plugin"].Scalar();
  for (const char* section : {"options", "env"}) {
    const YAML::Node map = root[section];
    if (!map || map.IsNull()) continue;
    require_map(map, file, section);
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (!it->second.IsScalar()) {
        throw SpecError(file, line_of(it->second), std::string(section) + "." + key,
                        "expected a single value");
      }
      if (std::string(section) == "options") {
        config.options[key] = it->second.Scalar();
        config.option_lines[key] = static_cast<std::uint32_t>(line_of(it->first));
      } else {
        config.environment[key] = it->second.Scalar();
      }
    }
  }
  return config;
}

engine::ConfigSpec load_config(const std::string& path) {
  return parse_config(read_file(path), path);
}

Options validate_options(const engine::ConfigSpec& config, const std::vector<OptionSpec>& specs) {
  std::map<std::string, std::string> values;
  std::vector<std::string> names;
  for (const auto& s : specs) {
    values[s.name] = s.default_value;
    names.push_back(s.name);
  }
  for (const auto& [key, text] : config.options) {
    const auto line =
        config.option_lines.count(key) ? static_cast<int>(config.option_lines.at(key)) : 0;
    const auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return s.name == key; });
    if (spec == specs.end()) {
      throw SpecError(config.file, line, "options." + key,
                      "plugin '" + config.plugin + "' has no such option" + suggestion(key, names) +
                          "; its options: " + (names.empty() ? "none" : join(names)));
    }
    bool ok = true;
    switch (spec->type) {
      case OptionType::string:
        break;
      case OptionType::integer: {
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        ok = ec == std::errc() && end == text.data() + text.size();
        break;
      }
      case OptionType::boolean:
        ok = text == "true" || text == "false" || text == "yes" || text == "no" || text == "on" ||
             text == "off" || text == "1" || text == "0";
        break;
      case OptionType::size:
        ok = parse_size(text).has_value();
        break;
    }
    if (!ok) {
      const char* expected[] = {"text", "a whole number", "true or false", "a size such as 64K"};
      throw SpecError(config.file, line, "options." + key,
                      "expected " + std::string(expected[static_cast<int>(spec->type)]) +
                          ", got '" + text + "'");
    }
    values[key] = text;
  }
  return Options(std::move(values));
}

// ---------------------------------------------------------------- scalars

std::vector<std::uint64_t> parse_size_range(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  const auto dots = text.find("..");
  auto size_of = [&](std::string_view s) {
    const auto v = parse_size(trim(s));
    if (!v) throw std::invalid_argument("'" + std::string(s) + "' is not a size (64, 4K, 1M)");
    return *v;
  };
  if (dots == std::string_view::npos) return {size_of(text)};
  const std::uint64_t from = size_of(text.substr(0, dots));
  std::string_view rest = text.substr(dots + 2);
  const auto space = rest.find(' ');
  const std::uint64_t to = size_of(rest.substr(0, space));
  std::string_view step = space == std::string_view::npos ? "x2" : trim(rest.substr(space));
  if (from == 0 || from > to)
    throw std::invalid_argument("a range goes from a size up to a larger one");
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    throw std::invalid_argument("a range step is xFACTOR or +INCREMENT, e.g. '2..8M x2'");
  }
  const std::uint64_t by = size_of(step.substr(1));
  if (by == 0 || (step[0] == 'x' && by < 2))
    throw std::invalid_argument("the range step must make progress");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t s = from; s <= to; s = step[0] == 'x' ? s * by : s + by) {
    sizes.push_back(s);
    if (sizes.size() > 4096) throw std::invalid_argument("a range of more than 4096 sizes");
  }
  return sizes;
}

double parse_seconds(std::string_view text) {
  double scale = 1;
  if (text.ends_with("ms")) {
    scale = 1e-3;
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
  } else if (text.ends_with("m")) {
    scale = 60;
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    throw std::invalid_argument("expected a time such as 2s, 500ms or 1.5, got '" +
                                std::string(text) + "'");
  }
  return value * scale;
}

std::string sha256_hex(std::string_view bytes) {
  static constexpr std::uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string message(bytes);
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  message.push_back(static_cast<char>(0x80));
  while (message.size() % 64 != 56) message.push_back('\0');
  for (int i = 7; i >= 0; --i) message.push_back(static_cast<char>((bits >> (i * 8)) & 0xff));
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (std::size_t chunk = 0; chunk < message.size(); chunk += 64) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(message.data() + chunk + i * 4);
      w[i] = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
             (std::uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 =
          (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  char hex[65];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + i * 8, 9, "%08x", h[i]);
  return std::string(hex, 64);
}

}  // namespace uniperf::suite
