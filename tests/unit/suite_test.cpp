// Suites and configs in YAML: every key, presets and precedence, every
// validation error with its file:line:key, size ranges, option checking, and
// the shipped suites/ and configs/ files.
#include "suite/suite.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/plan.hpp"
#include "fake_transport.hpp"
#include "model/test_spec.hpp"

namespace uniperf::suite {
namespace {

using model::CompletionMode;
using model::Direction;
using model::FlowSpec;
using model::Pattern;
using model::WindowMode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFile = "suites/t.yaml";

/// The SpecError parse_suite throws for `text`; fails the test if none.
SpecError suite_error(const std::string& text) {
  try {
    parse_suite(text, kFile);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "no SpecError for:\n" << text;
  return SpecError("", -1, "", "none");
}

/// Checks file, line, key, the "FILE:LINE: KEY: " prefix of what(), and a
/// fragment of the message.
void expect_error(const std::string& text, int line, const std::string& key,
                  const std::string& fragment) {
  SCOPED_TRACE(text);
  const SpecError e = suite_error(text);
  EXPECT_EQ(e.file, kFile);
  EXPECT_EQ(e.line, line);
  EXPECT_EQ(e.key, key);
  EXPECT_THAT(e.what(), HasSubstr(kFile + ":" + std::to_string(line) + ": " + key + ": "));
  EXPECT_THAT(e.what(), HasSubstr(fragment));
}

/// A suite with one test named t: the body's first line is line 4.
std::string one_test(const std::string& body) {
  return "suite: s\ntests:\n  - name: t\n" + body;
}

model::TestSpec only_test(const std::string& text) {
  const auto suite = parse_suite(text, kFile);
  EXPECT_EQ(suite.tests.size(), 1u);
  return suite.tests.at(0);
}

// ---------------------------------------------------------------- happy path

TEST(SuiteParse, EveryKeyLandsInTheModel) {
  const auto suite = parse_suite(R"(suite: full
description: every key once
defaults:
  iterations: 777
  validate: true
tests:
  - name: all.keys-1
    op: write_imm
    pattern: bandwidth
    direction: bi
    sizes: [8, 4K, 1M]
    iterations: 3000
    warmup: 7
    window: 64
    window_mode: streaming
    signal_every: 32
    cq_moderation: 4
    completion: event
    rx_depth: 256
    rx_replenish: 8
    post_list: 2
    inline: 64
    endpoints: 3
    validate: false
  - name: timed
    op: send
    pattern: message_rate
    duration: 2s
    margin: 500ms
)",
                                 kFile);
  EXPECT_EQ(suite.name, "full");
  EXPECT_EQ(suite.description, "every key once");
  EXPECT_EQ(suite.file, kFile);
  ASSERT_EQ(suite.tests.size(), 2u);

  const auto& t = suite.tests[0];
  EXPECT_EQ(t.name, "all.keys-1");
  EXPECT_EQ(t.source_line, 7u);
  EXPECT_THAT(t.sizes, ElementsAre(8u, 4096u, 1048576u));
  EXPECT_EQ(t.duration.iterations, 3000u);
  EXPECT_EQ(t.duration.seconds, 0);
  EXPECT_EQ(t.duration.warmup_iterations, 7u);
  ASSERT_EQ(t.flows.size(), 1u);
  const FlowSpec& f = t.flows[0];
  EXPECT_EQ(f.op, Op::write_imm);
  EXPECT_EQ(f.pattern, Pattern::bandwidth);
  EXPECT_EQ(f.direction, Direction::bi);
  EXPECT_EQ(f.window, 64u);
  EXPECT_EQ(f.window_mode, WindowMode::streaming);
  EXPECT_EQ(f.signal_every, 32u);
  EXPECT_EQ(f.cq_moderation, 4u);
  EXPECT_EQ(f.completion, CompletionMode::event);
  EXPECT_EQ(f.rx_depth, 256u);
  EXPECT_EQ(f.rx_replenish, 8u);
  EXPECT_EQ(f.post_list, 2u);
  EXPECT_EQ(f.inline_size, 64u);
  EXPECT_EQ(f.endpoints, 3u);
  EXPECT_FALSE(f.validate);  // the test's key beats the suite default

  const auto& timed = suite.tests[1];
  EXPECT_EQ(timed.duration.seconds, 2.0);
  EXPECT_EQ(timed.duration.margin, 0.5);
  EXPECT_EQ(timed.duration.iterations, 0u);  // duration beats the defaults' iterations
  EXPECT_TRUE(timed.flows[0].validate);      // from the defaults
  EXPECT_THAT(timed.sizes, ElementsAre(8u));
}

TEST(SuiteParse, FlowsInheritTestKeysAndOverrideThem) {
  const auto t = only_test(one_test(R"(    op: write
    pattern: bandwidth
    window: 32
    sizes: 64K
    flows:
      - {}
      - {op: read, window: 8, endpoints: 2}
      - {op: send, pattern: message_rate, window_mode: window_ack}
)"));
  ASSERT_EQ(t.flows.size(), 3u);
  EXPECT_EQ(t.flows[0].op, Op::write);
  EXPECT_EQ(t.flows[0].window, 32u);
  EXPECT_EQ(t.flows[1].op, Op::read);
  EXPECT_EQ(t.flows[1].window, 8u);
  EXPECT_EQ(t.flows[1].signal_every, 4u);  // resolved from the flow's own window
  EXPECT_EQ(t.flows[1].endpoints, 2u);
  EXPECT_EQ(t.flows[2].pattern, Pattern::message_rate);
  EXPECT_EQ(t.flows[2].window_mode, WindowMode::window_ack);
  EXPECT_THAT(t.sizes, ElementsAre(65536u));
}

TEST(SuiteParse, FlowPatternPicksItsOwnBuiltInDefaults) {
  // No test-level pattern: a bandwidth flow must not inherit latency's window 1.
  const auto t = only_test(one_test("    flows:\n      - {op: write, pattern: bandwidth}\n"));
  EXPECT_EQ(t.flows[0].pattern, Pattern::bandwidth);
  EXPECT_EQ(t.flows[0].window, 64u);
}

TEST(SuiteParse, BuiltInDefaultsAreResolvedNotZero) {
  const auto latency = only_test(one_test("    op: send\n"));
  const FlowSpec& l = latency.flows[0];
  EXPECT_EQ(l.pattern, Pattern::latency);
  EXPECT_EQ(l.direction, Direction::uni);
  EXPECT_EQ(l.window, 1u);
  EXPECT_EQ(l.signal_every, 1u);
  EXPECT_EQ(l.cq_moderation, 1u);
  EXPECT_EQ(l.rx_depth, 64u);
  EXPECT_EQ(l.rx_replenish, 1u);
  EXPECT_EQ(l.post_list, 1u);
  EXPECT_EQ(l.endpoints, 1u);
  EXPECT_EQ(l.inline_size, 0u);
  EXPECT_EQ(l.completion, CompletionMode::poll);
  EXPECT_EQ(l.window_mode, WindowMode::streaming);
  EXPECT_FALSE(l.validate);
  EXPECT_EQ(latency.duration.iterations, 1000u);
  EXPECT_EQ(latency.duration.warmup_iterations, 100u);
  EXPECT_THAT(latency.sizes, ElementsAre(8u));

  const auto bandwidth = only_test(one_test("    op: write\n    pattern: bandwidth\n"));
  const FlowSpec& b = bandwidth.flows[0];
  EXPECT_EQ(b.window, 64u);
  EXPECT_EQ(b.signal_every, 32u);
  EXPECT_EQ(b.cq_moderation, 2u);
  EXPECT_EQ(b.rx_depth, 128u);
  EXPECT_EQ(bandwidth.duration.iterations, 5000u);
  EXPECT_EQ(bandwidth.duration.warmup_iterations, 200u);
  EXPECT_THAT(bandwidth.sizes, ElementsAre(65536u));

  const auto rate = only_test(one_test("    op: send\n    pattern: message_rate\n"));
  EXPECT_EQ(rate.duration.iterations, 20000u);
  EXPECT_EQ(rate.flows[0].window, 64u);
  EXPECT_THAT(rate.sizes, ElementsAre(8u));

  // 0 asks for the automatic value.
  const auto zeros = only_test(
      one_test("    op: send\n    pattern: bandwidth\n    window: 100\n    signal_every: 0\n"
               "    rx_depth: 0\n"));
  EXPECT_EQ(zeros.flows[0].signal_every, 50u);
  EXPECT_EQ(zeros.flows[0].cq_moderation, 2u);
  EXPECT_EQ(zeros.flows[0].rx_depth, 200u);
}

TEST(SuiteParse, AtomicsDefaultToEightBytes) {
  const auto t = only_test(one_test("    op: cswap\n"));
  EXPECT_THAT(t.sizes, ElementsAre(8u));
  EXPECT_EQ(only_test(one_test("    op: fetch_add\n    sizes: [8]\n")).flows[0].op, Op::fetch_add);
}

TEST(SuiteParse, SizeRangesInSuites) {
  const auto t = only_test(one_test("    op: write\n    sizes: 1K..4K +1K\n"));
  EXPECT_THAT(t.sizes, ElementsAre(1024u, 2048u, 3072u, 4096u));
  const auto mixed = only_test(one_test("    op: write\n    sizes: [2, \"64..256 x4\", 1M]\n"));
  EXPECT_THAT(mixed.sizes, ElementsAre(2u, 64u, 256u, 1048576u));
}

TEST(SuiteParse, ContentHashIsSha256OfTheText) {
  const std::string text = one_test("    op: send\n");
  EXPECT_EQ(parse_suite(text, kFile).content_hash, sha256_hex(text));
  EXPECT_NE(parse_suite(text + "# changed\n", kFile).content_hash, sha256_hex(text));
}

TEST(SuiteParse, FailOnSkipIsASuiteKeyOfTrueOrFalse) {
  EXPECT_FALSE(parse_suite(one_test("    op: send\n"), kFile).fail_on_skip);
  EXPECT_TRUE(parse_suite("fail_on_skip: true\n" + one_test("    op: send\n"), kFile).fail_on_skip);
  expect_error("suite: s\nfail_on_skip: sometimes\ntests:\n  - name: t\n", 2, "fail_on_skip",
               "expected true or false, got 'sometimes'");
}

TEST(SuiteParse, ParseTestTakesANodeBuiltInCode) {
  // The CLI's one-off form: no file, no marks, defaults passed apart.
  YAML::Node test;
  test["name"] = "write_bw";
  test["op"] = "write";
  test["pattern"] = "bandwidth";
  test["window"] = 16;
  test["validate"] = true;
  YAML::Node defaults;
  defaults["iterations"] = 42;
  defaults["window"] = 8;
  const auto spec = parse_test(test, "<command line>", &defaults);
  EXPECT_EQ(spec.flows[0].window, 16u);
  EXPECT_TRUE(spec.flows[0].validate);
  EXPECT_EQ(spec.duration.iterations, 42u);

  test["window"] = 0;
  try {
    parse_test(test, "<command line>");
    FAIL() << "window 0 accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file, "<command line>");
    EXPECT_EQ(e.key, "window");
    EXPECT_EQ(e.line, 0);
  }
}

// ---------------------------------------------------------------- presets

TEST(SuitePresets, PerftestLatency) {
  const auto send = only_test(one_test("    preset: perftest\n    op: send\n"));
  EXPECT_EQ(send.preset, "perftest");
  EXPECT_EQ(send.flows[0].window, 1u);
  EXPECT_EQ(send.flows[0].inline_size, 220u);
  EXPECT_EQ(send.flows[0].signal_every, 100u);  // ib_send_lat signals every cq_mod-th
  EXPECT_EQ(send.duration.iterations, 1000u);
  EXPECT_EQ(send.duration.warmup_iterations, 0u);
  EXPECT_THAT(send.sizes, ElementsAre(2u));

  const auto read = only_test(one_test("    preset: perftest\n    op: read\n"));
  EXPECT_EQ(read.flows[0].inline_size, 0u);  // reads are never inline
  EXPECT_EQ(read.flows[0].signal_every, 1u);
}

TEST(SuitePresets, PerftestBandwidth) {
  const auto write =
      only_test(one_test("    preset: perftest\n    op: write\n    pattern: bandwidth\n"));
  const FlowSpec& f = write.flows[0];
  EXPECT_EQ(f.window, 128u);
  EXPECT_EQ(f.signal_every, 100u);
  EXPECT_EQ(f.cq_moderation, 16u);
  EXPECT_EQ(f.rx_depth, 512u);
  EXPECT_EQ(f.rx_replenish, 1u);
  EXPECT_EQ(f.window_mode, WindowMode::streaming);
  EXPECT_EQ(write.duration.iterations, 5000u);
  EXPECT_EQ(write.duration.warmup_iterations, 0u);
  EXPECT_THAT(write.sizes, ElementsAre(65536u));

  const auto send =
      only_test(one_test("    preset: perftest\n    op: send\n    pattern: bandwidth\n"));
  EXPECT_EQ(send.duration.iterations, 1000u);

  // perftest caps cq_mod to the tx depth: a smaller window caps the preset's value.
  const auto small = only_test(
      one_test("    preset: perftest\n    op: write\n    pattern: bandwidth\n    window: 32\n"));
  EXPECT_EQ(small.flows[0].signal_every, 32u);
}

TEST(SuitePresets, Osu) {
  const auto latency = only_test(one_test("    preset: osu\n    op: send\n"));
  EXPECT_EQ(latency.flows[0].window, 1u);
  EXPECT_EQ(latency.duration.iterations, 10000u);
  EXPECT_EQ(latency.duration.warmup_iterations, 200u);

  const auto bandwidth =
      only_test(one_test("    preset: osu\n    op: send\n    pattern: bandwidth\n"));
  const FlowSpec& f = bandwidth.flows[0];
  EXPECT_EQ(f.window_mode, WindowMode::window_ack);
  EXPECT_EQ(f.window, 64u);
  EXPECT_EQ(f.signal_every, 1u);
  EXPECT_EQ(f.cq_moderation, 1u);
  EXPECT_EQ(bandwidth.duration.iterations, 6400u);  // 100 windows of 64
  EXPECT_EQ(bandwidth.duration.warmup_iterations, 640u);
  EXPECT_EQ(f.buffers, model::BufferMode::single);  // osu_bw reuses one s_buf / r_buf
}

TEST(SuiteFlows, BuffersCycleByDefaultOrSingleOnRequest) {
  const auto cycle = only_test(one_test("    op: write\n    pattern: bandwidth\n"));
  EXPECT_EQ(cycle.flows[0].buffers, model::BufferMode::cycle);
  const auto single =
      only_test(one_test("    op: write\n    pattern: bandwidth\n    buffers: single\n"));
  EXPECT_EQ(single.flows[0].buffers, model::BufferMode::single);
  expect_error(one_test("    op: send\n    buffers: double\n"), 5, "buffers", "cycle");
}

TEST(SuiteFlows, MaxLossIsAFractionOrAPercentage) {
  EXPECT_EQ(only_test(one_test("    op: send\n")).flows[0].max_loss, 1.0);  // only reported
  EXPECT_EQ(only_test(one_test("    op: send\n    max_loss: 1%\n")).flows[0].max_loss, 0.01);
  EXPECT_EQ(only_test(one_test("    op: send\n    max_loss: 0.25\n")).flows[0].max_loss, 0.25);
  EXPECT_EQ(only_test(one_test("    op: send\n    max_loss: 0\n")).flows[0].max_loss, 0.0);
  for (const char* bad : {"150%", "1.5", "-0.1", "lots", "nan", "'%'"}) {
    expect_error(one_test(std::string("    op: send\n    max_loss: ") + bad + "\n"), 5, "max_loss",
                 "expected a fraction from 0 to 1 or a percentage");
  }
}

TEST(SuiteParse, PairsNamesHowALaunchedJobPairsItsRanks) {
  EXPECT_EQ(only_test(one_test("    op: send\n")).pairs, model::RankPairs::first);
  EXPECT_EQ(only_test(one_test("    op: send\n    pairs: all\n")).pairs, model::RankPairs::all);
  EXPECT_EQ(only_test(one_test("    op: send\n    pairs: ring\n")).pairs, model::RankPairs::ring);
  EXPECT_EQ(only_test(one_test("    op: send\n    pairs: incast\n")).pairs,
            model::RankPairs::incast);
  EXPECT_EQ(only_test(one_test("    op: send\n    pairs: all_to_all\n")).pairs,
            model::RankPairs::all_to_all);
  const auto inherited = parse_suite(
      "suite: s\ndefaults: {pairs: all}\ntests:\n  - {name: a, op: send}\n"
      "  - {name: b, op: send, pairs: first}\n",
      "s.yaml");
  EXPECT_EQ(inherited.tests[0].pairs, model::RankPairs::all);
  EXPECT_EQ(inherited.tests[1].pairs, model::RankPairs::first);
  expect_error(one_test("    op: send\n    pairs: alll\n"), 5, "pairs",
               "unknown pairing 'alll' (did you mean 'all'?); expected one of: first, all, ring, "
               "bisection");
}

TEST(SuitePresets, Itperf) {
  const auto bandwidth =
      only_test(one_test("    preset: itperf\n    op: send\n    pattern: bandwidth\n"));
  EXPECT_EQ(bandwidth.flows[0].window, 16u);
  EXPECT_EQ(bandwidth.flows[0].signal_every, 8u);
  EXPECT_EQ(bandwidth.flows[0].rx_replenish, 1u);
  EXPECT_EQ(bandwidth.flows[0].completion, CompletionMode::poll);
  EXPECT_EQ(bandwidth.duration.iterations, 1000u);
  EXPECT_EQ(bandwidth.flows[0].buffers, model::BufferMode::cycle);
  const auto latency = only_test(one_test("    preset: itperf\n    op: send\n"));
  EXPECT_EQ(latency.flows[0].window, 1u);
  EXPECT_EQ(latency.flows[0].signal_every, 16u);  // once every send-queue size
  EXPECT_EQ(latency.flows[0].buffers, model::BufferMode::single);
  const auto read = only_test(one_test("    preset: itperf\n    op: read\n"));
  EXPECT_EQ(read.flows[0].signal_every, 1u);  // a read's completion is its answer
}

TEST(SuitePresets, PrecedenceBuiltinPresetDefaultsTestFlow) {
  const auto suite = parse_suite(R"(suite: p
defaults:
  preset: osu
  window: 32
  warmup: 5
tests:
  - name: from_defaults
    op: send
    pattern: bandwidth
  - name: test_wins
    op: send
    pattern: bandwidth
    window: 16
    warmup: 0
  - name: flow_wins
    op: send
    pattern: bandwidth
    window: 16
    flows:
      - {window: 4}
)",
                                 kFile);
  const auto& from_defaults = suite.tests[0];
  EXPECT_EQ(from_defaults.preset, "osu");
  EXPECT_EQ(from_defaults.flows[0].window, 32u);                          // defaults over preset
  EXPECT_EQ(from_defaults.flows[0].window_mode, WindowMode::window_ack);  // preset over built-in
  EXPECT_EQ(from_defaults.duration.iterations, 6400u);                    // preset
  EXPECT_EQ(from_defaults.duration.warmup_iterations, 5u);                // defaults
  EXPECT_EQ(suite.tests[1].flows[0].window, 16u);                         // test over defaults
  EXPECT_EQ(suite.tests[1].duration.warmup_iterations, 0u);
  EXPECT_EQ(suite.tests[2].flows[0].window, 4u);  // flow over test
}

TEST(SuitePresets, TestLevelRunLengthBeatsTheDefaults) {
  const auto suite = parse_suite(R"(suite: p
defaults:
  duration: 3s
  margin: 1s
tests:
  - name: counted
    op: send
    iterations: 10
  - name: timed
    op: send
)",
                                 kFile);
  EXPECT_EQ(suite.tests[0].duration.iterations, 10u);
  EXPECT_EQ(suite.tests[0].duration.seconds, 0);
  EXPECT_EQ(suite.tests[1].duration.seconds, 3.0);
  EXPECT_EQ(suite.tests[1].duration.margin, 1.0);
}

// ---------------------------------------------------------------- errors

TEST(SuiteErrors, UnknownKeysEverywhereWithSuggestions) {
  expect_error(one_test("    op: send\n    windw: 4\n"), 5, "windw", "did you mean 'window'?");
  expect_error("suite: s\ntset:\n  - {name: t, op: send}\n", 2, "tset", "did you mean 'tests'?");
  expect_error("suite: s\ndefaults:\n  itrations: 5\ntests:\n  - {name: t, op: send}\n", 3,
               "itrations", "did you mean 'iterations'?");
  expect_error("suite: s\ndefaults:\n  name: x\ntests:\n  - {name: t, op: send}\n", 3, "name",
               "unknown key in defaults");
  expect_error(one_test("    op: send\n    flows:\n      - op: write\n        sizes: [8]\n"), 7,
               "sizes", "unknown key in a flow");
  expect_error(one_test("    op: send\n    op: write\n"), 5, "op", "given twice");
  expect_error(one_test("    op: send\n    sig_every: 2\n"), 5, "sig_every",
               "did you mean 'signal_every'?");  // an abbreviation
  // Nothing close: no suggestion, but the list of known keys.
  const SpecError far = suite_error(one_test("    op: send\n    id: 2\n"));
  EXPECT_THAT(far.what(), ::testing::Not(HasSubstr("did you mean")));
  EXPECT_THAT(far.what(), HasSubstr("known keys: name, preset, sizes"));
}

// A pause between ping-pongs (perftest's --latency_gap) is a latency knob;
// a stream that sets it is told so, at its line.
TEST(SuiteErrors, ALatencyGapIsForLatencyTestsOnly) {
  EXPECT_DOUBLE_EQ(
      only_test(one_test("    op: send\n    latency_gap: 20us\n")).flows.front().latency_gap,
      2e-05);
  expect_error(one_test("    op: send\n    pattern: bandwidth\n    latency_gap: 20us\n"), 6,
               "latency_gap", "for latency tests only");
}

TEST(SuiteErrors, LatencyIterationsAreBoundedByTheSamplesTheyKeep) {
  expect_error(one_test("    op: send\n    iterations: 33554433\n"), 5, "iterations",
               "at most 33554432 (33554433 given); for longer runs give a duration");
  // The most a latency test keeps, and any count for a stream (no sample
  // per iteration), are fine.
  EXPECT_EQ(only_test(one_test("    op: send\n    iterations: 33554432\n")).duration.iterations,
            33554432u);
  EXPECT_EQ(only_test(one_test("    op: send\n    pattern: bandwidth\n    iterations: "
                               "1000000000000\n"))
                .duration.iterations,
            1000000000000u);
}

TEST(SuiteErrors, WrongTypes) {
  expect_error(one_test("    op: send\n    window: abc\n"), 5, "window", "whole number");
  expect_error(one_test("    op: send\n    window: -1\n"), 5, "window", "whole number");
  expect_error(one_test("    op: send\n    window: [1, 2]\n"), 5, "window", "single value");
  expect_error(one_test("    op: send\n    validate: maybe\n"), 5, "validate", "true or false");
  expect_error(one_test("    op: send\n    duration: soon\n"), 5, "duration", "time such as");
  expect_error(one_test("    op: send\n    sizes: {a: 1}\n"), 5, "sizes", "size or a range");
  expect_error(one_test("    op: send\n    sizes: [8, big]\n"), 5, "sizes", "'big' is not a size");
  expect_error("suite: s\ntests:\n  - name: [a]\n    op: send\n", 3, "name", "single value");
  expect_error("suite: s\ntests:\n  - just a string\n", 3, "tests", "mapping");
  expect_error("suite: s\ndefaults: 5\ntests:\n  - {name: t, op: send}\n", 2, "defaults",
               "mapping");
  expect_error(one_test("    op: send\n    flows: {op: write}\n"), 5, "flows", "non-empty list");
}

TEST(SuiteErrors, UnknownEnumValuesListTheValidOnes) {
  expect_error(one_test("    op: put\n"), 4, "op",
               "expected one of: send, write, write_imm, read, fetch_add, cswap");
  expect_error(one_test("    op: send\n    pattern: fast\n"), 5, "pattern",
               "expected one of: latency, bandwidth, message_rate");
  expect_error(one_test("    op: send\n    pattern: bandwith\n"), 5, "pattern",
               "did you mean 'bandwidth'?");
  expect_error(one_test("    op: send\n    direction: both\n"), 5, "direction",
               "expected one of: uni, bi");
  expect_error(one_test("    op: send\n    pattern: bandwidth\n    window_mode: wait_all\n"), 6,
               "window_mode", "expected one of: streaming, window_ack");
  expect_error(one_test("    op: send\n    completion: interrupt\n"), 5, "completion",
               "expected one of: poll, event");
  expect_error(one_test("    op: send\n    flows:\n      - {op: get}\n"), 6, "op",
               "unknown value 'get'");
}

TEST(SuiteErrors, MissingNameOrOp) {
  expect_error("suite: s\ntests:\n  - op: send\n", 3, "name", "missing");
  expect_error(one_test("    pattern: latency\n"), 3, "op", "missing");
  expect_error(one_test("    flows:\n      - {pattern: bandwidth}\n"), 5, "op", "missing");
  expect_error("tests:\n  - {name: t, op: send}\n", 1, "suite", "missing");
  expect_error("suite: s\ntests:\n  - name: bad/name\n    op: send\n", 3, "name",
               "letters, digits");
}

TEST(SuiteErrors, DuplicateTestNames) {
  expect_error(
      "suite: s\ntests:\n  - name: t\n    op: send\n  - name: u\n    op: send\n"
      "  - name: t\n    op: write\n",
      7, "name", "duplicate test name 't'");
}

TEST(SuiteErrors, RunLength) {
  expect_error(one_test("    op: send\n    iterations: 10\n    duration: 1s\n"), 6, "duration",
               "not both");
  expect_error(
      "suite: s\ndefaults:\n  iterations: 5\n  duration: 2s\ntests:\n"
      "  - {name: t, op: send}\n",
      4, "duration", "not both");
  expect_error(one_test("    op: send\n    margin: 1s\n"), 5, "margin", "duration mode only");
  expect_error(one_test("    op: send\n    duration: 2s\n    margin: 1s\n"), 6, "margin",
               "shorter than the duration");
  expect_error(one_test("    op: send\n    duration: 0s\n"), 5, "duration", "positive");
  expect_error(one_test("    op: send\n    iterations: 0\n"), 5, "iterations", "at least 1");
}

TEST(SuiteErrors, LatencyIsAPingPong) {
  expect_error(one_test("    op: send\n    window: 4\n"), 5, "window", "window must be 1");
  expect_error(one_test("    op: send\n    direction: bi\n"), 5, "direction", "must be uni");
  expect_error(one_test("    op: send\n    window_mode: window_ack\n"), 5, "window_mode",
               "not latency");
  expect_error(one_test("    op: send\n    stream_end: delivered\n"), 5, "stream_end",
               "for bandwidth and message_rate");
  EXPECT_EQ(only_test(one_test("    op: send\n    pattern: bandwidth\n    stream_end: delivered\n"))
                .flows.front()
                .stream_end,
            model::StreamEnd::delivered);
}

TEST(SuiteErrors, OnlyAWriteStreamsTargetWatchesWhatLands) {
  const std::string write_stream = "    op: write\n    pattern: bandwidth\n";
  EXPECT_EQ(only_test(one_test(write_stream + "    target_watch: last_byte\n"))
                .flows.front()
                .target_watch,
            model::TargetWatch::last_byte);
  // Each error names the line of target_watch itself.
  expect_error(one_test("    op: send\n    pattern: bandwidth\n    target_watch: last_byte\n"), 6,
               "target_watch", "for op write");
  expect_error(one_test("    op: write\n    target_watch: last_byte\n"), 5, "target_watch",
               "pattern bandwidth or message_rate");
  expect_error(one_test(write_stream + "    direction: bi\n    target_watch: last_byte\n"), 7,
               "target_watch", "one way");
  expect_error(one_test(write_stream + "    target_watch: now\n"), 6, "target_watch",
               "none, last_byte");
}

TEST(SuiteErrors, UntouchedSendBuffersHoldNothingToValidate) {
  const std::string stream = "    op: write\n    pattern: bandwidth\n";  // lines 4-5
  EXPECT_EQ(
      only_test(one_test(stream + "    send_buffers: untouched\n")).flows.front().send_buffers,
      model::SendBuffers::untouched);
  expect_error(one_test(stream + "    validate: true\n    send_buffers: untouched\n"), 7,
               "send_buffers", "validate");
  expect_error(one_test(stream + "    send_buffers: zero\n"), 6, "send_buffers",
               "pattern, untouched");
}

TEST(SuiteErrors, WindowSignalingAndReceiveDepth) {
  const std::string bw = "    op: send\n    pattern: bandwidth\n";  // lines 4-5
  expect_error(one_test(bw + "    window: 8\n    signal_every: 16\n"), 7, "signal_every",
               "must not exceed the window (8)");
  expect_error(one_test(bw + "    window: 6\n    post_list: 4\n"), 7, "post_list",
               "the window (6) must be a multiple of post_list");
  expect_error(one_test(bw + "    window: 8\n    signal_every: 2\n    post_list: 4\n"), 8,
               "post_list", "signal_every (2) must be a multiple of post_list");
  expect_error(one_test(bw + "    rx_depth: 64\n    rx_replenish: 65\n"), 7, "rx_replenish",
               "must not exceed rx_depth (64)");
  expect_error(one_test(bw + "    window: 0\n"), 6, "window", "at least 1");
  expect_error(one_test(bw + "    endpoints: 0\n"), 6, "endpoints", "at least 1");
  expect_error(one_test(bw + "    cq_moderation: 0\n"), 6, "cq_moderation", "at least 1");
  expect_error(one_test(bw + "    window: 5000000000\n"), 6, "window", "at most");
  // Ceilings far above any queue, so 2^32-1 is refused while reading, not
  // overflowed into a depth or a few billion rings (std::bad_alloc).
  expect_error(one_test(bw + "    window: 4294967295\n"), 6, "window", "must be at most 1048576");
  expect_error(one_test(bw + "    endpoints: 4294967295\n"), 6, "endpoints",
               "must be at most 4096");
  expect_error(one_test(bw + "    rx_depth: 1048577\n"), 6, "rx_depth", "must be at most 1048576");
  expect_error(one_test(bw + "    signal_every: 4294967295\n"), 6, "signal_every", "at most");
}

TEST(SuiteErrors, Sizes) {
  expect_error(one_test("    op: fetch_add\n    sizes: [16]\n"), 5, "sizes", "8 bytes");
  expect_error(one_test("    op: cswap\n    sizes: [8, 8]\n"), 5, "sizes", "8 bytes");
  // Sizes are shared: an atomic flow beside a write flow needs them to be [8].
  expect_error(
      one_test("    op: write\n    sizes: [64]\n    flows:\n      - {}\n      - {op: cswap}\n"), 5,
      "sizes", "8 bytes");
  expect_error(one_test("    op: send\n    sizes:\n      - 8\n      - 0\n"), 7, "sizes",
               "size 0 is outside");
  expect_error(one_test("    op: send\n    sizes: [2G]\n"), 5, "sizes", "outside 1 B .. 1 GiB");
  expect_error(one_test("    op: send\n    sizes: 8..2\n"), 5, "sizes", "larger one");
  expect_error(one_test("    op: send\n    sizes: []\n"), 5, "sizes", "no sizes");
}

TEST(SuiteErrors, TestsAndPresets) {
  expect_error("suite: s\ntests: []\n", 2, "tests", "non-empty list");
  expect_error("suite: s\n", 1, "tests", "non-empty list");
  expect_error(one_test("    op: send\n    preset: perftset\n"), 5, "preset",
               "did you mean 'perftest'?");
  expect_error("suite: s\ndefaults:\n  preset: mpi\ntests:\n  - {name: t, op: send}\n", 3, "preset",
               "expected one of: perftest, osu, itperf");
}

TEST(SuiteErrors, YamlSyntax) {
  const SpecError e = suite_error("suite: s\ntests:\n  - name: t\n    op: [send\n");
  EXPECT_EQ(e.key, "yaml");
  EXPECT_GE(e.line, 4);
  EXPECT_THAT(e.what(), HasSubstr(kFile + ":"));
}

TEST(SuiteErrors, LoadSuiteOfAMissingFile) {
  try {
    load_suite("/nonexistent/quick.yaml");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file, "/nonexistent/quick.yaml");
    EXPECT_THAT(e.what(), HasSubstr("cannot read"));
  }
}

