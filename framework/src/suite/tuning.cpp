#include "suite/tuning.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::suite {
namespace {

/// `row[name]`, a whole number of bytes. A missing key is reported at the
/// row's line (a missing node has no place of its own: found by fuzzing).
std::uint64_t number(const YAML::Node& row, const char* name, const std::string& file,
                     const std::string& at) {
  const std::string key = at + "." + name;
  const YAML::Node node = row[name];
  if (!node) throw SpecError(file, line_of(row), key, "missing: expected a number of bytes");
  if (!node.IsScalar()) throw SpecError(file, line_of(node), key, "expected a number of bytes");
  try {
    // Digits only: std::stoull would take "-1" as 2^64 - 1 and " 7" as 7.
    std::size_t used = 0;
    const std::string& text = node.Scalar();
    if (!text.empty() && text.front() >= '0' && text.front() <= '9') {
      const unsigned long long value = std::stoull(text, &used);
      if (used == text.size()) return value;
    }
  } catch (const std::exception&) {
  }
  throw SpecError(file, line_of(node), key,
                  "expected a number of bytes, got '" + node.Scalar() + "'");
}

/// What a choice names, or a test leaves to the tuner: "the fragment",
/// "the fragment and the source", "inline", ... or "nothing".
std::string describe(AutoSettings settings) {
  std::vector<std::string> named;
  if (settings.fragment) named.emplace_back("the fragment");
  if (settings.source) named.emplace_back("the source");
  if (settings.inlining) named.emplace_back("inline");
  if (named.empty()) return "nothing";
  std::string text = named.front();
  for (std::size_t i = 1; i < named.size(); ++i)
    text += (i + 1 == named.size() ? " and " : ", ") + named[i];
  return text;
}

AutoSettings named_by(const TunedSetting& setting) {
  return {setting.fragment != 0, !setting.source.empty(), !setting.inlining.empty()};
}

/// `row[key]`, one of `candidates` (the choices of `key: auto`).
template <std::size_t N>
std::string one_of(const YAML::Node& row, const char* key, const std::string_view (&candidates)[N],
                   const std::string& file, const std::string& at) {
  const YAML::Node node = row[key];
  const std::string chosen = node.IsScalar() ? node.Scalar() : "";
  if (std::find(std::begin(candidates), std::end(candidates), chosen) != std::end(candidates))
    return chosen;
  std::string listed;
  for (const std::string_view candidate : candidates)
    listed += (listed.empty() ? "" : ", ") + std::string(candidate);
  throw SpecError(file, line_of(node), at + "." + key,
                  "'" + chosen + "' is not a candidate of `" + key + ": auto` (" + listed + ")");
}

}  // namespace

TuningChoices parse_tuning(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root.IsMap() || !root["tuning"] || !root["tuning"].IsMap())
    throw SpecError(file, 1, "tuning", "not a tuning file (uniperf tune -o FILE writes one)");
  const YAML::Node tuning = root["tuning"];
  TuningChoices choices;
  choices.file = file;
  if (tuning["config"] && tuning["config"].IsScalar()) {
    choices.config = tuning["config"].Scalar();
    choices.config_line = line_of(tuning["config"]);
  }
  const YAML::Node tests = tuning["tests"];
  if (!tests || !tests.IsMap())
    throw SpecError(file, line_of(tuning), "tuning.tests", "missing: the tuned tests");
  for (const auto& entry : tests) {
    const std::string name = key_text(entry.first, file);
    const std::string key = "tuning.tests." + name;
    choices.lines[name] = line_of(entry.first);
    auto& chosen = choices.choices[name];
    if (!entry.second.IsSequence())
      throw SpecError(file, line_of(entry.second), key,
                      "expected a list of {size, fragment and/or source}");
    for (std::size_t i = 0; i < entry.second.size(); ++i) {
      const YAML::Node row = entry.second[i];
      const std::string at = key + "[" + std::to_string(i) + "]";
      if (!row.IsMap())
        throw SpecError(file, line_of(row), at, "expected {size, fragment and/or source}");
      const std::uint64_t size = number(row, "size", file, at);
      if (row["unavailable"]) continue;
      if (!row["fragment"] && !row["source"] && !row["inline"])
        throw SpecError(file, line_of(row), at + ".fragment",
                        "missing: a row names what it chose: the fragment, the source, inline "
                        "or several");
      TunedSetting setting;
      if (row["fragment"]) {
        const std::uint64_t fragment = number(row, "fragment", file, at);
        if (std::find(std::begin(kAutoFragments), std::end(kAutoFragments), fragment) ==
            std::end(kAutoFragments))
          throw SpecError(
              file, line_of(row["fragment"]), at + ".fragment",
              std::to_string(fragment) +
                  " is not a candidate of `fragment: auto` (256 .. 64K, powers of two)");
        setting.fragment = static_cast<std::uint32_t>(fragment);
      }
      if (row["source"]) setting.source = one_of(row, "source", kAutoSources, file, at);
      if (row["inline"]) setting.inlining = one_of(row, "inline", kAutoInlines, file, at);
      chosen[size] = setting;
    }
  }
  return choices;
}

