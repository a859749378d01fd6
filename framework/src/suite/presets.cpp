#include "suite/presets.hpp"

namespace uniperf::suite {

using model::Pattern;

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"perftest", "osu", "itperf"};
  return names;
}

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
std::vector<std::uint64_t> default_sizes(Op op, Pattern pattern, const std::string& preset) {
  if (op == Op::fetch_add || op == Op::cswap) return {8};
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

}  // namespace uniperf::suite
