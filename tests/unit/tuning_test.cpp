// Tuning files (suite/tuning.hpp): what `uniperf run --tuning` reads, and
// how it narrows a `fragment: auto`, `source: auto` or `inline: auto` sweep to the chosen
// setting per size.
#include "suite/tuning.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::suite {
namespace {

constexpr const char* kTuning = R"(tuning:
  suite: s.yaml
  config: configs/tcp.yaml
  tests:
    copy:
      - {size: 4096, fragment: 1024, MB_per_s: 10}
      - {size: 65536, fragment: 8192, MB_per_s: 20}
      - {size: 1048576, unavailable: "no"}
)";

constexpr const char* kSuite = R"(suite: s
defaults: {pattern: bandwidth, op: send, delivery: copy, window: 8, iterations: 10}
tests:
  - {name: whole, sizes: [4K]}
  - {name: copy, fragment: auto, sizes: [4K, 64K, 1M]}
  - {name: fixed, fragment: 2K, sizes: [4K]}
)";

/// "LINE KEY: what" of the SpecError that read() throws, or "accepted".
template <class Read>
std::string refusal_of(Read read) {
  try {
    read();
  } catch (const SpecError& e) {
    return std::to_string(e.line) + " " + e.key + ": " + e.what();
  }
  return "accepted";
}

/// The suite's text with `tuning` applied over a run of one config, tcp,
/// the one it was tuned on.
std::string tuned_for_tcp(const std::string& suite_text, const TuningChoices& tuning) {
  return apply_tuning(suite_text, "s.yaml", {{tuning, "tcp"}}, {"tcp"});
}

std::vector<std::uint64_t> sizes_of(const model::SuiteSpec& suite, const std::string& name) {
  const auto t = std::find_if(suite.tests.begin(), suite.tests.end(),
                              [&](const auto& test) { return test.name == name; });
  return t == suite.tests.end() ? std::vector<std::uint64_t>{} : t->sizes;
}

TEST(Tuning, ReadsTheChoicesAndLeavesUnavailableSizesWithout) {
  const TuningChoices t = parse_tuning(kTuning, "t.yaml");
  EXPECT_EQ(t.config, "configs/tcp.yaml");
  ASSERT_EQ(t.choices.count("copy"), 1u);
  const auto& copy = t.choices.at("copy");
  EXPECT_EQ(copy.size(), 2u);
  EXPECT_EQ(copy.at(4096), (TunedSetting{1024, "", ""}));
  EXPECT_EQ(copy.at(65536), (TunedSetting{8192, "", ""}));
  EXPECT_EQ(copy.count(1048576), 0u);
  EXPECT_EQ(t.lines.at("copy"), 5);
}

TEST(Tuning, ANonCandidateFragmentIsRefusedAtItsLine) {
  std::string text = kTuning;
  text.replace(text.find("fragment: 8192"), 14, "fragment: 3000");
  EXPECT_EQ(refusal_of([&] {
              parse_tuning(text, "t.yaml");
            }).rfind("7 tuning.tests.copy[1].fragment: t.yaml:7:", 0),
            0u);
  EXPECT_THROW(parse_tuning("suite: s\ntests: []\n", "t.yaml"), SpecError);
  EXPECT_THROW(
      parse_tuning("tuning:\n  tests:\n    copy:\n      - {size: 4K, fragment: 1024}\n", "t.yaml"),
      SpecError);
}

// Found by fuzzing: a row without `size` (or `fragment`) ended the process
// with YAML::InvalidNode, asked for the line of a node that is not there.
TEST(Tuning, AMissingOrNegativeNumberIsRefusedAtItsRow) {
  const auto refusal = [](const std::string& row) {
    return refusal_of(
        [&] { parse_tuning("tuning:\n  tests:\n    copy:\n      - " + row + "\n", "t.yaml"); });
  };
  EXPECT_NE(refusal("{siz024, fragment: 1024}").find("4 tuning.tests.copy[0].size"),
            std::string::npos);
  EXPECT_NE(refusal("{size: 4096, MB_per_s: 1}").find("4 tuning.tests.copy[0].fragment"),
            std::string::npos);
  EXPECT_NE(refusal("{size: 4096, source: bounce}").find("4 tuning.tests.copy[0].source"),
            std::string::npos);
  EXPECT_NE(refusal("{size: 4096, source: [staged]}").find("not a candidate of `source: auto`"),
            std::string::npos);
  EXPECT_NE(refusal("{size: -1, fragment: 1024}").find("got '-1'"), std::string::npos);
  EXPECT_NE(refusal("{size: ' 7', fragment: 1024}").find("got ' 7'"), std::string::npos);
  EXPECT_EQ(refusal("{size: 4096, fragment: 1024}"), "accepted");
}

