// OptionSpec::choices and min/max: the config loader rejects a value outside
// them with file:line:key (suite/option_values), `uniperf info` describes
// them, and plugin_support's Choice table both declares and parses an enum.
#include "suite/option_values.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <uniperf/plugin_support.hpp>

#include "suite/suite.hpp"

namespace uniperf::suite {
namespace {

using ::testing::HasSubstr;

enum class Kind { rc, uc, ud };
constexpr support::Choice<Kind> kKinds[] = {{"rc", Kind::rc}, {"uc", Kind::uc}, {"ud", Kind::ud}};

const std::vector<OptionSpec> kSpecs = {
    {"transport", OptionType::string, "rc", "queue pair type", support::choice_names(kKinds)},
    {"port", OptionType::integer, "0", "listening port", {}, 0, 65535},
    {"retry", OptionType::integer, "7", "retries", {}, std::nullopt, 7},
    {"buffer", OptionType::size, "", "socket buffer", {}, 1, 1 << 20},
    {"provider", OptionType::string, "", "any provider name"},
};

/// The SpecError validate_options throws for the `options:` lines.
SpecError error_for(const std::string& options_yaml) {
  const auto config = parse_config("plugin: demo\noptions:\n" + options_yaml, "configs/demo.yaml");
  try {
    validate_options(config, kSpecs);
  } catch (const SpecError& e) {
    return e;
  }
  ADD_FAILURE() << "no SpecError for:\n" << options_yaml;
  return SpecError("", -1, "", "none");
}

TEST(OptionValues, AStringOutsideItsChoicesNamesFileLineKeyAndTheChoices) {
  const auto e = error_for("  port: 10\n  transport: xrc\n");
  EXPECT_EQ(e.file, "configs/demo.yaml");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.key, "options.transport");
  EXPECT_THAT(e.what(), HasSubstr("configs/demo.yaml:4: options.transport: "
                                  "expected one of rc, uc, ud, got 'xrc'"));
}

TEST(OptionValues, NumbersOutsideTheirRangeNameFileLineKeyAndTheRange) {
  auto e = error_for("  port: 70000\n");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.key, "options.port");
  EXPECT_THAT(e.what(), HasSubstr("configs/demo.yaml:3: options.port: expected 0..65535, "
                                  "got '70000'"));
  e = error_for("  port: -1\n");
  EXPECT_EQ(e.key, "options.port");
  e = error_for("  transport: uc\n  retry: 8\n");
  EXPECT_EQ(e.line, 4);
  EXPECT_THAT(e.what(), HasSubstr("options.retry: expected <= 7, got '8'"));
  // Sizes compare in bytes, after their suffix.
  e = error_for("  buffer: 2M\n");
  EXPECT_EQ(e.key, "options.buffer");
  EXPECT_THAT(e.what(), HasSubstr("expected 1..1048576 bytes, got '2M'"));
}

TEST(OptionValues, ValuesInsideTheirSetsAndUnsetOnesPass) {
  const auto config = parse_config(
      "plugin: demo\noptions:\n  transport: ud\n  port: 65535\n  retry: -3\n  buffer: 1M\n"
      "  provider: anything\n",
      "configs/demo.yaml");
  const Options options = validate_options(config, kSpecs);
  EXPECT_EQ(support::choice(options, "transport", kKinds, "demo"), Kind::ud);
  EXPECT_EQ(options.integer("port"), 65535);
  EXPECT_EQ(options.size("buffer"), 1u << 20);
  // The defaults: "" (buffer unset) is never checked against the range.
  const Options defaults = validate_options(parse_config("plugin: demo\n", "c.yaml"), kSpecs);
  EXPECT_FALSE(defaults.has("buffer"));
  EXPECT_EQ(support::choice(defaults, "transport", kKinds, "demo"), Kind::rc);
}

// -c demo:KEY=VALUE,... is a config as a file would give it, checked by the
// same option specs with the same errors.
TEST(InlineConfig, OptionsAndEnvironmentFromTheCommandLine) {
  const auto config =
      parse_inline_config("demo:transport=ud,port=18515,provider=a,b,env.DEMO_TRACE=1");
  EXPECT_EQ(config.name, "demo:transport=ud,port=18515,provider=a,b,env.DEMO_TRACE=1");
  EXPECT_EQ(config.plugin, "demo");
  EXPECT_EQ(config.options.at("provider"), "a,b") << "a piece without = continues the value";
  EXPECT_EQ(config.environment.at("DEMO_TRACE"), "1");
  const Options options = validate_options(config, kSpecs);
  EXPECT_EQ(options.integer("port"), 18515);
  EXPECT_EQ(support::choice(options, "transport", kKinds, "demo"), Kind::ud);
  EXPECT_EQ(parse_inline_config("demo").options.size(), 0u) << "a bare plugin: its defaults";
  EXPECT_EQ(parse_inline_config("demo:port=1").content_hash,
            parse_inline_config("demo:port=1").content_hash);

  try {
    validate_options(parse_inline_config("demo:port=99999"), kSpecs);
    ADD_FAILURE() << "a port out of range passed";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key, "options.port");
    EXPECT_THAT(e.what(), HasSubstr("-c:0: options.port: expected 0..65535, got '99999'"));
  }
  const auto refused = [](const std::string& text) {
    try {
      parse_inline_config(text);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refused("demo:port"), HasSubstr("'port' in 'demo:port' is no KEY=VALUE"));
  EXPECT_THAT(refused("demo:port=1,port=2"), HasSubstr("options.port: given twice"));
  EXPECT_THAT(refused("Demo:port=1"), HasSubstr("no config inline"));
  EXPECT_THAT(refused("demo:=1"), HasSubstr("empty key"));

  EXPECT_TRUE(is_inline_config("demo:port=1", {}));
  EXPECT_TRUE(is_inline_config("demo", {"demo"}));
  EXPECT_FALSE(is_inline_config("demo", {"other"})) << "a missing file, not a plugin";
  EXPECT_FALSE(is_inline_config("configs/x:y.yaml", {}));
  EXPECT_FALSE(is_inline_config("x:y.yaml", {}));
}

TEST(OptionValues, InfoDescribesChoicesAndRanges) {
  EXPECT_EQ(describe_option_values(kSpecs[0]), " (one of: rc, uc, ud)");
  EXPECT_EQ(describe_option_values(kSpecs[1]), " (0..65535)");
  EXPECT_EQ(describe_option_values(kSpecs[2]), " (<= 7)");
  EXPECT_EQ(describe_option_values(kSpecs[4]), "");
}

TEST(OptionValues, AChoiceOutsideTheTableIsAnOptionError) {
  // Options built by hand never went through the loader.
  const Options options(std::map<std::string, std::string>{{"transport", "xrc"}});
  EXPECT_THROW(support::choice(options, "transport", kKinds, "demo"), OptionError);
}

}  // namespace
}  // namespace uniperf::suite
