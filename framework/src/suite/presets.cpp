#include "suite/presets.hpp"

#include <algorithm>

#include "model/flow_fields.hpp"

namespace uniperf::suite {
namespace {

using model::Pattern;

/// A pattern's own defaults, where one value does not fit all patterns.
struct PatternDefaults {
  Pattern pattern;
  const char* window;
  const char* iterations;
  const char* warmup;
  std::uint64_t size;
};

constexpr PatternDefaults kPatternDefaults[] = {
    {Pattern::latency, "1", "1000", "100", 8},
    {Pattern::bandwidth, "64", "5000", "200", 65536},
    {Pattern::message_rate, "64", "20000", "1000", 8},
};

/// Which tests a preset row applies to.
enum class Scope : std::uint8_t { latency, streaming, any };  // streaming: bandwidth and rate

/// Ops as a bit set, so a row can name the ops it is limited to.
constexpr unsigned ops(std::initializer_list<Op> list) {
  unsigned bits = 0;
  for (const Op op : list) bits |= 1u << static_cast<unsigned>(op);
  return bits;
}
constexpr unsigned kAllOps = (1u << kOpCount) - 1;
constexpr unsigned kInlineOps = ops({Op::send, Op::write, Op::write_imm});

struct PresetRow {
  const char* preset;
  Scope scope;
  const char* key;  ///< a test key, or "sizes" for the default size
  const char* value;
  unsigned only_ops = kAllOps;
};

// Each tool's own choices, so a number can be cross-checked against that
// tool on the same machine. Later rows override earlier ones.
constexpr PresetRow kPresets[] = {
    // ib_*_lat: tx depth 1, 1000 iterations, no warm-up, 2 B by default;
    // write and send post inline up to 220 B (DEF_INLINE_WRITE; the engine
    // clamps it to the plugin's max_inline), read and atomics never inline;
    // send latency signals only every cq_mod-th (100) send.
    {"perftest", Scope::latency, "window", "1"},
    {"perftest", Scope::latency, "iterations", "1000"},
    {"perftest", Scope::latency, "warmup", "0"},
    {"perftest", Scope::latency, "sizes", "2"},
    {"perftest", Scope::latency, "inline", "220", kInlineOps},
    {"perftest", Scope::latency, "signal_every", "100", ops({Op::send})},
    // ib_*_bw: tx depth 128 refilled on any completion (wait-any), cq_mod
    // 100 (capped to the window in build_flow), rx depth 512 with every
    // receive re-posted, 5000 iterations for write and 1000 for the rest,
    // warm-up off, 64 KiB messages (message rate too).
    {"perftest", Scope::streaming, "window", "128"},
    {"perftest", Scope::streaming, "window_mode", "streaming"},
    {"perftest", Scope::streaming, "signal_every", "100"},
    {"perftest", Scope::streaming, "cq_moderation", "16"},
    {"perftest", Scope::streaming, "rx_depth", "512"},
    {"perftest", Scope::streaming, "rx_replenish", "1"},
    {"perftest", Scope::streaming, "iterations", "1000"},
    {"perftest", Scope::streaming, "iterations", "5000", ops({Op::write})},
    {"perftest", Scope::streaming, "warmup", "0"},
    {"perftest", Scope::streaming, "sizes", "65536"},
    // osu_latency: 10000 iterations after 200 skipped.
    {"osu", Scope::latency, "window", "1"},
    {"osu", Scope::latency, "iterations", "10000"},
    {"osu", Scope::latency, "warmup", "200"},
    // osu_bw: windows of 64 non-blocking sends, wait for all, a 1-byte ack;
    // 100 windows measured after 10 skipped. The engine counts iterations in
    // operations, so 100 windows are 6400 of them. One s_buf / r_buf for the
    // whole window.
    {"osu", Scope::streaming, "window_mode", "window_ack"},
    {"osu", Scope::streaming, "window", "64"},
    {"osu", Scope::streaming, "buffers", "single"},
    {"osu", Scope::streaming, "signal_every", "1"},
    {"osu", Scope::streaming, "cq_moderation", "1"},
    {"osu", Scope::streaming, "iterations", "6400"},
    {"osu", Scope::streaming, "warmup", "640"},
    // itperf over the IT-API (the HP-UX Fabric Clustering whitepaper):
    // latency posts the same buffer for the whole test and asks for a send
    // completion once every send-queue size (16 here, the bandwidth window:
    // the paper names no depth), polling (it "blocks for 0 seconds"); the
    // write latency responder polls the data buffer, as the engine's write
    // latency always does. Bandwidth keeps a window of 16 buffers registered
    // at setup, a send completion every half window, every consumed receive
    // re-posted at once. The paper gives no iteration count: 1000.
    {"itperf", Scope::latency, "window", "1"},
    {"itperf", Scope::latency, "buffers", "single"},
    {"itperf", Scope::latency, "signal_every", "16", kInlineOps},
    {"itperf", Scope::streaming, "window", "16"},
    {"itperf", Scope::streaming, "buffers", "cycle"},
    {"itperf", Scope::streaming, "signal_every", "8"},
    {"itperf", Scope::any, "rx_replenish", "1"},
    {"itperf", Scope::any, "completion", "poll"},
    {"itperf", Scope::any, "iterations", "1000"},
};

bool applies(const PresetRow& row, const std::string& preset, Pattern pattern, Op op) {
  const bool latency = pattern == Pattern::latency;
  const bool in_scope = row.scope == Scope::any || (row.scope == Scope::latency) == latency;
  return row.preset == preset && in_scope && (row.only_ops >> static_cast<unsigned>(op) & 1u);
}

const PatternDefaults& defaults_of(Pattern pattern) {
  return *std::find_if(std::begin(kPatternDefaults), std::end(kPatternDefaults),
                       [&](const PatternDefaults& d) { return d.pattern == pattern; });
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> unique;
    for (const PresetRow& row : kPresets) {
      if (std::find(unique.begin(), unique.end(), row.preset) == unique.end()) {
        unique.emplace_back(row.preset);
      }
    }
    return unique;
  }();
  return names;
}

Layer builtin_defaults(Pattern pattern, int line) {
  Layer d;
  auto set = [&](std::string_view key, std::string value) {
    d[std::string(key)] = Value{std::move(value), line, Level::builtin};
  };
  // Every flow knob's default is its value in FlowSpec{}; the derived ones
  // (signal_every, cq_moderation, rx_depth) follow from the window once it
  // is known (build_flow), and op has none.
  for (const model::FlowField& field : model::kFlowFields) {
    if (!field.required && !field.derived) set(field.name, field.default_text());
  }
  set("pattern", std::string(to_string(pattern)));
  set("trials", std::to_string(model::Duration{}.trials));
  const PatternDefaults& own = defaults_of(pattern);
  set("window", own.window);
  set("iterations", own.iterations);
  set("warmup", own.warmup);
  return d;
}

Layer preset_values(const std::string& preset, Pattern pattern, Op op, int line) {
  Layer p;
  for (const PresetRow& row : kPresets) {
    if (!applies(row, preset, pattern, op) || std::string_view(row.key) == "sizes") continue;
    p[row.key] = Value{row.value, line, Level::preset};
  }
  return p;
}

std::vector<std::uint64_t> default_sizes(Op op, Pattern pattern, const std::string& preset) {
  if (op == Op::fetch_add || op == Op::cswap) return {8};
  std::uint64_t size = defaults_of(pattern).size;
  for (const PresetRow& row : kPresets) {
    if (applies(row, preset, pattern, op) && std::string_view(row.key) == "sizes") {
      size = std::stoull(row.value);
    }
  }
  return {size};
}

}  // namespace uniperf::suite