// ---------------------------------------------------------------- size ranges

TEST(SizeRange, GeometricArithmeticAndSingle) {
  const auto geometric = parse_size_range("2..8M x2");
  ASSERT_EQ(geometric.size(), 23u);
  EXPECT_EQ(geometric.front(), 2u);
  EXPECT_EQ(geometric[1], 4u);
  EXPECT_EQ(geometric.back(), 8u << 20);
  EXPECT_EQ(parse_size_range("2..8M"), geometric);  // x2 when no step is given
  EXPECT_EQ(parse_size_range(" 2 .. 8M  x2 "), geometric);

  const auto arithmetic = parse_size_range("1K..64K +1K");
  ASSERT_EQ(arithmetic.size(), 64u);
  EXPECT_EQ(arithmetic[1], 2048u);
  EXPECT_EQ(arithmetic.back(), 65536u);
  EXPECT_THAT(parse_size_range("1K..10K +4K"), ElementsAre(1024u, 5120u, 9216u));
  EXPECT_THAT(parse_size_range("1..100 x10"), ElementsAre(1u, 10u, 100u));
  EXPECT_THAT(parse_size_range("4K"), ElementsAre(4096u));
  EXPECT_THAT(parse_size_range("64"), ElementsAre(64u));
}

TEST(SizeRange, Errors) {
  for (const char* bad : {"", "abc", "8..2", "0..8", "2..8M x1", "2..8M y2", "2..8M +0", "2..",
                          "..8", "1..1G +1", "99999999999999999999", "2..8M x"}) {
    EXPECT_THROW(parse_size_range(bad), std::invalid_argument) << bad;
  }
}

