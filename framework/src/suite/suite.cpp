#include "suite/suite.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "suite/option_values.hpp"

namespace uniperf::suite {
namespace {

using model::CompletionMode;
using model::Direction;
using model::FlowSpec;
using model::Pattern;
using model::TestSpec;
using model::WindowMode;

constexpr std::uint64_t kMaxMessageSize = std::uint64_t{1} << 30;
constexpr std::size_t kMaxRangeSizes = 4096;

const std::vector<std::string> kFlowKeys = {
    "op",           "pattern",       "direction",  "window",   "window_mode",
    "signal_every", "cq_moderation", "completion", "rx_depth", "rx_replenish",
    "post_list",    "inline",        "endpoints",  "validate", "buffers"};
const std::vector<std::string> kTestOnlyKeys = {
    "name", "preset", "sizes", "iterations", "duration", "margin", "warmup", "flows", "trials"};
const std::vector<std::string> kPresets = {"perftest", "osu", "itperf"};

std::vector<std::string> test_keys() {
  std::vector<std::string> keys = kTestOnlyKeys;
  keys.insert(keys.end(), kFlowKeys.begin(), kFlowKeys.end());
  return keys;
}

std::vector<std::string> defaults_keys() {
  std::vector<std::string> keys = test_keys();
  keys.erase(std::find(keys.begin(), keys.end(), "name"));
  return keys;
}

constexpr std::array kAllOps = {Op::send, Op::write,     Op::write_imm,
                                Op::read, Op::fetch_add, Op::cswap};
constexpr std::array kAllPatterns = {Pattern::latency, Pattern::bandwidth, Pattern::message_rate};
constexpr std::array kAllDirections = {Direction::uni, Direction::bi};
constexpr std::array kAllWindowModes = {WindowMode::streaming, WindowMode::window_ack};
constexpr std::array kAllCompletions = {CompletionMode::poll, CompletionMode::event};
constexpr std::array kAllBufferModes = {model::BufferMode::cycle, model::BufferMode::single};

template <class Enum, std::size_t N>
std::optional<Enum> by_name(std::string_view name, const std::array<Enum, N>& all) {
  for (const Enum value : all) {
    if (to_string(value) == name) return value;
  }
  return std::nullopt;
}

bool is_atomic(Op op) {
  return op == Op::fetch_add || op == Op::cswap;
}

// ---------------------------------------------------------------- messages

int line_of(const YAML::Node& node) {
  // Nodes built in code (the CLI's one-off test) have no mark: line 0.
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

/// Edits (insert, delete, substitute, swap two neighbours) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

/// True when `word` is `candidate` with letters left out ("opts", "sig").
bool abbreviates(std::string_view word, std::string_view candidate) {
  if (word.size() < 3) return false;
  std::size_t matched = 0;
  for (const char c : candidate) {
    if (matched < word.size() && word[matched] == c) ++matched;
  }
  return matched == word.size();
}

/// " (did you mean 'x'?)" for the closest known word within two edits, else
/// for a word the typed one abbreviates; "" when nothing is close.
std::string suggestion(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  // Two edits at most, and no more than half the word ("id" is not "op").
  std::size_t best_distance = std::min<std::size_t>(2, word.size() / 2) + 1;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty()) {
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const std::string& k) { return abbreviates(word, k); });
    if (it != known.end()) best = *it;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string read_whole_file(const std::string& path) {
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

std::string key_text(const YAML::Node& key, const std::string& file) {
  if (!key.IsScalar()) throw SpecError(file, line_of(key), "?", "a key must be a plain word");
  return key.Scalar();
}

std::string scalar(const YAML::Node& value, const std::string& file, const std::string& key) {
  if (!value.IsScalar()) throw SpecError(file, line_of(value), key, "expected a single value");
  return value.Scalar();
}

/// Checks every key of a mapping against `known`, and that none repeats
/// (yaml-cpp keeps both and `node[key]` would silently pick the first).
void check_keys(const YAML::Node& node, const std::vector<std::string>& known,
                const std::string& file, const std::string& where) {
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = key_text(it->first, file);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw SpecError(
          file, line_of(it->first), key,
          "unknown key in " + where + suggestion(key, known) + "; known keys: " + join(known));
    }
    if (!seen.insert(key).second) {
      throw SpecError(file, line_of(it->first), key, "given twice in " + where);
    }
  }
}

// ---------------------------------------------------------------- layers

/// Where a value came from, lowest precedence first.
enum class Level : std::uint8_t { builtin, preset, defaults, test, flow };

struct Value {
  std::string text;
  int line = 0;
  Level level = Level::builtin;
};
using Layer = std::map<std::string, Value>;

/// Lays a mapping's scalar keys from `keys` over `layer`. Structured keys
/// (sizes, flows) are read apart.
void overlay(Layer& layer, const YAML::Node* node, const std::vector<std::string>& keys,
             Level level, const std::string& file) {
  if (node == nullptr || !*node || !node->IsMap()) return;
  for (auto it = node->begin(); it != node->end(); ++it) {
    const std::string key = key_text(it->first, file);
    if (key == "sizes" || key == "flows" || key == "name") continue;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    layer[key] = Value{scalar(it->second, file, key), line_of(it->second), level};
  }
}

/// Typed reads of one resolved layer; failures name the value's line.
class Reader {
 public:
  Reader(const Layer& layer, const std::string& file) : layer_(layer), file_(file) {}