TEST(Tuning, EachSizeRunsItsChosenFragmentAndAnUnchosenOneEveryCandidate) {
  const std::string tuned = tuned_for_tcp(kSuite, parse_tuning(kTuning, "t.yaml"));
  EXPECT_EQ(tuned.rfind("# s.yaml tuned by t.yaml", 0), 0u) << tuned;
  const model::SuiteSpec suite = parse_suite(tuned, "s.yaml");
  // 1M was not tuned (unavailable): every candidate has it, as untuned.
  EXPECT_EQ(sizes_of(suite, "copy.fragment_1024"), (std::vector<std::uint64_t>{4096, 1048576}));
  EXPECT_EQ(sizes_of(suite, "copy.fragment_8192"), (std::vector<std::uint64_t>{65536, 1048576}));
  EXPECT_EQ(sizes_of(suite, "copy.fragment_256"), (std::vector<std::uint64_t>{1048576}));
  EXPECT_EQ(sizes_of(suite, "copy.fragment_65536"), (std::vector<std::uint64_t>{1048576}));
  std::vector<std::string> names;
  for (const auto& t : suite.tests) names.push_back(t.name);
  EXPECT_EQ(names.front(), "whole");
  EXPECT_EQ(names.back(), "fixed");
  EXPECT_EQ(names.size(), 2 + std::size(kAutoFragments));
  for (const auto& t : suite.tests) {
    if (t.name.rfind("copy.fragment_", 0) == 0) {
      EXPECT_EQ(std::to_string(t.flows.front().fragment), t.name.substr(14)) << t.name;
    }
  }
}

TEST(Tuning, ATunedTestTheSuiteDoesNotSweepIsRefusedAtItsLine) {
  std::string text = kTuning;
  text.replace(text.find("copy:"), 5, "fixed:");
  const std::string refusal =
      refusal_of([&] { tuned_for_tcp(kSuite, parse_tuning(text, "t.yaml")); });
  EXPECT_EQ(refusal.rfind("5 ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find("t.yaml:5:"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("s.yaml has no `fragment: auto`, `source: auto` or `inline: auto` test "
                         "named fixed"),
            std::string::npos)
      << refusal;
}

// `source: auto`: under `uniperf run` a test per source (after the fragment
// sweep's suffix); a tuning file's row names the source it chose, alone or
// beside the fragment, exactly as the test leaves them to the tuner.
constexpr const char* kSourceSuite = R"(suite: s
defaults: {pattern: bandwidth, op: write, window: 8, iterations: 10}
tests:
  - {name: staging, fragment: 4K, source: auto, sizes: [16K, 1M]}
  - {name: both, fragment: auto, source: auto, sizes: [4K, 64K]}
)";

TEST(Tuning, SourceAutoSweepsBothSourcesAfterTheFragments) {
  const model::SuiteSpec suite = parse_suite(kSourceSuite, "s.yaml");
  EXPECT_EQ(sizes_of(suite, "staging.source_zero_copy"),
            (std::vector<std::uint64_t>{16384, 1048576}));
  EXPECT_EQ(sizes_of(suite, "staging.source_staged"), (std::vector<std::uint64_t>{16384, 1048576}));
  EXPECT_EQ(sizes_of(suite, "both.fragment_1024.source_staged"),
            (std::vector<std::uint64_t>{4096, 65536}));
  EXPECT_EQ(suite.tests.size(), 2 + 2 * std::size(kAutoFragments));
  for (const auto& t : suite.tests) {
    const bool staged = t.name.ends_with(".source_staged");
    EXPECT_EQ(t.flows.front().source, staged ? model::Source::staged : model::Source::zero_copy)
        << t.name;
  }
}

