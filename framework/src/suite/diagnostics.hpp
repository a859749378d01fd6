// What every reader of the suite layer reports through: SpecError (file,
// line, key) and the small YAML helpers that produce it, with a "did you
// mean" suggestion for a mistyped word.
#pragma once

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace uniperf::suite {

/// A problem in a suite or config file. what() is "FILE:LINE: KEY: message"
/// (LINE 1-based; 0 when the node came from no file, e.g. the command line).
struct SpecError : std::runtime_error {
  SpecError(std::string file_, int line_, std::string key_, const std::string& message);
  std::string file;
  int line;
  std::string key;
};

/// The 1-based line of a node; 0 for one built in code.
int line_of(const YAML::Node& node);

/// " (did you mean 'x'?)" for the closest known word within two edits, else
/// for a word the typed one abbreviates; "" when nothing is close.
std::string suggestion(const std::string& word, const std::vector<std::string>& known);

/// "a, b, c".
std::string join(const std::vector<std::string>& items);

/// A file's bytes; SpecError naming the path when it cannot be read.
std::string read_whole_file(const std::string& path);
/// Parses YAML text; a syntax error becomes a SpecError at its line.
YAML::Node load_yaml(const std::string& text, const std::string& file);

void require_map(const YAML::Node& node, const std::string& file, const std::string& key);
/// A mapping key's text; SpecError when it is not a plain word.
std::string key_text(const YAML::Node& key, const std::string& file);
/// A scalar's text; SpecError when the value is a list or a mapping.
std::string scalar(const YAML::Node& value, const std::string& file, const std::string& key);

/// Checks every key of a mapping against `known`, and that none repeats
/// (yaml-cpp keeps both and `node[key]` would silently pick the first).
void check_keys(const YAML::Node& node, const std::vector<std::string>& known,
                const std::string& file, const std::string& where);

}  // namespace uniperf::suite