  bool has(const std::string& key) const { return layer_.count(key) != 0; }
  Level level(const std::string& key) const { return layer_.at(key).level; }
  int line(const std::string& key) const {
    auto it = layer_.find(key);
    return it == layer_.end() ? 0 : it->second.line;
  }
  const std::string& text(const std::string& key) const { return layer_.at(key).text; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw SpecError(file_, line(key), key, message);
  }

  std::uint32_t count(const std::string& key, std::uint32_t minimum = 1) const {
    const std::uint64_t value = whole_number(key, UINT32_MAX);
    if (value < minimum) fail(key, "must be at least " + std::to_string(minimum));
    return static_cast<std::uint32_t>(value);
  }

  std::uint64_t whole_number(const std::string& key, std::uint64_t maximum) const {
    const std::string& value_text = text(key);
    std::uint64_t value = 0;
    const auto [end, ec] =
        std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc() || end != value_text.data() + value_text.size()) {
      fail(key, "expected a whole number, got '" + value_text + "'");
    }
    if (value > maximum) fail(key, "must be at most " + std::to_string(maximum));
    return value;
  }

  bool boolean(const std::string& key) const {
    std::string value = text(key);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "true" || value == "yes" || value == "on") return true;
    if (value == "false" || value == "no" || value == "off") return false;
    fail(key, "expected true or false, got '" + text(key) + "'");
  }

  double seconds(const std::string& key) const {
    try {
      return parse_seconds(text(key));
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }

  template <class Enum, std::size_t N>
  Enum choice(const std::string& key, const std::array<Enum, N>& all) const {
    if (auto value = by_name(text(key), all)) return *value;
    std::vector<std::string> names;
    for (const Enum value : all) names.emplace_back(to_string(value));
    fail(key, "unknown value '" + text(key) + "'" + suggestion(text(key), names) +
                  "; expected one of: " + join(names));
  }

 private:
  const Layer& layer_;
  const std::string& file_;
};

// ---------------------------------------------------------------- defaults

