// Tuning files (`uniperf tune` writes them, `uniperf run --tuning FILE`
// applies them; docs/pipeline.md, "Self-tuning"): per test and message size,
// the fragment the tuner chose on one host and config.
//
//   tuning:
//     suite: suites/pipeline.yaml
//     config: configs/ucx-shm.yaml
//     tests:
//       copy:
//         - {size: 65536, fragment: 8192, MB_per_s: 5846.3, ...}
//         - {size: 1048576, unavailable: "..."}
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace uniperf::suite {

/// A tuning file's choices: test name -> size -> fragment (sizes written
/// `unavailable:` have no choice).
struct TuningChoices {
  std::string file;
  std::string config;  ///< the config it was tuned on, as the tuner was given it
  std::map<std::string, std::map<std::uint64_t, std::uint32_t>> fragments;
  std::map<std::string, int> lines;  ///< each test's line in the file, for messages
};

/// Reads a tuning file's text. Throws SpecError naming the file, line and
/// key of what is wrong (a fragment that is not one of kAutoFragments, a
/// size that is not a number, ...).
TuningChoices parse_tuning(const std::string& text, const std::string& file);

/// The suite's text with each tuned `fragment: auto` test narrowed to the
/// choices: instead of every candidate at every size, test NAME.fragment_F
/// runs the sizes whose choice is F, and the sizes without one (unavailable
/// when tuned, or not tuned) at every candidate as before. A tuned name the
/// suite has no `fragment: auto` test of is a SpecError at its line of the
/// tuning file. The result is a suite text of its own (its hash is what a
/// peer and the records see), led by a comment naming the tuning file.
std::string apply_tuning(const std::string& suite_text, const std::string& suite_file,
                         const TuningChoices& tuning);

}  // namespace uniperf::suite
