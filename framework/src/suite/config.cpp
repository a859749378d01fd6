#include "suite/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <set>

#include "suite/option_values.hpp"
#include "suite/sha256.hpp"

namespace uniperf::suite {
namespace {

/// "${config_dir}" in a config value names the directory of the config file
/// (absolute), so a config can point at files next to it (a dat.conf) from
/// whatever directory uniperf runs in.
std::string expand_config_dir(std::string value, const std::string& file) {
  static constexpr std::string_view kToken = "${config_dir}";
  std::size_t at = value.find(kToken);
  if (at == std::string::npos) return value;
  std::filesystem::path dir = std::filesystem::path(file).parent_path();
  if (dir.empty()) dir = ".";
  std::filesystem::path absolute = std::filesystem::absolute(dir).lexically_normal();
  if (!absolute.has_filename() && absolute.has_parent_path()) absolute = absolute.parent_path();
  const std::string replacement = absolute.string();
  for (; at != std::string::npos; at = value.find(kToken, at + replacement.size())) {
    value.replace(at, kToken.size(), replacement);
  }
  return value;
}

}  // namespace

model::ConfigSpec parse_config(const std::string& text, const std::string& file) {
  const YAML::Node root = load_yaml(text, file);
  if (!root || !root.IsMap()) {
    throw SpecError(file, 1, "plugin", "a config file is a mapping with plugin:");
  }
  check_keys(root, {"name", "plugin", "description", "options", "env", "rails"}, file, "a config");
  model::ConfigSpec config;
  config.file = file;
  config.content_hash = sha256_hex(text);
  config.source = text;
  config.name = root["name"] ? scalar(root["name"], file, "name")
                             : std::filesystem::path(file).stem().string();
  if (!root["plugin"]) throw SpecError(file, 1, "plugin", "missing: name the plugin (plugin: ucx)");
  config.plugin = scalar(root["plugin"], file, "plugin");
  if (config.plugin.empty()) throw SpecError(file, line_of(root["plugin"]), "plugin", "empty");
  if (root["description"] && !root["description"].IsNull()) {
    scalar(root["description"], file, "description");  // not kept, but must be text
  }

  for (const std::string section : {"options", "env"}) {
    const YAML::Node map = root[section];
    if (!map || map.IsNull()) continue;
    require_map(map, file, section);
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = key_text(it->first, file);
      const std::string qualified = section + "." + key;
      if (!seen.insert(key).second) {
        throw SpecError(file, line_of(it->first), qualified, "given twice");
      }
      const std::string value = expand_config_dir(scalar(it->second, file, qualified), file);
      if (section == "options") {
        config.options[key] = value;
        config.option_lines[key] = static_cast<std::uint32_t>(line_of(it->first));
      } else {
        config.environment[key] = value;
      }
    }
  }

  // rails: a list of option maps, each over the config's options.
  if (const YAML::Node rails = root["rails"]; rails && !rails.IsNull()) {
    if (!rails.IsSequence() || rails.size() < 2) {
      throw SpecError(file, line_of(rails), "rails",
                      "a list of two or more rails, each its options over the config's "
                      "(- {device: rxe0} - {device: rxe1})");
    }
    if (rails.size() > model::kMaxRails) {
      throw SpecError(file, line_of(rails), "rails",
                      "more than " + std::to_string(model::kMaxRails) + " rails");
    }
    for (std::size_t r = 0; r < rails.size(); ++r) {
      const YAML::Node rail = rails[r];
      const std::string where = "rails[" + std::to_string(r) + "]";
      require_map(rail, file, where);
      model::RailSpec spec;
      for (auto it = rail.begin(); it != rail.end(); ++it) {
        const std::string key = key_text(it->first, file);
        if (spec.options.count(key) != 0)
          throw SpecError(file, line_of(it->first), where + "." + key, "given twice");
        spec.options[key] = expand_config_dir(scalar(it->second, file, where + "." + key), file);
        spec.option_lines[key] = static_cast<std::uint32_t>(line_of(it->first));
      }
      if (spec.options.empty())
        throw SpecError(file, line_of(rail), where, "a rail sets at least one option");
      config.rails.push_back(std::move(spec));
    }
  }
  return config;
}