TEST(Tuning, SourceAutoWithoutFragmentsIsRefusedAtItsTest) {
  const std::string refusal = refusal_of([] {
    parse_suite(
        "suite: s\ntests:\n  - {name: a, pattern: bandwidth, op: send, sizes: [4K]}\n"
        "  - {name: b, pattern: bandwidth, op: send, source: auto, sizes: [4K]}\n",
        "s.yaml");
  });
  EXPECT_EQ(refusal.rfind("4 source: ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find("needs fragment > 0"), std::string::npos) << refusal;
}

// `source: auto` beside a range of fragments is a sweep of both: run
// measures it, but one choice per size cannot narrow it.
TEST(Tuning, ASourceTunedBesideSeveralFragmentsIsRefusedAtItsTest) {
  const std::string suite_text =
      "suite: s\ntests:\n  - {name: grid, pattern: bandwidth, op: send, delivery: copy, "
      "fragment: 1K..4K x4, source: auto, sizes: [16K]}\n";
  EXPECT_EQ(parse_suite(suite_text, "s.yaml").tests.size(), 4u);
  const std::string refusal = refusal_of([&] {
    tuned_for_tcp(suite_text,
                  parse_tuning("tuning:\n  tests:\n    grid:\n      - {size: 16384, source: "
                               "staged}\n",
                               "t.yaml"));
  });
  EXPECT_EQ(refusal.rfind("3 ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find("sweeps several fragments beside `source: auto`"), std::string::npos)
      << refusal;
}

TEST(Tuning, EachSizeRunsItsChosenSourceAndFragment) {
  const TuningChoices t = parse_tuning(R"(tuning:
  tests:
    staging:
      - {size: 16384, source: staged, MB_per_s: 1}
      - {size: 1048576, source: zero_copy, MB_per_s: 2}
    both:
      - {size: 4096, fragment: 1024, source: staged, MB_per_s: 3}
)",
                                       "t.yaml");
  EXPECT_EQ(t.choices.at("staging").at(16384), (TunedSetting{0, "staged", ""}));
  EXPECT_EQ(t.choices.at("both").at(4096), (TunedSetting{1024, "staged", ""}));
  const model::SuiteSpec suite = parse_suite(tuned_for_tcp(kSourceSuite, t), "s.yaml");
  EXPECT_EQ(sizes_of(suite, "staging.source_staged"), (std::vector<std::uint64_t>{16384}));
  EXPECT_EQ(sizes_of(suite, "staging.source_zero_copy"), (std::vector<std::uint64_t>{1048576}));
  // 4K at its choice only; 64K, not tuned, at every fragment and source.
  EXPECT_EQ(sizes_of(suite, "both.fragment_1024.source_staged"),
            (std::vector<std::uint64_t>{4096, 65536}));
  EXPECT_EQ(sizes_of(suite, "both.fragment_1024.source_zero_copy"),
            (std::vector<std::uint64_t>{65536}));
  EXPECT_EQ(sizes_of(suite, "both.fragment_256.source_staged"),
            (std::vector<std::uint64_t>{65536}));
  EXPECT_EQ(suite.tests.size(), 2 + 2 * std::size(kAutoFragments));
  for (const auto& test : suite.tests) {
    if (test.name.starts_with("staging.")) {
      EXPECT_EQ(test.flows.front().fragment, 4096u);
    }
  }
}

TEST(Tuning, AChoiceOfASettingTheTestDoesNotTuneIsRefusedAtItsTest) {
  const auto refusal = [](const std::string& rows) {
    return refusal_of(
        [&] { tuned_for_tcp(kSourceSuite, parse_tuning("tuning:\n  tests:\n" + rows, "t.yaml")); });
  };
  // The fragment of a test whose fragment is fixed (4K).
  EXPECT_NE(refusal("    staging:\n      - {size: 16384, fragment: 1024, source: staged}\n")
                .find("3 tuning.tests.staging: t.yaml:3: tuning.tests.staging: the choice for "
                      "16384 B names the fragment and the source, but test staging of s.yaml "
                      "leaves the source to the tuner"),
            std::string::npos);
  // A fragment without the source, for a test that tunes both.
  EXPECT_NE(refusal("    both:\n      - {size: 4096, fragment: 1024}\n")
                .find("names the fragment, but test both of s.yaml leaves the fragment and the "
                      "source to the tuner"),
            std::string::npos);
  EXPECT_EQ(refusal("    both:\n      - {size: 4096, fragment: 1024, source: zero_copy}\n"),
            "accepted");
}

constexpr const char* kInlineSuite = R"(suite: s
defaults: {op: send, iterations: 10}
tests:
  - {name: small, pattern: latency, inline: auto, sizes: [8, 64, 4K]}
)";

TEST(Tuning, InlineAutoSweepsOffAndOnAndEachSizeRunsItsChoice) {
  // Run untuned: both points at every size, "on" as much as the plugin allows.
  const model::SuiteSpec swept = parse_suite(kInlineSuite, "s.yaml");
  ASSERT_EQ(swept.tests.size(), 2u);
  EXPECT_EQ(swept.tests[0].name, "small.inline_off");
  EXPECT_EQ(swept.tests[0].flows.front().inline_size, 0u);
  EXPECT_EQ(swept.tests[1].name, "small.inline_on");
  EXPECT_EQ(swept.tests[1].flows.front().inline_size, kInlineAsPluginAllows);
  const TuningChoices t = parse_tuning(R"(tuning:
  tests:
    small:
      - {size: 8, inline: on, p50_us: 1.5}
      - {size: 4096, inline: off, max_inline: 256}
)",
                                       "t.yaml");
  EXPECT_EQ(t.choices.at("small").at(8), (TunedSetting{0, "", "on"}));
  const model::SuiteSpec tuned = parse_suite(tuned_for_tcp(kInlineSuite, t), "s.yaml");
  // 64 B, not tuned, at both; 8 B and 4 KiB at their choices.
  EXPECT_EQ(sizes_of(tuned, "small.inline_on"), (std::vector<std::uint64_t>{8, 64}));
  EXPECT_EQ(sizes_of(tuned, "small.inline_off"), (std::vector<std::uint64_t>{64, 4096}));
}

TEST(Tuning, InlineAutoOfAPipelineOrANonChoiceIsRefusedAtItsLine) {
  const std::string pipelined = refusal_of([] {
    parse_suite(
        "suite: s\ntests:\n  - {name: p, op: write, pattern: bandwidth, fragment: 1K, "
        "inline: auto, sizes: [64K]}\n",
        "s.yaml");
  });
  EXPECT_EQ(pipelined.rfind("3 inline: ", 0), 0u) << pipelined;
  EXPECT_NE(pipelined.find("a pipelined test (fragment > 0) posts fragments"), std::string::npos)
      << pipelined;
  const std::string maybe = refusal_of([] {
    parse_tuning("tuning:\n  tests:\n    small:\n      - {size: 8, inline: maybe}\n", "t.yaml");
  });
  EXPECT_EQ(maybe.rfind("4 ", 0), 0u) << maybe;
  EXPECT_NE(maybe.find("'maybe' is not a candidate of `inline: auto` (off, on)"), std::string::npos)
      << maybe;
}

// Several configs, each with its own tuning file (or none): each tuned
// config runs its own choices, over it alone; an untuned one the sweep.
TEST(Tuning, EachConfigRunsItsOwnTuningFileAndAnUntunedOneTheSweep) {
  const TuningChoices tcp = parse_tuning(kTuning, "tcp.tuning.yaml");
  TuningChoices shm = parse_tuning(R"(tuning:
  config: configs/ucx-shm.yaml
  tests:
    copy:
      - {size: 4096, fragment: 256}
      - {size: 65536, fragment: 8192}
      - {size: 1048576, fragment: 65536}
)",
                                   "shm.tuning.yaml");
  const std::string text =
      apply_tuning(kSuite, "s.yaml", {{tcp, "tcp"}, {shm, "ucx-shm"}}, {"tcp", "ucx-shm", "ofi"});
  EXPECT_EQ(text.rfind("# s.yaml tuned by tcp.tuning.yaml (tcp), shm.tuning.yaml (ucx-shm)", 0), 0u)
      << text;
  const model::SuiteSpec suite = parse_suite(text, "s.yaml");
  // config -> test -> sizes, from the tests that run over each config.
  std::map<std::string, std::map<std::string, std::vector<std::uint64_t>>> runs;
  for (const std::string config : {"tcp", "ucx-shm", "ofi"}) {
    for (const auto& test : suite.tests) {
      if (model::runs_over(test, config)) {
        EXPECT_TRUE(runs[config].emplace(test.name, test.sizes).second)
            << test.name << " runs twice over " << config;
      }
    }
  }
  using Sizes = std::vector<std::uint64_t>;
  // tcp: its choices, and 1 MiB (unavailable there) at every candidate.
  EXPECT_EQ(runs["tcp"]["copy.fragment_1024"], (Sizes{4096, 1048576}));
  EXPECT_EQ(runs["tcp"]["copy.fragment_8192"], (Sizes{65536, 1048576}));
  EXPECT_EQ(runs["tcp"]["copy.fragment_256"], (Sizes{1048576}));
  EXPECT_EQ(runs["tcp"].size(), 2 + std::size(kAutoFragments));
  // ucx-shm: a choice at every size, so three tests of the sweep.
  EXPECT_EQ(runs["ucx-shm"]["copy.fragment_256"], (Sizes{4096}));
  EXPECT_EQ(runs["ucx-shm"]["copy.fragment_8192"], (Sizes{65536}));
  EXPECT_EQ(runs["ucx-shm"]["copy.fragment_65536"], (Sizes{1048576}));
  EXPECT_EQ(runs["ucx-shm"].size(), 2u + 3u);
  // ofi: no tuning file, so every candidate at every size.
  EXPECT_EQ(runs["ofi"]["copy.fragment_1024"], (Sizes{4096, 65536, 1048576}));
  EXPECT_EQ(runs["ofi"].size(), 2 + std::size(kAutoFragments));
  EXPECT_EQ(runs["ofi"]["whole"], (Sizes{4096}));
}

