#include "suite/quick.hpp"

#include <yaml-cpp/yaml.h>

#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::suite {

std::string apply_quick(const std::string& suite_text, const std::string& suite_file) {
  YAML::Node root = load_yaml(suite_text, suite_file);
  const YAML::Node quick = root.IsMap() ? root["quick"] : YAML::Node();
  if (!quick || !quick.IsMap() || quick.size() == 0)
    throw SpecError(suite_file, quick ? line_of(quick) : 1, "quick",
                    "--quick needs the suite's `quick:` mapping of the keys a short run sets "
                    "(quick: {sizes: [4K, 1M], duration: 0.1s}); this suite has none");
  parse_suite(suite_text, suite_file);  // the suite as written first names its own errors

  if (!root["defaults"] || !root["defaults"].IsMap())
    root["defaults"] = YAML::Node(YAML::NodeType::Map);
  YAML::Node defaults = root["defaults"];
  const auto has = [](const YAML::Node& map, const std::string& key) {
    return map.IsMap() && static_cast<bool>(map[key]);  // const: looking adds nothing
  };
  for (const auto& entry : quick) {
    const std::string key = key_text(entry.first, suite_file);
    bool in_a_test = false;
    for (YAML::Node test : root["tests"]) {
      if (!has(test, key)) continue;
      test[key] = YAML::Clone(entry.second);
      in_a_test = true;
    }
    if (has(defaults, key) || !in_a_test) defaults[key] = YAML::Clone(entry.second);
  }
  YAML::Emitter out;
  out << YAML::Comment(suite_file + " with its quick: keys (uniperf run --quick)");
  out << root;
  const std::string quick_text = std::string(out.c_str()) + "\n";
  try {
    parse_suite(quick_text, suite_file);
  } catch (const SpecError& e) {
    // Its line is of the generated text: name the quick key instead.
    const std::string what = e.what();
    const std::size_t at = what.find(e.key + ": ");
    throw SpecError(suite_file, line_of(quick), "quick",
                    "with these keys the suite is not valid: " + e.key + ": " +
                        (at == std::string::npos ? what : what.substr(at + e.key.size() + 2)));
  }
  return quick_text;
}

}  // namespace uniperf::suite