Layer builtin_defaults(Pattern pattern, int line) {
  Layer d;
  auto set = [&](const char* key, const char* value) {
    d[key] = Value{value, line, Level::builtin};
  };
  set("pattern", std::string(to_string(pattern)).c_str());
  set("direction", "uni");
  set("window_mode", "streaming");
  set("completion", "poll");
  set("post_list", "1");
  set("endpoints", "1");
  set("inline", "0");
  set("validate", "false");
  set("buffers", "cycle");
  set("rx_replenish", "1");
  set("trials", "1");
  // signal_every, cq_moderation and rx_depth are derived from the window
  // once it is known (build_flow).
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

/// The anchors' choices (docs/reference/anchors.md §2), so a number can be
/// cross-checked against that tool on the same machine.
Layer preset_values(const std::string& preset, Pattern pattern, Op op, int line) {
  Layer p;
  auto set = [&](const char* key, const char* value) {
    p[key] = Value{value, line, Level::preset};
  };
  const bool latency = pattern == Pattern::latency;
  if (preset == "perftest") {
    if (latency) {
      // ib_*_lat (§2.1): tx depth 1, 1000 iterations, no warm-up; write and
      // send post inline up to 220 B (DEF_INLINE_WRITE; the engine clamps it
      // to the plugin's max_inline), read and atomics never inline; send
      // latency signals only every cq_mod-th (100) send.
      set("window", "1");
      set("iterations", "1000");
      set("warmup", "0");
      if (op == Op::send || op == Op::write || op == Op::write_imm) set("inline", "220");
      if (op == Op::send) set("signal_every", "100");
    } else {
      // ib_*_bw (§2.1): tx depth 128 refilled on any completion (wait-any),
      // cq_mod 100 (capped to the window in build_flow), rx depth 512 with
      // every receive re-posted, 5000 iterations for write and 1000 for the
      // rest, warm-up off by default.
      set("window", "128");
      set("window_mode", "streaming");
      set("signal_every", "100");
      set("cq_moderation", "16");
      set("rx_depth", "512");
      set("rx_replenish", "1");
      set("iterations", op == Op::write ? "5000" : "1000");
      set("warmup", "0");
    }
  } else if (preset == "osu") {
    if (latency) {
      // osu_latency (§2.4): 10000 iterations after 200 skipped.
      set("window", "1");
      set("iterations", "10000");
      set("warmup", "200");
    } else {
      // osu_bw (§2.4): windows of 64 non-blocking sends, wait for all, a
      // 1-byte ack; 100 windows measured after 10 skipped. The engine counts
      // iterations in operations, so 100 windows are 6400 of them.
      set("window_mode", "window_ack");
      set("window", "64");
      set("buffers", "single");  // one s_buf / r_buf for the whole window
      set("signal_every", "1");
      set("cq_moderation", "1");
      set("iterations", "6400");
      set("warmup", "640");
    }
  } else if (preset == "itperf") {
    // itperf over the IT-API (the HP-UX Fabric Clustering whitepaper):
    // latency posts the same buffer for the whole test and asks for a send
    // completion once every send-queue size (16 here, the bandwidth window:
    // the paper names no depth), polling (it "blocks for 0 seconds"); the
    // write latency responder polls the data buffer, as the engine's write
    // latency always does. Bandwidth keeps a window of 16 buffers registered
    // at setup, a send completion every half window, every consumed receive
    // re-posted at once. The paper gives no iteration count: 1000.
    if (latency) {
      set("window", "1");
      set("buffers", "single");
      if (op == Op::send || op == Op::write || op == Op::write_imm) set("signal_every", "16");
    } else {
      set("window", "16");
      set("buffers", "cycle");
      set("signal_every", "8");
    }
    set("rx_replenish", "1");
    set("completion", "poll");
    set("iterations", "1000");
  }
  return p;
}

// ---------------------------------------------------------------- flows

/// Resolves one flow from its layer and checks the knobs against each other.
/// `anchor_line` is reported when a required key is missing altogether.
FlowSpec build_flow(const Reader& r, int anchor_line, const std::string& file) {
  FlowSpec f;
  if (!r.has("op")) {
    throw SpecError(file, anchor_line, "op",
                    "missing: every test needs an op (send, write, write_imm, read, fetch_add, "
                    "cswap)");
  }
  f.op = r.choice("op", kAllOps);
  f.pattern = r.choice("pattern", kAllPatterns);
  f.direction = r.choice("direction", kAllDirections);
  f.window = r.count("window");
  f.window_mode = r.choice("window_mode", kAllWindowModes);
  f.completion = r.choice("completion", kAllCompletions);
  f.post_list = r.count("post_list");
  f.endpoints = r.count("endpoints");
  f.inline_size = r.count("inline", 0);
  f.validate = r.boolean("validate");
  f.buffers = r.choice("buffers", kAllBufferModes);
  f.rx_replenish = r.count("rx_replenish");

  const bool latency = f.pattern == Pattern::latency;
  if (latency && f.window != 1) r.fail("window", "latency is a ping-pong: the window must be 1");
  if (latency && f.direction == Direction::bi) {
    r.fail("direction", "latency is a ping-pong: direction must be uni");
  }
  if (latency && f.window_mode == WindowMode::window_ack) {
    r.fail("window_mode", "window_ack applies to bandwidth and message_rate, not latency");
  }

  // 0 asks for the automatic value, as if the key were absent.
  const std::uint32_t half_window = std::max(1u, f.window / 2);
  const std::uint32_t given_signal = r.has("signal_every") ? r.count("signal_every", 0) : 0;
  f.signal_every = given_signal == 0 ? half_window : given_signal;
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
  f.cq_moderation =
      r.has("cq_moderation") ? r.count("cq_moderation") : std::max(1u, f.window / f.signal_every);
  const std::uint32_t given_rx_depth = r.has("rx_depth") ? r.count("rx_depth", 0) : 0;
  f.rx_depth = given_rx_depth == 0 ? std::max(2 * f.window, 64u) : given_rx_depth;
  if (f.rx_replenish > f.rx_depth) {
    r.fail("rx_replenish", "must not exceed rx_depth (" + std::to_string(f.rx_depth) + ")");
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

std::vector<std::uint64_t> default_sizes(Op op, Pattern pattern, const std::string& preset) {
  if (is_atomic(op)) return {8};
  switch (pattern) {
    case Pattern::latency:
      return {preset == "perftest" ? 2u : 8u};  // perftest's latency default: 2 B
    case Pattern::bandwidth:
      return {65536};  // perftest's and common bandwidth default: 64 KiB
    case Pattern::message_rate:
      return {preset == "perftest" ? 65536u : 8u};
  }
  return {8};
}

}  // namespace

SpecError::SpecError(std::string file_, int line_, std::string key_, const std::string& message)
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": " + key_ + ": " + message),
      file(std::move(file_)),
      line(line_),
      key(std::move(key_)) {}

// ---------------------------------------------------------------- enum names

std::optional<Pattern> parse_pattern(std::string_view name) {
  return by_name(name, kAllPatterns);
}
std::optional<Direction> parse_direction(std::string_view name) {
  return by_name(name, kAllDirections);
}
std::optional<WindowMode> parse_window_mode(std::string_view name) {
  return by_name(name, kAllWindowModes);
}
std::optional<CompletionMode> parse_completion_mode(std::string_view name) {
  return by_name(name, kAllCompletions);
}

std::optional<model::BufferMode> parse_buffer_mode(std::string_view name) {
  return by_name(name, kAllBufferModes);
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
    if (std::find(kPresets.begin(), kPresets.end(), test.preset) == kPresets.end()) {
      throw SpecError(file, given["preset"].line, "preset",
                      "unknown preset '" + test.preset + "'" + suggestion(test.preset, kPresets) +
                          "; expected one of: " + join(kPresets));
    }
  }

  // Flows: the `flows:` list (the test's, else the defaults'), or the test itself.
  const std::optional<YAML::Node> flow_list = structured_key(node, defaults, "flows");
  std::vector<YAML::Node> flow_nodes;
  if (flow_list) {
    if (!flow_list->IsSequence() || flow_list->size() == 0) {
      throw SpecError(file, line_of(*flow_list), "flows", "expected a non-empty list of flows");
    }
    for (const auto& flow_node : *flow_list) {
      require_map(flow_node, file, "flows");
      check_keys(flow_node, kFlowKeys, file, "a flow");
      flow_nodes.push_back(flow_node);
    }
  }

  // Each flow resolves on its own ladder, because the built-in and preset
  // values depend on its pattern and op.
  std::optional<Layer> first_layer;
  auto resolve = [&](const YAML::Node* flow_node) {
    Layer flow_given = given;
    overlay(flow_given, flow_node, kFlowKeys, Level::flow, file);
    const Reader given_reader(flow_given, file);
    const Pattern pattern = flow_given.count("pattern")
                                ? given_reader.choice("pattern", kAllPatterns)
                                : Pattern::latency;
    // A missing op is reported by build_flow; send stands in for the preset.
    const Op op = flow_given.count("op") ? given_reader.choice("op", kAllOps) : Op::send;
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

  // How long, from the first flow's ladder (the run-length keys are test
  // keys, which flows do not override).
  resolve_run_length(Reader(*first_layer, file), test);

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

// ---------------------------------------------------------------- suites

model::SuiteSpec parse_suite(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap()) {
    throw SpecError(file, 1, "suite", "a suite file is a mapping with suite: and tests:");
  }
  check_keys(root, {"suite", "description", "defaults", "tests", "tolerances"}, file, "a suite");
  model::SuiteSpec suite;
  suite.file = file;
  suite.content_hash = sha256_hex(text);
  if (!root["suite"]) throw SpecError(file, 1, "suite", "missing: name the suite (suite: NAME)");
  suite.name = scalar(root["suite"], file, "suite");
  if (suite.name.empty()) throw SpecError(file, line_of(root["suite"]), "suite", "empty name");
  if (root["description"] && !root["description"].IsNull()) {
    suite.description = scalar(root["description"], file, "description");
  }

  if (const YAML::Node tolerances = root["tolerances"]; tolerances && !tolerances.IsNull()) {
    // The metrics of `uniperf compare` (report/compare.hpp; listed here too
    // because the suite model does not depend on the reporters).
    const std::vector<std::string> metrics = {"p50_us", "mean_us", "p99_us", "MB_per_s",
                                              "Mmsg_per_s"};
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
  std::set<std::string> names;
  for (const auto& node : tests) {
    TestSpec test = parse_test(node, file, defaults && defaults.IsMap() ? &defaults : nullptr);
    if (!names.insert(test.name).second) {
      throw SpecError(file, line_of(node["name"]), "name",
                      "duplicate test name '" + test.name + "'");
    }
    suite.tests.push_back(std::move(test));
  }
  return suite;
}

model::SuiteSpec load_suite(const std::string& path) {
  return parse_suite(read_whole_file(path), path);
}

// ---------------------------------------------------------------- configs

/// "${config_dir}" in a config value names the directory of the config file
/// (absolute), so a config can point at files next to it (a dat.conf) from
/// whatever directory uniperf runs in.
static std::string expand_config_dir(std::string value, const std::string& file) {
  static constexpr std::string_view kToken = "${config_dir}";
  std::size_t at = value.find(kToken);
  if (at == std::string::npos) return value;
  std::filesystem::path dir = std::filesystem::path(file).parent_path();
  if (dir.empty()) dir = ".";
  std::filesystem::path absolute = std::filesystem::absolute(dir).lexically_normal();
  if (!absolute.has_filename() && absolute.has_parent_path()) absolute = absolute.parent_path();
  const std::string replacement = absolute.string();
  for (; at != std::string::npos; at = value.find(kToken, at + replacement.size())) {
    value.replace(at, kToken.size(), replacement);
  }
  return value;
}

model::ConfigSpec parse_config(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap()) {
    throw SpecError(file, 1, "plugin", "a config file is a mapping with plugin:");
  }
  check_keys(root, {"name", "plugin", "description", "options", "env"}, file, "a config");
  model::ConfigSpec config;
  config.file = file;
  config.content_hash = sha256_hex(text);
  config.name = root["name"] ? scalar(root["name"], file, "name")
                             : std::filesystem::path(file).stem().string();
  if (!root["plugin"]) throw SpecError(file, 1, "plugin", "missing: name the plugin (plugin: ucx)");
  config.plugin = scalar(root["plugin"], file, "plugin");
  if (config.plugin.empty()) throw SpecError(file, line_of(root["plugin"]), "plugin", "empty");
  if (root["description"] && !root["description"].IsNull()) {
    scalar(root["description"], file, "description");  // not kept, but must be text
  }

  for (const std::string section : {"options", "env"}) {
    const YAML::Node map = root[section];
    if (!map || map.IsNull()) continue;
    require_map(map, file, section);
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = key_text(it->first, file);
      const std::string qualified = section + "." + key;
      if (!seen.insert(key).second) {
        throw SpecError(file, line_of(it->first), qualified, "given twice");
      }
      const std::string value = expand_config_dir(scalar(it->second, file, qualified), file);
      if (section == "options") {
        config.options[key] = value;
        config.option_lines[key] = static_cast<std::uint32_t>(line_of(it->first));
      } else {
        config.environment[key] = value;
      }
    }
  }
  return config;
}