std::string apply_tuning(const std::string& suite_text, const std::string& suite_file,
                         const std::vector<ConfigTuning>& tunings,
                         const std::vector<std::string>& run_configs) {
  // The sizes each test runs, resolved as the suite reader resolves them
  // (ranges, defaults, presets); it also names any error of the suite.
  const model::SuiteSpec parsed = parse_suite(suite_text, suite_file);
  YAML::Node root = load_yaml(suite_text, suite_file);
  const YAML::Node defaults = root["defaults"];
  YAML::Node tests(YAML::NodeType::Sequence);
  // Per tuning file, the tests it narrowed.
  std::vector<std::set<std::string>> applied(tunings.size());
  for (const YAML::Node& node : root["tests"]) {
    const std::string name = node["name"] && node["name"].IsScalar() ? node["name"].Scalar() : "";
    const AutoSettings swept = auto_settings(node, defaults);
    const std::vector<std::string> configs = test_configs(node, defaults, suite_file);
    std::vector<std::size_t> tuned;  // the tunings of this test, each over a config of its
    for (std::size_t k = 0; k < tunings.size() && swept.any(); ++k) {
      if (tunings[k].tuning.choices.count(name) && model::runs_over(configs, tunings[k].config))
        tuned.push_back(k);
    }
    if (tuned.empty()) {
      tests.push_back(node);
      continue;
    }
    // The run's configs the test runs over, less those tuned below.
    std::vector<std::string> untuned;
    for (const std::string& config : run_configs) {
      if (model::runs_over(configs, config)) untuned.push_back(config);
    }
    for (const std::size_t k : tuned) {
      const TuningChoices& tuning = tunings[k].tuning;
      const std::map<std::uint64_t, TunedSetting>& chosen = tuning.choices.at(name);
      applied[k].insert(name);
      std::erase(untuned, tunings[k].config);
      // Each choice names exactly the settings the test leaves to the tuner.
      for (const auto& [size, setting] : chosen) {
        const AutoSettings named = named_by(setting);
        if (named.fragment != swept.fragment || named.source != swept.source ||
            named.inlining != swept.inlining)
          throw SpecError(tuning.file, tuning.lines.at(name), "tuning.tests." + name,
                          "the choice for " + std::to_string(size) + " B names " + describe(named) +
                              ", but test " + name + " of " + suite_file + " leaves " +
                              describe(swept) + " to the tuner");
      }
      const std::vector<std::uint64_t>* swept_sizes =
          auto_sweep_sizes(parsed, name, swept, configs);
      if (swept_sizes == nullptr)
        throw SpecError(tuning.file, tuning.lines.at(name), "tuning.tests." + name,
                        "test " + name + " of " + suite_file +
                            " sweeps several fragments beside `source: auto`: one choice per "
                            "size cannot narrow it (give it one fragment or `fragment: auto`)");
      for (const TunedSetting& point : sweep_points(swept)) {
        std::vector<std::uint64_t> sizes;
        for (const std::uint64_t size : *swept_sizes) {
          const auto choice = chosen.find(size);
          if (choice == chosen.end() || choice->second == point) sizes.push_back(size);
        }
        if (sizes.empty()) continue;
        YAML::Node one = YAML::Clone(node);
        one["name"] = sweep_point_name(name, swept, point);
        if (swept.fragment) one["fragment"] = point.fragment;
        if (swept.source) one["source"] = point.source;
        if (swept.inlining) one["inline"] = point.inlining == "on" ? kInlineAsPluginAllows : 0;
        one["sizes"] = sizes;
        one["configs"] = std::vector<std::string>{tunings[k].config};
        tests.push_back(one);
      }
    }
    // The configs no tuning file was for run the whole sweep, as untuned.
    if (!untuned.empty()) {
      YAML::Node rest = YAML::Clone(node);
      rest["configs"] = untuned;
      tests.push_back(rest);
    }
  }
  std::string named;
  for (std::size_t k = 0; k < tunings.size(); ++k) {
    const TuningChoices& tuning = tunings[k].tuning;
    for (const auto& [name, line] : tuning.lines) {
      if (!applied[k].count(name))
        throw SpecError(tuning.file, line, "tuning.tests." + name,
                        suite_file +
                            " has no `fragment: auto`, `source: auto` or `inline: auto` test "
                            "named " +
                            name + " over config " + tunings[k].config);
    }
    named += (k == 0 ? "" : ", ") + tuning.file + " (" + tunings[k].config + ")";
  }
  root["tests"] = tests;
  YAML::Emitter out;
  out << YAML::Comment(suite_file + " tuned by " + named + " (uniperf run --tuning)");
  out << root;
  return std::string(out.c_str()) + "\n";
}

}  // namespace uniperf::suite