TEST(Scalars, Seconds) {
  EXPECT_DOUBLE_EQ(parse_seconds("2s"), 2.0);
  EXPECT_DOUBLE_EQ(parse_seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5"), 1.5);
  EXPECT_DOUBLE_EQ(parse_seconds("1m"), 60.0);
  // Parts of a second divide, so they print as written (5e-05, not
  // 4.9999999999999996e-05).
  EXPECT_EQ(parse_seconds("50us"), 5e-05);
  EXPECT_EQ(parse_seconds("250ns"), 2.5e-07);
  EXPECT_EQ(parse_seconds("3ms"), 0.003);
  for (const char* bad : {"", "s", "fast", "-1s", "2h", "us", "-5us"}) {
    EXPECT_THROW(parse_seconds(bad), std::invalid_argument) << bad;
  }
}

TEST(Scalars, EnumNamesRoundTrip) {
  for (auto p : {Pattern::latency, Pattern::bandwidth, Pattern::message_rate}) {
    EXPECT_EQ(parse_pattern(model::to_string(p)), p);
  }
  for (auto d : {Direction::uni, Direction::bi}) {
    EXPECT_EQ(parse_direction(model::to_string(d)), d);
  }
  for (auto m : {WindowMode::streaming, WindowMode::window_ack}) {
    EXPECT_EQ(parse_window_mode(model::to_string(m)), m);
  }
  for (auto c : {CompletionMode::poll, CompletionMode::event}) {
    EXPECT_EQ(parse_completion_mode(model::to_string(c)), c);
  }
  EXPECT_EQ(model::to_string(Pattern::message_rate), "message_rate");
  EXPECT_EQ(model::to_string(WindowMode::window_ack), "window_ack");
  EXPECT_FALSE(parse_pattern("Latency"));
  EXPECT_FALSE(parse_direction(""));
  EXPECT_FALSE(parse_window_mode("window-ack"));
  EXPECT_FALSE(parse_completion_mode("events"));
}

TEST(Scalars, Sha256KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding spills into a second block.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// ---------------------------------------------------------------- configs

TEST(ConfigParse, AllSectionsAndLines) {
  const auto config = parse_config(R"(name: fast-ucx
plugin: ucx
description: UCX over shared memory
options:
  transports: posix,self
  rndv_threshold: 8K
env:
  UCX_RNDV_THRESH: 8K
  UCX_LOG_LEVEL: warn
)",
                                   "configs/x.yaml");
  EXPECT_EQ(config.name, "fast-ucx");
  EXPECT_EQ(config.plugin, "ucx");
  EXPECT_EQ(config.file, "configs/x.yaml");
  EXPECT_EQ(config.options.at("transports"), "posix,self");
  EXPECT_EQ(config.option_lines.at("transports"), 5u);
  EXPECT_EQ(config.option_lines.at("rndv_threshold"), 6u);
  EXPECT_EQ(config.environment.at("UCX_RNDV_THRESH"), "8K");
  EXPECT_EQ(config.environment.at("UCX_LOG_LEVEL"), "warn");
  EXPECT_EQ(config.content_hash.size(), 64u);
}

TEST(ConfigParse, NameDefaultsToTheStemAndOptionsMayBeEmpty) {
  const auto config = parse_config("plugin: tcp\noptions: {}\n", "some/dir/tcp-lo.yaml");
  EXPECT_EQ(config.name, "tcp-lo");
  EXPECT_TRUE(config.options.empty());
}

TEST(ConfigParse, ConfigDirNamesTheConfigFilesAbsoluteDirectory) {
  const auto config = parse_config(
      "plugin: udapl\noptions:\n  dat_conf: ${config_dir}/x.dat.conf\n"
      "env:\n  A: ${config_dir}:${config_dir}\n",
      "/opt/cfg/../uniperf/configs/udapl.yaml");
  EXPECT_EQ(config.options.at("dat_conf"), "/opt/uniperf/configs/x.dat.conf");
  EXPECT_EQ(config.environment.at("A"), "/opt/uniperf/configs:/opt/uniperf/configs");
  const auto relative = parse_config("plugin: tcp\noptions:\n  a: ${config_dir}\n", "t.yaml");
  EXPECT_EQ(relative.options.at("a"), std::filesystem::current_path().lexically_normal().string());
}

TEST(ConfigParse, Errors) {
  auto config_error = [](const std::string& text) {
    try {
      parse_config(text, "c.yaml");
    } catch (const SpecError& e) {
      return e;
    }
    ADD_FAILURE() << "no SpecError for:\n" << text;
    return SpecError("", -1, "", "none");
  };
  auto e = config_error("name: x\n");
  EXPECT_EQ(e.key, "plugin");
  EXPECT_THAT(e.what(), HasSubstr("missing"));
  e = config_error("plugin: ucx\nopts:\n  a: 1\n");
  EXPECT_EQ(e.key, "opts");
  EXPECT_EQ(e.line, 2);
  EXPECT_THAT(e.what(), HasSubstr("did you mean 'options'?"));
  e = config_error("plugin: ucx\noptions:\n  transports: [a, b]\n");
  EXPECT_EQ(e.key, "options.transports");
  EXPECT_EQ(e.line, 3);
  e = config_error("plugin: ucx\noptions: posix\n");
  EXPECT_EQ(e.key, "options");
  EXPECT_THAT(e.what(), HasSubstr("mapping"));
  e = config_error("plugin: [ucx]\n");
  EXPECT_EQ(e.key, "plugin");
  EXPECT_EQ(e.line, 1);
}

class ValidateOptions : public ::testing::Test {
 protected:
  const std::vector<OptionSpec> specs_ = {
      {"address", OptionType::string, "0.0.0.0", "listen address"},
      {"busy_poll", OptionType::integer, "0", "microseconds"},
      {"nodelay", OptionType::boolean, "true", "TCP_NODELAY"},
      {"sndbuf", OptionType::size, "", "SO_SNDBUF"},
  };

  SpecError error_for(const std::string& options_yaml) {
    const auto config = parse_config("plugin: tcp\noptions:\n" + options_yaml, "configs/tcp.yaml");
    try {
      validate_options(config, specs_);
    } catch (const SpecError& e) {
      return e;
    }
    ADD_FAILURE() << "no SpecError for:\n" << options_yaml;
    return SpecError("", -1, "", "none");
  }
};

TEST_F(ValidateOptions, FillsDefaultsAndKeepsGivenValues) {
  const auto config = parse_config(
      "plugin: tcp\noptions:\n  sndbuf: 4M\n  nodelay: No\n  busy_poll: -5\n", "configs/tcp.yaml");
  const Options options = validate_options(config, specs_);
  EXPECT_EQ(options.string("address"), "0.0.0.0");  // default
  EXPECT_EQ(options.size("sndbuf"), 4u << 20);
  EXPECT_FALSE(options.boolean("nodelay"));
  EXPECT_EQ(options.string("nodelay"), "false");  // normalised for Options::boolean
  EXPECT_EQ(options.integer("busy_poll"), -5);
  EXPECT_EQ(options.all().size(), specs_.size());

  const auto empty = validate_options(parse_config("plugin: tcp\n", "c.yaml"), specs_);
  EXPECT_TRUE(empty.boolean("nodelay"));
  EXPECT_FALSE(empty.has("sndbuf"));  // "" default: not set
}

TEST_F(ValidateOptions, UnknownKeyWithSuggestion) {
  const auto e = error_for("  address: 1.2.3.4\n  nodelai: true\n");
  EXPECT_EQ(e.file, "configs/tcp.yaml");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "options.nodelai");
  EXPECT_THAT(e.what(), HasSubstr("configs/tcp.yaml:4: options.nodelai: "));
  EXPECT_THAT(e.what(), HasSubstr("did you mean 'nodelay'?"));
}