TEST(Tuning, ATestThatDoesNotRunOverTheTunedConfigIsRefused) {
  const std::string suite_text =
      "suite: s\ntests:\n  - {name: copy, pattern: bandwidth, op: send, delivery: copy, "
      "fragment: auto, sizes: [4K], configs: [ucx-shm]}\n";
  const std::string refusal =
      refusal_of([&] { tuned_for_tcp(suite_text, parse_tuning(kTuning, "t.yaml")); });
  EXPECT_EQ(refusal.rfind("5 tuning.tests.copy: ", 0), 0u) << refusal;
  EXPECT_NE(refusal.find("has no `fragment: auto`, `source: auto` or `inline: auto` test named "
                         "copy over config tcp"),
            std::string::npos)
      << refusal;
}

// A test of its own `configs:` keeps them: tuned over one, it runs untuned
// over the others of the run it names, and names no config the run lacks.
TEST(Tuning, ATestsOwnConfigsBoundWhereItRunsUntuned) {
  const std::string suite_text =
      "suite: s\ntests:\n  - {name: copy, pattern: bandwidth, op: send, delivery: copy, "
      "fragment: auto, sizes: [4K], configs: [tcp, ofi, verbs-rxe]}\n";
  const model::SuiteSpec suite =
      parse_suite(apply_tuning(suite_text, "s.yaml", {{parse_tuning(kTuning, "t.yaml"), "tcp"}},
                               {"tcp", "ofi", "ucx-shm"}),
                  "s.yaml");
  std::map<std::string, std::size_t> tests_over;
  for (const auto& test : suite.tests) {
    for (const std::string& config : test.configs) ++tests_over[config];
    EXPECT_FALSE(test.configs.empty()) << test.name;
  }
  EXPECT_EQ(tests_over["tcp"], 1u);  // 4K at its choice
  EXPECT_EQ(tests_over["ofi"], std::size(kAutoFragments));
  EXPECT_EQ(tests_over.count("verbs-rxe"), 0u);
  EXPECT_EQ(tests_over.count("ucx-shm"), 0u);
}