model::ConfigSpec parse_inline_config(const std::string& text) {
  static const std::string kFile = "-c";
  model::ConfigSpec config;
  config.name = text;
  config.file = kFile;
  config.content_hash = sha256_hex(text);
  config.source = text;
  config.given_inline = true;
  const std::size_t colon = text.find(':');
  config.plugin = text.substr(0, colon);
  const bool plugin_name =
      !config.plugin.empty() && std::all_of(config.plugin.begin(), config.plugin.end(), [](char c) {
        return std::islower(static_cast<unsigned char>(c)) ||
               std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-';
      });
  if (!plugin_name) {
    throw SpecError(kFile, 0, "plugin",
                    "'" + text +
                        "' is no config inline (PLUGIN:KEY=VALUE,...; the plugin in "
                        "lower case) and no config file");
  }
  if (colon == std::string::npos) return config;
  std::string* last = nullptr;  // the value a piece without '=' continues
  std::set<std::string> seen;
  std::size_t from = colon + 1;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string piece = text.substr(from, comma - from);
    from = comma + 1;
    const std::size_t equals = piece.find('=');
    if (equals == std::string::npos) {
      if (last == nullptr || piece.empty()) {
        throw SpecError(kFile, 0, "options",
                        "'" + piece + "' in '" + text +
                            "' is no KEY=VALUE (a value with commas "
                            "follows its key: transports=posix,self)");
      }
      *last += "," + piece;
      continue;
    }
    const std::string key = piece.substr(0, equals);
    const std::string value = piece.substr(equals + 1);
    const bool env = key.rfind("env.", 0) == 0;
    const std::string name = env ? key.substr(4) : key;
    const std::string qualified = env ? key : "options." + key;
    if (name.empty()) throw SpecError(kFile, 0, qualified, "empty key in '" + text + "'");
    if (!seen.insert(qualified).second) throw SpecError(kFile, 0, qualified, "given twice");
    if (env) {
      last = &(config.environment[name] = value);
    } else {
      last = &(config.options[name] = value);
      config.option_lines[name] = 0;
    }
  }
  return config;
}

bool is_inline_config(const std::string& argument, const std::vector<std::string>& plugins) {
  std::error_code error;
  if (argument.empty() || std::filesystem::exists(argument, error)) return false;
  if (argument.find('/') != std::string::npos) return false;
  const std::string extension = std::filesystem::path(argument).extension().string();
  if (extension == ".yaml" || extension == ".yml") return false;
  return argument.find(':') != std::string::npos ||
         std::find(plugins.begin(), plugins.end(), argument) != plugins.end();
}

model::ConfigSpec load_config(const std::string& path) {
  return parse_config(read_whole_file(path), path);
}

std::vector<Options> validate_rails(const model::ConfigSpec& config,
                                    const std::vector<OptionSpec>& specs) {
  std::vector<Options> rails;
  for (std::size_t r = 0; r < config.rail_count(); ++r)
    rails.push_back(validate_options(config.rail(r), specs));
  return rails;
}

Options validate_options(const model::ConfigSpec& config, const std::vector<OptionSpec>& specs) {
  std::map<std::string, std::string> values;
  std::vector<std::string> names;
  for (const auto& spec : specs) {
    values[spec.name] = spec.default_value;
    names.push_back(spec.name);
  }
  for (const auto& [key, text] : config.options) {
    const auto line_it = config.option_lines.find(key);
    const int line = line_it == config.option_lines.end() ? 0 : static_cast<int>(line_it->second);
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&key = key](const OptionSpec& s) { return s.name == key; });
    if (spec == specs.end()) {
      throw SpecError(config.file, line, "options." + key,
                      "plugin '" + config.plugin + "' has no such option" + suggestion(key, names) +
                          "; its options: " + (names.empty() ? "none" : join(names)));
    }
    std::string value = text;
    bool ok = true;
    switch (spec->type) {
      case OptionType::string:
        break;
      case OptionType::integer: {
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
        ok = ec == std::errc() && end == text.data() + text.size();
        break;
      }
      case OptionType::boolean: {
        // Normalised, because Options::boolean() knows only the lower-case words.
        std::string lower = text;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") {
          value = "true";
        } else if (lower == "false" || lower == "no" || lower == "off" || lower == "0") {
          value = "false";
        } else {
          ok = false;
        }
        break;
      }
      case OptionType::size:
        ok = parse_size(text).has_value();
        break;
    }
    if (!ok) {
      static constexpr const char* kExpected[] = {"text", "a whole number", "true or false",
                                                  "a size such as 4096, 64K or 1M"};
      throw SpecError(config.file, line, "options." + key,
                      "expected " + std::string(kExpected[static_cast<int>(spec->type)]) +
                          ", got '" + text + "'");
    }
    check_option_value(config, line, *spec, value);
    values[key] = value;
  }
  return Options(std::move(values));
}

}  // namespace uniperf::suite
