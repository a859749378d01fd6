#include "suite/diagnostics.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace uniperf::suite {

SpecError::SpecError(std::string file_, int line_, std::string key_, const std::string& message)
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": " + key_ + ": " + message),
      file(std::move(file_)),
      line(line_),
      key(std::move(key_)) {}

int line_of(const YAML::Node& node) {
  // Nodes built in code (the CLI's one-off test) have no mark: line 0.
  return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
}

namespace {

/// Edits (insert, delete, substitute, swap two neighbours) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

/// True when `word` is `candidate` with letters left out ("opts", "sig").
bool abbreviates(std::string_view word, std::string_view candidate) {
  if (word.size() < 3) return false;
  std::size_t matched = 0;
  for (const char c : candidate) {
    if (matched < word.size() && word[matched] == c) ++matched;
  }
  return matched == word.size();
}

}  // namespace

std::string suggestion(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  // Two edits at most, and no more than half the word ("id" is not "op").
  std::size_t best_distance = std::min<std::size_t>(2, word.size() / 2) + 1;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty()) {
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const std::string& k) { return abbreviates(word, k); });
    if (it != known.end()) best = *it;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, 0, "file", std::string("cannot read: ") + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

YAML::Node load_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw SpecError(file, e.mark.line + 1, "yaml", e.msg);
  }
}

void require_map(const YAML::Node& node, const std::string& file, const std::string& key) {
  if (!node.IsMap()) throw SpecError(file, line_of(node), key, "expected a mapping");
}

std::string key_text(const YAML::Node& key, const std::string& file) {
  if (!key.IsScalar()) throw SpecError(file, line_of(key), "?", "a key must be a plain word");
  return key.Scalar();
}

std::string scalar(const YAML::Node& value, const std::string& file, const std::string& key) {
  if (!value.IsScalar()) throw SpecError(file, line_of(value), key, "expected a single value");
  return value.Scalar();
}

void check_keys(const YAML::Node& node, const std::vector<std::string>& known,
                const std::string& file, const std::string& where) {
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = key_text(it->first, file);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      throw SpecError(
          file, line_of(it->first), key,
          "unknown key in " + where + suggestion(key, known) + "; known keys: " + join(known));
    }
    if (!seen.insert(key).second) {
      throw SpecError(file, line_of(it->first), key, "given twice in " + where);
    }
  }
}

}  // namespace uniperf::suite