// `configs:` in a suite: which configs a test runs over.
TEST(TestConfigs, AreANameOrAListAndANameRepeatsOnlyOverDisjointOnes) {
  const model::SuiteSpec suite = parse_suite(R"(suite: s
defaults: {pattern: latency, op: send, iterations: 10, sizes: [8]}
tests:
  - {name: a, configs: tcp}
  - {name: b, configs: [ucx-shm, ofi-tcp]}
  - {name: b, configs: [tcp]}
  - {name: c}
)",
                                             "s.yaml");
  ASSERT_EQ(suite.tests.size(), 4u);
  EXPECT_EQ(suite.tests[0].configs, (std::vector<std::string>{"tcp"}));
  EXPECT_EQ(suite.tests[1].configs, (std::vector<std::string>{"ucx-shm", "ofi-tcp"}));
  EXPECT_TRUE(model::runs_over(suite.tests[1], "ofi-tcp"));
  EXPECT_FALSE(model::runs_over(suite.tests[1], "tcp"));
  EXPECT_TRUE(model::runs_over(suite.tests[3], "anything"));

  const auto refusal = [](const std::string& tests) {
    return refusal_of([&] {
      parse_suite("suite: s\ndefaults: {pattern: latency, op: send, sizes: [8]}\ntests:\n" + tests,
                  "s.yaml");
    });
  };
  EXPECT_NE(refusal("  - {name: a, configs: [tcp]}\n  - {name: a, configs: [ucx-shm, tcp]}\n")
                .find("5 name: s.yaml:5: name: duplicate test name 'a' (a name repeats only over "
                      "disjoint `configs:`)"),
            std::string::npos);
  EXPECT_NE(refusal("  - {name: a, configs: [tcp]}\n  - {name: a}\n").find("duplicate test name"),
            std::string::npos);
  EXPECT_NE(refusal("  - {name: a, configs: [tcp, tcp]}\n").find("'tcp' is listed twice"),
            std::string::npos);
  EXPECT_NE(refusal("  - {name: a, configs: []}\n").find("4 configs: "), std::string::npos);
  EXPECT_NE(refusal("  - {name: a, configs: {x: 1}}\n")
                .find("expected a config's name or a list of them"),
            std::string::npos);
  EXPECT_NE(refusal("  - {name: a, configs: ''}\n").find("expected a config's name"),
            std::string::npos);
}

}  // namespace
}  // namespace uniperf::suite
