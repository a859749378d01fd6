// `uniperf run --quick` (suite/quick.hpp): a suite's quick: keys replace its
// own where it sets them, and go into defaults where it sets them nowhere.
#include "suite/quick.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::suite {
namespace {

constexpr const char* kSuite = R"(suite: s
quick: {sizes: [4K], fragment: [1K, 2K], validate: true, duration: 0.1s}
defaults: {pattern: bandwidth, op: send, window: 8, duration: 1s, sizes: [4K, 64K, 1M]}
tests:
  - {name: whole}
  - {name: copy, delivery: copy, fragment: 256..64K x4}
  - {name: small, sizes: [8, 64]}
  - {name: counted, pattern: latency, window: 1, iterations: 100, sizes: [8]}
)";

const model::TestSpec& named(const model::SuiteSpec& suite, const std::string& name) {
  const auto t = std::find_if(suite.tests.begin(), suite.tests.end(),
                              [&](const auto& test) { return test.name == name; });
  if (t == suite.tests.end()) throw std::runtime_error("no test " + name);
  return *t;
}

TEST(Quick, KeysReplaceTheSuitesOwnWhereItSetsThemAndGoToDefaultsElse) {
  const std::string text = apply_quick(kSuite, "s.yaml");
  EXPECT_EQ(text.rfind("# s.yaml with its quick: keys", 0), 0u) << text;
  const model::SuiteSpec suite = parse_suite(text, "s.yaml");
  // sizes: replaced in defaults and in the test that set its own.
  EXPECT_EQ(named(suite, "whole").sizes, (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(named(suite, "small").sizes, (std::vector<std::uint64_t>{4096}));
  // fragment: only where a test set it; a whole-message test stays whole.
  EXPECT_EQ(named(suite, "whole").flows.front().fragment, 0u);
  EXPECT_EQ(named(suite, "copy.fragment_1K").flows.front().fragment, 1024u);
  EXPECT_EQ(named(suite, "copy.fragment_2K").flows.front().fragment, 2048u);
  EXPECT_EQ(suite.tests.size(), 5u);  // whole, copy x2, small, counted
  // validate: set nowhere, so in defaults: every test.
  for (const auto& t : suite.tests) EXPECT_TRUE(t.flows.front().validate) << t.name;
  // duration: the default's, so a test counted in iterations keeps them.
  EXPECT_DOUBLE_EQ(named(suite, "whole").duration.seconds, 0.1);
  EXPECT_EQ(named(suite, "counted").duration.iterations, 100u);
}

TEST(Quick, ASuiteWithoutQuickKeysOrWithBadOnesIsRefusedAtTheKey) {
  try {
    apply_quick("suite: s\ntests:\n  - {name: t, pattern: latency, op: send}\n", "s.yaml");
    FAIL() << "--quick without quick:";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key, "quick");
    EXPECT_NE(std::string(e.what()).find("this suite has none"), std::string::npos);
  }
  std::string bad = kSuite;
  bad.replace(bad.find("duration: 0.1s"), 14, "duration: soon");
  try {
    apply_quick(bad, "s.yaml");
    FAIL() << "accepted duration: soon";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file, "s.yaml");
    EXPECT_EQ(e.line, 2);
    EXPECT_EQ(e.key, "quick");
    EXPECT_NE(std::string(e.what()).find("duration"), std::string::npos) << e.what();
  }
  std::string unknown = kSuite;
  unknown.replace(unknown.find("validate"), 8, "validat");
  EXPECT_THROW(parse_suite(unknown, "s.yaml"), SpecError);
}

// The quick forms that are a gate's (the e2e tests', the lab's): the same
// tests, ops and sizes as the whole suite, so nothing goes untested.
class ShippedQuickForm : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedQuickForm, KeepsEveryTestAndSizeAndDoesLessOfEach) {
  const std::string file = std::string(UNIPERF_SOURCE_DIR) + "/suites/" + GetParam() + ".yaml";
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty()) << file;
  const model::SuiteSpec full = parse_suite(text, file);
  const model::SuiteSpec quick = parse_suite(apply_quick(text, file), file);
  ASSERT_EQ(quick.tests.size(), full.tests.size());
  for (std::size_t i = 0; i < full.tests.size(); ++i) {
    const auto& was = full.tests[i];
    const auto& now = quick.tests[i];
    SCOPED_TRACE(was.name);
    EXPECT_EQ(now.name, was.name);
    EXPECT_EQ(now.sizes, was.sizes);
    EXPECT_EQ(now.flows.front().op, was.flows.front().op);
    EXPECT_EQ(now.flows.front().validate, was.flows.front().validate);
    // A counted test counts a tenth or less, a timed one runs shorter.
    if (was.duration.seconds > 0) {
      EXPECT_GT(now.duration.seconds, 0.0);
      EXPECT_LT(now.duration.seconds, was.duration.seconds);
    } else {
      EXPECT_EQ(now.duration.seconds, 0.0);
      EXPECT_GT(now.duration.iterations, 0u);
      EXPECT_LE(now.duration.iterations * 10, was.duration.iterations);
    }
    EXPECT_LE(now.duration.warmup_iterations, was.duration.warmup_iterations);
  }
}

INSTANTIATE_TEST_SUITE_P(Suites, ShippedQuickForm, ::testing::Values("quick", "itperf"));

}  // namespace
}  // namespace uniperf::suite