TEST_F(ValidateOptions, IllTypedValues) {
  auto e = error_for("  busy_poll: 12x\n");
  EXPECT_EQ(e.key, "options.busy_poll");
  EXPECT_EQ(e.line, 3);
  EXPECT_THAT(e.what(), HasSubstr("whole number"));
  e = error_for("  sndbuf: 4Q\n");
  EXPECT_EQ(e.key, "options.sndbuf");
  EXPECT_THAT(e.what(), HasSubstr("a size"));
  e = error_for("  nodelay: maybe\n");
  EXPECT_EQ(e.key, "options.nodelay");
  EXPECT_THAT(e.what(), HasSubstr("true or false"));
}

// ---------------------------------------------------------------- shipped files

std::vector<std::filesystem::path> yaml_files(const std::string& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(UNIPERF_SOURCE_DIR) + "/" + folder)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  return files;
}

TEST(ShippedFiles, EverySuiteParses) {
  const auto files = yaml_files("suites");
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_NO_THROW({
      const auto suite = load_suite(file.string());
      EXPECT_FALSE(suite.tests.empty());
    });
  }
}

TEST(ShippedFiles, EveryConfigParses) {
  const auto files = yaml_files("configs");
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_NO_THROW({
      const auto config = load_config(file.string());
      EXPECT_FALSE(config.plugin.empty());
      EXPECT_EQ(config.name, file.stem().string());
    });
  }
}