model::ConfigSpec load_config(const std::string& path) {
  return parse_config(read_whole_file(path), path);
}

Options validate_options(const model::ConfigSpec& config, const std::vector<OptionSpec>& specs) {
  std::map<std::string, std::string> values;
  std::vector<std::string> names;
  for (const auto& spec : specs) {
    values[spec.name] = spec.default_value;
    names.push_back(spec.name);
  }
  for (const auto& [key, text] : config.options) {
    const auto line_it = config.option_lines.find(key);
    const int line = line_it == config.option_lines.end() ? 0 : static_cast<int>(line_it->second);
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&key = key](const OptionSpec& s) { return s.name == key; });
    if (spec == specs.end()) {
      throw SpecError(config.file, line, "options." + key,
                      "plugin '" + config.plugin + "' has no such option" + suggestion(key, names) +
                          "; its options: " + (names.empty() ? "none" : join(names)));
    }
    std::string value = text;
    bool ok = true;
    switch (spec->type) {
      case OptionType::string:
        break;
      case OptionType::integer: {
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
        ok = ec == std::errc() && end == text.data() + text.size();
        break;
      }
      case OptionType::boolean: {
        // Normalised, because Options::boolean() knows only the lower-case words.
        std::string lower = text;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") {
          value = "true";
        } else if (lower == "false" || lower == "no" || lower == "off" || lower == "0") {
          value = "false";
        } else {
          ok = false;
        }
        break;
      }
      case OptionType::size:
        ok = parse_size(text).has_value();
        break;
    }
    if (!ok) {
      static constexpr const char* kExpected[] = {"text", "a whole number", "true or false",
                                                  "a size such as 4096, 64K or 1M"};
      throw SpecError(config.file, line, "options." + key,
                      "expected " + std::string(kExpected[static_cast<int>(spec->type)]) +
                          ", got '" + text + "'");
    }
    check_option_value(config, line, *spec, value);
    values[key] = value;
  }
  return Options(std::move(values));
}

