// Suites (what to measure, provider-neutral) and configs (which plugin, with
// which options) in YAML, parsed into the engine's model with every default
// resolved. Every error names the file, the 1-based line and the key.
//
// Suite format (suites/quick.yaml is a commented example):
//
//   suite: quick                 # name (required)
//   description: ...             # optional
//   quick: {sizes: [4K], ...}    # optional: what `run --quick` sets (suite/quick.hpp)
//   defaults:                    # optional: any test key but name, applied under every test
//     iterations: 1000
//     validate: true
//   tests:                       # required, at least one
//     - name: send_lat           # required, unique, [A-Za-z0-9_.-]+
//       preset: perftest         # optional: perftest | osu | itperf
//       sizes: [8, 4K, 64K]      # list of sizes, or a range "2..8M x2" / "1K..64K +1K";
//                                # 1 B .. 1 GiB, 4096 sizes at most; atomics: [8] only
//       iterations: 1000         # operations per endpoint, XOR ...
//       duration: 2s             # "2s", "500ms", or a number of seconds
//       margin: 0.5s             # duration mode: seconds excluded at both ends
//       warmup: 100              # warm-up iterations
//       trials: 1                # times each size is measured
//       op: send                 # required; then any flow key: every one, with its
//       window: 64               # choices, default and meaning, is a row of
//       ...                      # model::kFlowFields (model/flow_fields.hpp)
//       flows:                   # optional: up to 256 concurrent flows, each taking the
//         - {op: write, pattern: bandwidth, window: 64}   # flow keys
//
// Precedence: built-in defaults < preset < suite defaults < test keys < flow
// keys. Without `flows:` the test's own flow keys make its single flow. Sizes
// and the run length (iterations / duration / margin / warmup) belong to the
// test and are shared by its flows. Where `defaults:` give one of iterations
// and duration and a test the other, the test's choice wins; both at one level
// is an error.
//
// Built-in defaults: every flow key's value in a default FlowSpec, except
// signal_every, cq_moderation and rx_depth (derived from the window) and what
// depends on the pattern: latency: window 1, 1000 iterations, 100 warm-up,
// size 8; bandwidth: window 64, 5000 iterations, 200 warm-up, size 64K;
// message_rate: window 64, 20000 iterations, 1000 warm-up, size 8
// (suite/presets.cpp holds both, and the presets).
//
// Configs: suite/config.hpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <string_view>

#include "model/suite_spec.hpp"
#include "suite/config.hpp"
#include "suite/diagnostics.hpp"
#include "suite/sha256.hpp"
#include "suite/units.hpp"

namespace uniperf::suite {

/// `fragment: auto`: the fragments a tuner chooses from, 256 B to 64 KiB by
/// powers of two (docs/pipeline.md, "Self-tuning").
inline constexpr std::uint32_t kAutoFragments[] = {256,  512,   1024,  2048, 4096,
                                                   8192, 16384, 32768, 65536};

/// `source: auto`: a pipelined sender's choices, from the message buffer or
/// through a bounce buffer (model::Source), in this order.
inline constexpr std::string_view kAutoSources[] = {"zero_copy", "staged"};

/// `inline: auto`: whether a message is posted inline (as much of it as the
/// plugin can: kInlineAsPluginAllows, capped to its max_inline) or not.
inline constexpr std::string_view kAutoInlines[] = {"off", "on"};
/// The `inline` of `inline: auto`'s "on": above every transport's
/// max_inline, so the plugin's own cap decides.
inline constexpr std::uint32_t kInlineAsPluginAllows = 1u << 20;

/// What a suite's test node leaves to the tuner: `fragment: auto`, `source:
/// auto`, `inline: auto` or several (each its own key, else the
/// `defaults:` mapping's).
struct AutoSettings {
  bool fragment = false;
  bool source = false;
  bool inlining = false;
  bool any() const { return fragment || source || inlining; }
};
AutoSettings auto_settings(const YAML::Node& test, const YAML::Node& defaults);

/// The configs a test of a suite file runs over: its `configs:`, else the
/// suite defaults' (empty: every config). Throws SpecError as the suite
/// reader does for a bad list.
std::vector<std::string> test_configs(const YAML::Node& test, const YAML::Node& defaults,
                                      const std::string& file);

/// One point of an auto test's sweep, and a tuner's choice for a size: the
/// fragment (0: not swept), the source and the inline choice ("": not
/// swept).
struct TunedSetting {
  std::uint32_t fragment = 0;
  std::string source;
  std::string inlining;
  bool operator==(const TunedSetting&) const = default;
};

/// Every point of a sweep of `swept`, fragments outermost, then sources,
/// then inline choices (each from its kAuto* list, in order).
std::vector<TunedSetting> sweep_points(AutoSettings swept);

/// The name of one point of an auto test's sweep: NAME.fragment_F when the
/// fragment is swept, then .source_S when the source is, then .inline_I
/// when inline is (a setting not swept is left out, and so is its part of
/// the name).
std::string sweep_point_name(const std::string& name, AutoSettings swept,
                             const TunedSetting& point);

/// The sizes an auto test NAME over `configs` (its `configs:`) of a parsed
/// suite runs (those of its sweep's tests); null when the suite has no such
/// sweep: `source: auto` beside a list or range of fragments sweeps both,
/// which one choice per size cannot narrow.
const std::vector<std::uint64_t>* auto_sweep_sizes(const model::SuiteSpec& suite,
                                                   const std::string& name, AutoSettings swept,
                                                   const std::vector<std::string>& configs);

/// Reads a suite file; content_hash is the SHA-256 of its bytes.
model::SuiteSpec load_suite(const std::string& path);
model::SuiteSpec parse_suite(const std::string& yaml_text, const std::string& file_label);

/// One test from a YAML mapping node: the suite parser's unit, and the CLI's
/// one-off form (`uniperf lat --op write -s 64`), which builds the node from
/// flags. `defaults` is the suite's `defaults:` mapping, if any.
model::TestSpec parse_test(const YAML::Node& node, const std::string& file_label,
                           const YAML::Node* defaults = nullptr);

/// The enum names of test_spec.hpp (the inverse of model::to_string);
/// nullopt for an unknown name. Ops: uniperf::parse_op.
std::optional<model::Pattern> parse_pattern(std::string_view name);
std::optional<model::Direction> parse_direction(std::string_view name);
std::optional<model::WindowMode> parse_window_mode(std::string_view name);
std::optional<model::CompletionMode> parse_completion_mode(std::string_view name);
std::optional<model::BufferMode> parse_buffer_mode(std::string_view name);

}  // namespace uniperf::suite
