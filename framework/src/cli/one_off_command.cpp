#include "cli/one_off_command.hpp"

#include <yaml-cpp/yaml.h>

#include "suite/presets.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

/// A count flag's text, checked before CLI11 converts it: "-1" would wrap
/// to 2^64-1 in an unsigned option.
const CLI::Validator kWholeNumber(
    [](std::string& text) -> std::string {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return "expected a whole number (0 or more), got '" + text + "'";
      return "";
    },
    "N");

}  // namespace

void add_one_off_options(CLI::App* command, OneOffOptions& o, const std::string& pattern) {
  // What a test of this pattern takes where a flag is not given: a test
  // parsed from its op and pattern alone, so the help cannot drift from the
  // suite reader's defaults (op send: the one-off's).
  const model::TestSpec base =
      suite::parse_test(YAML::Load("{name: t, op: send, pattern: " + pattern + "}"), "<defaults>");
  const model::FlowSpec& flow = base.flows.front();
  const auto with_default = [](std::string_view help, const std::string& value) {
    return std::string(help) + " [default " + value + "]";
  };
  std::string sizes;
  for (const auto size : base.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(size);
  command
      ->add_option("-s,--size", o.sizes,
                   with_default("Message size(s): 64, 4K, or a range 2..8M x2", sizes))
      ->delimiter(',');
  command->add_flag("-a,--all", o.all_sizes, "All sizes 2..8M in powers of two");
  for (std::size_t i = 0; i < std::size(model::kRunFields); ++i) {
    const model::RunField& field = model::kRunFields[i];
    if (field.cli_names.empty()) continue;
    const std::string names(field.cli_names);
    std::string help(field.help);
    if (field.count64 != nullptr && base.duration.*field.count64 != 0)
      help = with_default(help, std::to_string(base.duration.*field.count64));
    if (field.kind == model::RunKind::seconds) {
      command->add_option(names, o.run[i].text, help);
    } else {
      command->add_option(names, o.run[i].number, help)->check(kWholeNumber);
    }
  }
  for (std::size_t i = 0; i < std::size(model::kFlowFields); ++i) {
    const model::FlowField& field = model::kFlowFields[i];
    if (field.cli.names.empty()) continue;
    const std::string names(field.cli.names);
    const std::string value = field.text(flow);
    if (!field.cli.sets.empty()) {
      command->add_flag(names, o.flow[i].on,
                        std::string(field.cli.help.empty() ? field.help : field.cli.help));
    } else if (field.kind == model::FieldKind::count && !field.in_bytes) {
      command->add_option(names, o.flow[i].number, with_default(field.help, value))
          ->check(kWholeNumber);
    } else if (field.kind == model::FieldKind::count || field.kind == model::FieldKind::fraction ||
               field.kind == model::FieldKind::seconds || field.kind == model::FieldKind::rate) {
      command->add_option(names, o.flow[i].text, with_default(field.help, value));
    } else {
      command->add_option(names, o.flow[i].text, with_default(field.choice_list(" | "), value));
    }
  }
  std::string presets;
  for (const auto& name : suite::preset_names()) presets += (presets.empty() ? "" : " | ") + name;
  command->add_option("--preset", o.preset, presets);
}

model::SuiteSpec one_off_suite(const std::string& pattern, const OneOffOptions& o) {
  YAML::Node test;
  auto set = [&](std::string_view key, const FlagValue& value, std::string_view switch_sets) {
    const std::string name(key);
    if (value.number) test[name] = *value.number;
    if (value.text) test[name] = *value.text;
    if (value.on) test[name] = std::string(switch_sets);
  };
  for (std::size_t i = 0; i < std::size(model::kFlowFields); ++i) {
    set(model::kFlowFields[i].name, o.flow[i], model::kFlowFields[i].cli.sets);
  }
  // The pattern is the subcommand's; the op defaults to send.
  test["pattern"] = pattern;
  if (!test["op"]) test["op"] = "send";
  test["name"] = test["op"].as<std::string>() + "_" + pattern;
  if (o.all_sizes) {
    test["sizes"] = "2..8M x2";
  } else if (o.sizes.size() == 1) {
    test["sizes"] = o.sizes.front();
  } else if (!o.sizes.empty()) {
    for (const auto& s : o.sizes) test["sizes"].push_back(s);
  }
  for (std::size_t i = 0; i < std::size(model::kRunFields); ++i) {
    set(model::kRunFields[i].suite_key, o.run[i], "");
  }
  if (o.preset) test["preset"] = *o.preset;

  // A whole suite document, parsed as a file's would be: its text is what a
  // bare server (`uniperf serve`) is sent, and parses there to this suite.
  YAML::Node document;
  document["suite"] = "command-line";
  document["tests"].push_back(test);
  YAML::Emitter emitter;
  emitter << document;
  model::SuiteSpec suite = suite::parse_suite(emitter.c_str(), "<command line>");
  return suite;
}

}  // namespace uniperf::cli