// ---------------------------------------------------------------- scalars

std::vector<std::uint64_t> parse_size_range(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  auto size_of = [&](std::string_view s) {
    s = trim(s);
    // parse_size() does not guard against overflow; a size beyond 2^40
    // (13 digits) is nonsense here anyway.
    const auto digits = s.find_first_not_of("0123456789");
    if ((digits == std::string_view::npos ? s.size() : digits) > 13) {
      throw std::invalid_argument("'" + std::string(s) + "' is too large");
    }
    const auto value = parse_size(s);
    if (!value) throw std::invalid_argument("'" + std::string(s) + "' is not a size (64, 4K, 1M)");
    return *value;
  };
  text = trim(text);
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return {size_of(text)};

  const std::uint64_t from = size_of(text.substr(0, dots));
  const std::string_view rest = trim(text.substr(dots + 2));
  const auto space = rest.find_first_of(" \t");
  const std::uint64_t to = size_of(rest.substr(0, space));
  const std::string_view step = space == std::string_view::npos ? "x2" : trim(rest.substr(space));
  if (from == 0 || from > to) {
    throw std::invalid_argument("a range goes from a size above 0 up to a larger one");
  }
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    throw std::invalid_argument("a range step is xFACTOR or +INCREMENT, e.g. '2..8M x2'");
  }
  const bool geometric = step[0] == 'x';
  const std::uint64_t by = size_of(step.substr(1));
  if (by == 0 || (geometric && by < 2)) {
    throw std::invalid_argument("the range step must make progress");
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = from; size <= to;) {
    sizes.push_back(size);
    if (sizes.size() > kMaxRangeSizes) {
      throw std::invalid_argument("a range of more than " + std::to_string(kMaxRangeSizes) +
                                  " sizes");
    }
    // Both operands are below 2^44, so neither step overflows 64 bits.
    size = geometric ? size * by : size + by;
  }
  return sizes;
}

double parse_seconds(std::string_view text) {
  const std::string original(text);
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
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0) {
    throw std::invalid_argument("expected a time such as 2s, 500ms or 1.5, got '" + original + "'");
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
  // Padding: a 1 bit, zeros up to 56 mod 64, then the bit length big-endian.
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