TEST(ShippedFiles, QuickSuiteCoversTheIssue) {
  const auto suite = load_suite(std::string(UNIPERF_SOURCE_DIR) + "/suites/quick.yaml");
  EXPECT_EQ(suite.name, "quick");
  std::vector<std::string> names;
  for (const auto& test : suite.tests) {
    names.push_back(test.name);
    EXPECT_TRUE(test.flows[0].validate) << test.name;
  }
  EXPECT_THAT(names, ElementsAre("send_lat", "write_lat", "read_lat", "fetch_add_lat", "cswap_lat",
                                 "send_bw", "write_bw", "read_bw", "send_msgrate"));
  EXPECT_THAT(suite.tests[3].sizes, ElementsAre(8u));
  EXPECT_EQ(suite.tests[5].flows[0].pattern, Pattern::bandwidth);
  EXPECT_EQ(suite.tests[8].flows[0].pattern, Pattern::message_rate);

  const auto ucx = load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/ucx-shm.yaml");
  EXPECT_EQ(ucx.plugin, "ucx");
  EXPECT_EQ(ucx.options.at("transports"), "posix,self");
  const auto ucx_tcp = load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/ucx-tcp.yaml");
  EXPECT_EQ(ucx_tcp.options.at("transports"), "tcp,self");
  EXPECT_EQ(load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/tcp.yaml").plugin, "tcp");
}

// ---------------------------------------------------------------- competing flows

TEST(SuiteParse, StopRulesAndLoadFlows) {
  const auto test =
      only_test(one_test("    until: first_done\n"
                         "    sizes: [8]\n"
                         "    flows:\n"
                         "      - {op: send, pattern: latency}\n"
                         "      - {op: write, pattern: bandwidth, window: 8, role: load}\n"));
  EXPECT_EQ(test.until, model::StopRule::first_done);
  ASSERT_EQ(test.flows.size(), 2u);
  EXPECT_EQ(test.flows[0].role, model::Role::measured);
  EXPECT_EQ(test.flows[1].role, model::Role::load);
  EXPECT_EQ(only_test(one_test("    op: send\n")).until, model::StopRule::all_done);
}

TEST(SuiteParse, FlowsInSeparateProcesses) {
  const auto test =
      only_test(one_test("    process: separate\n"
                         "    until: first_done\n"
                         "    flows:\n"
                         "      - {op: send, pattern: latency}\n"
                         "      - {op: write, pattern: bandwidth}\n"));
  EXPECT_EQ(test.process, model::FlowProcesses::separate);
  EXPECT_EQ(only_test(one_test("    op: send\n")).process, model::FlowProcesses::shared);
  expect_error(one_test("    process: seperate\n    op: send\n"), 4, "process",
               "unknown choice 'seperate' (did you mean 'separate'?)");
  expect_error(one_test("    op: send\n    process: separate\n"), 5, "process",
               "this test has one flow");
  expect_error(one_test("    process: separate\n"
                        "    pairs: all\n"
                        "    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: send, pattern: latency}\n"),
               4, "process", "it cannot also pair the ranks by pairs: all");
}

TEST(SuiteParse, AFlowsOwnSizeWithAUnit) {
  const auto test =
      only_test(one_test("    sizes: [1M, 2M]\n"
                         "    flows:\n"
                         "      - {op: write, pattern: bandwidth, flow_size: 64M}\n"
                         "      - {op: write, pattern: bandwidth}\n"));
  EXPECT_EQ(test.flows[0].size, 64u << 20);
  EXPECT_EQ(test.flows[1].size, 0u);
  const auto plans = engine::plan_flows(test, testing::FakeContext::everything());
  EXPECT_EQ(plans[0].sizes, (std::vector<std::uint64_t>{64u << 20, 64u << 20}));
  EXPECT_EQ(plans[0].max_size, 64u << 20);
  EXPECT_EQ(plans[1].sizes, (std::vector<std::uint64_t>{1u << 20, 2u << 20}));
  expect_error(one_test("    op: write\n    flow_size: 1M\n"), 3, "flow_size",
               "flow_size sets a flow apart from the others of its test");
  expect_error(one_test("    flows:\n"
                        "      - {op: write, pattern: bandwidth, flow_size: 2G}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               5, "flow_size", "must be at most");
}

TEST(SuiteParse, AFlowsOwnLengthAndStart) {
  const auto test =
      only_test(one_test("    duration: 2s\n"
                         "    margin: 100ms\n"
                         "    flows:\n"
                         "      - {op: write, pattern: bandwidth, flow_duration: 500ms}\n"
                         "      - {op: send, pattern: latency, flow_iterations: 300, "
                         "start_offset: 250ms}\n"
                         "      - {op: write, pattern: bandwidth}\n"));
  EXPECT_DOUBLE_EQ(test.flows[0].seconds, 0.5);
  EXPECT_EQ(test.flows[1].iterations, 300u);
  EXPECT_DOUBLE_EQ(test.flows[1].start_offset, 0.25);
  const auto plans = engine::plan_flows(test, testing::FakeContext::everything());
  // Its own duration keeps the test's margin; its own iterations have none.
  EXPECT_DOUBLE_EQ(plans[0].run.seconds, 0.5);
  EXPECT_DOUBLE_EQ(plans[0].run.margin, 0.1);
  EXPECT_EQ(plans[1].run.iterations, 300u);
  EXPECT_DOUBLE_EQ(plans[1].run.seconds, 0);
  EXPECT_DOUBLE_EQ(plans[1].run.margin, 0);
  EXPECT_DOUBLE_EQ(plans[2].run.seconds, 2);
  // The watchdog's allowance covers the longest: 2 s and both margins.
  EXPECT_DOUBLE_EQ(model::longest_timed_seconds(test), 2.2);

  expect_error(one_test("    op: write\n    start_offset: 1s\n"), 3, "start_offset",
               "start_offset sets a flow apart from the others of its test");
  expect_error(one_test("    flows:\n"
                        "      - {op: write, pattern: bandwidth, flow_iterations: 5, "
                        "flow_duration: 1s}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               5, "flow_duration", "not both");
  expect_error(one_test("    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: write, pattern: bandwidth, role: load, flow_duration: 1s}\n"),
               6, "flow_duration", "a load flow runs until the measured flows are done");
  expect_error(one_test("    duration: 2s\n    margin: 500ms\n"
                        "    flows:\n"
                        "      - {op: write, pattern: bandwidth, flow_duration: 1s}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               3, "flow_duration", "twice the test's margin");
  expect_error(one_test("    flows:\n"
                        "      - {op: write, pattern: bandwidth, start_offset: soon}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               5, "start_offset", "expected a time");
}

TEST(SuiteParse, ABaselineRunsTheLatencyFlowAloneFirst) {
  const auto suite =
      parse_suite(one_test("    sizes: [8, 64]\n"
                           "    duration: 1s\n"
                           "    baseline: solo\n"
                           "    flows:\n"
                           "      - {op: send, pattern: latency, window: 1}\n"
                           "      - {op: write, pattern: bandwidth, role: load}\n"
                           "  - name: again\n"
                           "    baseline: t.alone\n"
                           "    sizes: [8]\n"
                           "    flows:\n"
                           "      - {op: send, pattern: latency, flow_iterations: 99}\n"
                           "      - {op: write, pattern: bandwidth}\n"),
                  kFile);
  ASSERT_EQ(suite.tests.size(), 3u);
  const auto& alone = suite.tests[0];
  EXPECT_EQ(alone.name, "t.alone");
  ASSERT_EQ(alone.flows.size(), 1u);
  EXPECT_EQ(alone.flows[0].pattern, model::Pattern::latency);
  EXPECT_EQ(alone.sizes, (std::vector<std::uint64_t>{8, 64}));
  EXPECT_DOUBLE_EQ(alone.duration.seconds, 1);
  EXPECT_TRUE(alone.baselines.empty());
  EXPECT_EQ(suite.tests[1].name, "t");
  EXPECT_EQ(suite.tests[1].baselines, (std::vector<std::string>{"t.alone", ""}));
  EXPECT_EQ(suite.tests[2].baselines, (std::vector<std::string>{"t.alone", ""}));

  // A flow's own size and length become its alone test's.
  const auto own = parse_suite(one_test("    sizes: [1M]\n"
                                        "    baseline: solo\n"
                                        "    flows:\n"
                                        "      - {op: write, pattern: bandwidth}\n"
                                        "      - {op: send, pattern: latency, flow_size: 8, "
                                        "flow_iterations: 77, start_offset: 1s}\n"
                                        "      - {op: send, pattern: latency}\n"),
                               kFile);
  ASSERT_EQ(own.tests.size(), 3u);
  EXPECT_EQ(own.tests[0].name, "t.flow2.alone");
  EXPECT_EQ(own.tests[0].sizes, (std::vector<std::uint64_t>{8}));
  EXPECT_EQ(own.tests[0].duration.iterations, 77u);
  EXPECT_EQ(own.tests[0].flows[0].size, 0u);
  EXPECT_DOUBLE_EQ(own.tests[0].flows[0].start_offset, 0);
  EXPECT_EQ(own.tests[1].name, "t.flow3.alone");
  EXPECT_EQ(own.tests[1].sizes, (std::vector<std::uint64_t>{1u << 20}));

  // A suite default applies where it can.
  const auto defaulted = parse_suite(
      "suite: s\ndefaults: {baseline: solo}\ntests:\n"
      "  - {name: lone, op: send}\n",
      kFile);
  EXPECT_EQ(defaulted.tests.size(), 1u);

  expect_error(one_test("    op: send\n    baseline: solo\n"), 5, "baseline",
               "has no measured latency flow beside others");
  expect_error(one_test("    baseline: nope\n"
                        "    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               4, "baseline", "'nope' names no earlier test");
  expect_error(one_test("    op: write\n    pattern: bandwidth\n"
                        "  - name: u\n"
                        "    baseline: t\n"
                        "    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: write, pattern: bandwidth}\n"),
               7, "baseline", "is no latency test of one flow");
  expect_error(one_test("    baseline: solo\n"
                        "    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: write, pattern: bandwidth}\n"
                        "  - {name: t.alone, op: send}\n"),
               8, "name", "duplicate test name 't.alone'");
}

TEST(SuiteParse, ALoadIsAOneWayStreamBesideAMeasuredFlow) {
  expect_error(one_test("    until: fist_done\n    op: send\n"), 4, "until",
               "unknown stop rule 'fist_done' (did you mean 'first_done'?)");
  expect_error(one_test("    flows:\n"
                        "      - {op: send, pattern: latency, role: load}\n"
                        "      - {op: send, pattern: latency}\n"),
               5, "role", "a load flow is a stream");
  expect_error(one_test("    flows:\n"
                        "      - {op: send, pattern: latency}\n"
                        "      - {op: send, pattern: bandwidth, direction: bi, role: load}\n"),
               6, "role", "one way");
  expect_error(one_test("    flows:\n"
                        "      - {op: send, pattern: bandwidth, role: load}\n"),
               3, "role", "a test needs a measured flow");
}

}  // namespace
}  // namespace uniperf::suite
