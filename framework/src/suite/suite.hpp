// Suites (what to measure, provider-neutral) and configs (which plugin, with
// which options) in YAML, parsed into the engine's model with every default
// resolved. Every error names the file, the 1-based line and the key.
//
// Suite format (suites/quick.yaml is a commented example):
//
//   suite: quick                 # name (required)
//   description: ...             # optional
//   defaults:                    # optional: any test key but name, applied under every test
//     iterations: 1000
//     validate: true
//   tests:                       # required, at least one
//     - name: send_lat           # required, unique, [A-Za-z0-9_.-]+
//       preset: perftest         # optional: perftest | osu | itperf
//       op: send                 # send write write_imm read fetch_add cswap (required)
//       pattern: latency         # latency | bandwidth | message_rate
//       direction: uni           # uni | bi (latency: uni only)
//       sizes: [8, 4K, 64K]      # list of sizes, or a range "2..8M x2" / "1K..64K +1K";
//                                # 1 B .. 1 GiB; atomics: [8] only (their default)
//       iterations: 1000         # operations per endpoint, XOR ...
//       duration: 2s             # "2s", "500ms", or a number of seconds
//       margin: 0.5s             # duration mode: seconds excluded at both ends
//       warmup: 100              # warm-up iterations
//       window: 64               # ops in flight per endpoint (latency: 1)
//       window_mode: streaming   # streaming | window_ack (not for latency)
//       signal_every: 32         # a completion every N posts; 0 or absent: max(1, window/2);
//                                # <= window, except in latency (perftest's send latency: 100)
//       cq_moderation: 16        # completions per poll / wake-up; absent: window/signal_every
//       completion: poll         # poll | event
//       rx_depth: 512            # receives pre-posted; 0 or absent: max(2 * window, 64)
//       rx_replenish: 1          # re-post receives in batches of N (<= rx_depth)
//       post_list: 1             # requests per post call; divides window and signal_every
//       inline: 0                # payloads up to this many bytes posted inline
//       endpoints: 1             # endpoints (QPs) per flow
//       validate: false          # fill and check payload patterns
//       buffers: cycle           # cycle (a window-sized ring of slots, perftest) |
//                                # single (one slot reused, ucx_perftest / OSU)
//       flows:                   # optional: several concurrent flows, each taking the
//         - {op: write, pattern: bandwidth, window: 64}   # flow keys (op .. validate)
//
// Precedence: built-in defaults < preset < suite defaults < test keys < flow
// keys. Without `flows:` the test's own flow keys make its single flow. Sizes
// and the run length (iterations / duration / margin / warmup) belong to the
// test and are shared by its flows. Where `defaults:` give one of iterations
// and duration and a test the other, the test's choice wins; both at one level
// is an error.
//
// Built-in defaults: pattern latency, direction uni, window_mode streaming,
// completion poll, post_list 1, endpoints 1, inline 0, validate false,
// rx_replenish 1; latency: window 1, 1000 iterations, 100 warm-up, size 8;
// bandwidth: window 64, 5000 iterations, 200 warm-up, size 64K; message_rate:
// window 64, 20000 iterations, 1000 warm-up, size 8.
//
// Config format:
//
//   name: ucx-shm                # optional; default: the file's stem
//   plugin: ucx                  # required
//   description: ...             # optional
//   options:                     # checked by validate_options() against the plugin's
//     transports: posix,self     # declared OptionSpecs
//   env:                         # environment set before the plugin opens
//     UCX_RNDV_THRESH: 8K
//
// In options and env values, ${config_dir} stands for the absolute directory
// of the config file (dat_conf: ${config_dir}/udapl-rxe.dat.conf).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <uniperf/plugin.hpp>
#include <vector>

#include "model/suite_spec.hpp"

namespace uniperf::suite {

/// A problem in a suite or config file. what() is "FILE:LINE: KEY: message"
/// (LINE 1-based; 0 when the node came from no file, e.g. the command line).
struct SpecError : std::runtime_error {
  SpecError(std::string file_, int line_, std::string key_, const std::string& message);
  std::string file;
  int line;
  std::string key;
};

/// Reads a suite file; content_hash is the SHA-256 of its bytes.
model::SuiteSpec load_suite(const std::string& path);
model::SuiteSpec parse_suite(const std::string& yaml_text, const std::string& file_label);
/// Reads a config file; content_hash is the SHA-256 of its bytes.
model::ConfigSpec load_config(const std::string& path);
model::ConfigSpec parse_config(const std::string& yaml_text, const std::string& file_label);

/// One test from a YAML mapping node: the suite parser's unit, and the CLI's
/// one-off form (`uniperf lat --op write -s 64`), which builds the node from
/// flags. `defaults` is the suite's `defaults:` mapping, if any.
model::TestSpec parse_test(const YAML::Node& node, const std::string& file_label,
                           const YAML::Node* defaults = nullptr);

/// Checks a config's options against what the plugin declares and fills in
/// the defaults. An unknown key or a value that does not parse as its
/// OptionType throws SpecError naming file, line and "options.KEY".
Options validate_options(const model::ConfigSpec& config, const std::vector<OptionSpec>& specs);

/// "2..8M x2" (geometric), "1K..64K +1K" (arithmetic), "2..8M" (x2), or one
/// size. Throws std::invalid_argument.
std::vector<std::uint64_t> parse_size_range(std::string_view text);

/// Seconds from "2s", "500ms", "1m" or a plain number of seconds ("1.5").
/// Throws std::invalid_argument.
double parse_seconds(std::string_view text);

/// The enum names of test_spec.hpp (the inverse of model::to_string);
/// nullopt for an unknown name. Ops: uniperf::parse_op.
std::optional<model::Pattern> parse_pattern(std::string_view name);
std::optional<model::Direction> parse_direction(std::string_view name);
std::optional<model::WindowMode> parse_window_mode(std::string_view name);
std::optional<model::CompletionMode> parse_completion_mode(std::string_view name);
std::optional<model::BufferMode> parse_buffer_mode(std::string_view name);

/// Content hash the handshake compares: SHA-256, lower-case hex.
std::string sha256_hex(std::string_view bytes);

}  // namespace uniperf::suite
