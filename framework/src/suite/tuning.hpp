// Tuning files (`uniperf tune` writes them, `uniperf run --tuning FILE`
// applies them; docs/pipeline.md, "Self-tuning"): per test and message size,
// the settings the tuner chose on one host and config: the fragment of a
// `fragment: auto` test, the source of a `source: auto` one, the inline
// choice of an `inline: auto` one, or several.
//
//   tuning:
//     suite: suites/pipeline.yaml
//     config: configs/ucx-shm.yaml
//     tests:
//       copy:
//         - {size: 65536, fragment: 8192, MB_per_s: 5846.3, ...}
//         - {size: 1048576, unavailable: "..."}
//       direct:
//         - {size: 65536, fragment: 8192, source: zero_copy, MB_per_s: 7000.1, ...}
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "suite/suite.hpp"

namespace uniperf::suite {

/// A tuning file's choices: test name -> size -> setting (sizes written
/// `unavailable:` have no choice).
struct TuningChoices {
  std::string file;
  std::string config;   ///< the config it was tuned on, as the tuner was given it
  int config_line = 1;  ///< its line in the file, for messages
  std::map<std::string, std::map<std::uint64_t, TunedSetting>> choices;
  std::map<std::string, int> lines;  ///< each test's line in the file, for messages
};

/// Reads a tuning file's text. Throws SpecError naming the file, line and
/// key of what is wrong (a fragment that is not one of kAutoFragments, a
/// source that is not one of kAutoSources, a row with neither, a size that
/// is not a number, ...).
TuningChoices parse_tuning(const std::string& text, const std::string& file);

/// A tuning file and the config of a run it applies to: the one it was
/// tuned on (`uniperf run --tuning` matches them by name).
struct ConfigTuning {
  TuningChoices tuning;
  std::string config;  ///< the config's name, as records give it
};

/// The suite's text with each tuned auto test narrowed, over the config
/// its tuning file applies to, to the choices: instead of every candidate
/// at every size, its sweep's test for a setting (NAME.fragment_F,
/// NAME.source_S or NAME.fragment_F.source_S) runs, over that config only
/// (`configs: [CONFIG]`), the sizes whose choice that setting is, and the
/// sizes without one (unavailable when tuned, or not tuned) at every
/// candidate as before. The test runs untuned over every other config of
/// `run_configs` (the run's config names) it runs over. A tuned name the
/// suite has no auto test of over that config, or a choice of a setting
/// the test does not leave to the tuner (or without one it does), is a
/// SpecError at its line of the tuning file. The result is a suite text of
/// its own (its hash is what a peer and the records see), led by a comment
/// naming the tuning files.
std::string apply_tuning(const std::string& suite_text, const std::string& suite_file,
                         const std::vector<ConfigTuning>& tunings,
                         const std::vector<std::string>& run_configs);

}  // namespace uniperf::suite
