// Suites (what to measure, provider-neutral) and configs (which plugin, with
// which options) in YAML, parsed into the engine's model with every default
// resolved. Every error names the file, the line and the key.
//
// Suite format:
//
//   suite: quick                 # name (required)
//   description: ...             # optional
//   defaults:                    # optional: any test key but name, under every test
//     iterations: 1000
//   tests:
//     - name: send_lat           # required, unique
//       preset: perftest         # perftest | osu | itperf (optional)
//       op: send                 # send write write_imm read fetch_add cswap
//       pattern: latency         # latency | bandwidth | message_rate
//       direction: uni           # uni | bi
//       sizes: [8, 4K, 64K]      # list, or a range "2..8M x2" / "1K..8K +1K"
//       iterations: 1000         # or duration: 2s (+ margin: 0.5s)
//       warmup: 100
//       window: 64               # ops in flight per endpoint
//       window_mode: streaming   # streaming | window_ack
//       signal_every: 32         # default: half the window
//       cq_moderation: 16        # completions per poll / wake-up
//       completion: poll         # poll | event
//       rx_depth: 512
//       rx_replenish: 1
//       post_list: 1
//       inline: 0
//       endpoints: 1
//       validate: false
//       flows: [ {op: write, pattern: bandwidth}, ... ]   # several concurrent flows
//
// Precedence: built-in defaults < preset < suite defaults < test keys < flow keys.
//
// Config format:
//
//   name: ucx-shm                # optional; default: the file's stem
//   plugin: ucx                  # required
//   description: ...
//   options: {transports: posix} # checked against the plugin's declared options
//   env: {UCX_RNDV_THRESH: 8K}   # set while this config runs
#pragma once

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <uniperf/plugin.hpp>
#include <vector>

#include "engine/test_spec.hpp"

namespace uniperf::suite {

/// what() is "FILE:LINE: KEY: message".
struct SpecError : std::runtime_error {
  SpecError(std::string file_, int line_, std::string key_, const std::string& message);
  std::string file;
  int line;
  std::string key;
};

engine::SuiteSpec load_suite(const std::string& path);
engine::SuiteSpec parse_suite(const std::string& yaml_text, const std::string& file_label);
engine::ConfigSpec load_config(const std::string& path);
engine::ConfigSpec parse_config(const std::string& yaml_text, const std::string& file_label);

/// One test from a mapping node (the suite parser's unit, and the CLI's
/// one-off form, which builds the node from flags).
engine::TestSpec parse_test(const YAML::Node& node, const std::string& file_label,
                            const YAML::Node& defaults = YAML::Node());

/// Checks a config's options against what the plugin declares and fills in
/// the defaults. Unknown keys and ill-typed values name file, line and key.
Options validate_options(const engine::ConfigSpec& config, const std::vector<OptionSpec>& specs);

/// "2..8M x2" (geometric), "1K..8K +1K" (arithmetic), or one size.
/// Throws std::invalid_argument.
std::vector<std::uint64_t> parse_size_range(std::string_view text);

/// Seconds from "2s", "500ms", "1.5" (seconds). Throws std::invalid_argument.
double parse_seconds(std::string_view text);

/// Content hash the handshake compares (SHA-256, hex).
std::string sha256_hex(std::string_view bytes);

}  // namespace uniperf::suite
