// The precedence ladder of a test's keys (built-in < preset < suite
// defaults < test < flow) and the typed reads of one resolved ladder. Every
// value remembers its line, so a bad value is reported where it was written.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/flow_fields.hpp"
#include "suite/diagnostics.hpp"
#include "suite/units.hpp"

namespace uniperf::suite {

/// Where a value came from, lowest precedence first.
enum class Level : std::uint8_t { builtin, preset, defaults, test, flow };

struct Value {
  std::string text;
  int line = 0;
  Level level = Level::builtin;
};
using Layer = std::map<std::string, Value>;

/// Lays a mapping's scalar keys from `keys` over `layer`. Structured keys
/// (sizes, flows) are read apart.
inline void overlay(Layer& layer, const YAML::Node* node, const std::vector<std::string>& keys,
                    Level level, const std::string& file) {
  if (node == nullptr || !*node || !node->IsMap()) return;
  for (auto it = node->begin(); it != node->end(); ++it) {
    const std::string key = key_text(it->first, file);
    if (key == "sizes" || key == "flows" || key == "name" || key == "configs") continue;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
    layer[key] = Value{scalar(it->second, file, key), line_of(it->second), level};
  }
}

/// Typed reads of one resolved layer; failures name the value's line.
class Reader {
 public:
  Reader(const Layer& layer, const std::string& file) : layer_(layer), file_(file) {}

  bool has(const std::string& key) const { return layer_.count(key) != 0; }
  Level level(const std::string& key) const { return layer_.at(key).level; }
  int line(const std::string& key) const {
    auto it = layer_.find(key);
    return it == layer_.end() ? 0 : it->second.line;
  }
  const std::string& text(const std::string& key) const { return layer_.at(key).text; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw SpecError(file_, line(key), key, message);
  }

  std::uint32_t count(const std::string& key, std::uint32_t minimum = 1,
                      std::uint32_t maximum = UINT32_MAX) const {
    const std::uint64_t value = whole_number(key, maximum);
    if (value < minimum) fail(key, "must be at least " + std::to_string(minimum));
    return static_cast<std::uint32_t>(value);
  }

  std::uint64_t whole_number(const std::string& key, std::uint64_t maximum) const {
    const std::string& value_text = text(key);
    std::uint64_t value = 0;
    const auto [end, ec] =
        std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc() || end != value_text.data() + value_text.size()) {
      fail(key, "expected a whole number, got '" + value_text + "'");
    }
    if (value > maximum) fail(key, "must be at most " + std::to_string(maximum));
    return value;
  }

  /// A size in bytes, with or without a unit ("64M").
  std::uint32_t bytes(const std::string& key, std::uint32_t maximum) const {
    std::vector<std::uint64_t> sizes;
    try {
      sizes = parse_size_range(text(key));
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
    if (sizes.size() != 1) fail(key, "expected one size (64K, 1M), got '" + text(key) + "'");
    if (sizes.front() > maximum) fail(key, "must be at most " + std::to_string(maximum));
    return static_cast<std::uint32_t>(sizes.front());
  }

  bool boolean(const std::string& key) const {
    std::string value = text(key);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "true" || value == "yes" || value == "on") return true;
    if (value == "false" || value == "no" || value == "off") return false;
    fail(key, "expected true or false, got '" + text(key) + "'");
  }

  double seconds(const std::string& key) const {
    try {
      return parse_seconds(text(key));
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }

  /// Reads a flow knob into `flow` by its row: a count within its minimum
  /// and maximum, a flag, or one of its choices.
  void read(const model::FlowField& field, model::FlowSpec& flow) const {
    const std::string key(field.name);
    switch (field.kind) {
      case model::FieldKind::count:
        flow.*field.count =
            field.in_bytes ? bytes(key, field.maximum) : count(key, field.minimum, field.maximum);
        return;
      case model::FieldKind::flag:
        flow.*field.flag = boolean(key);
        return;
      case model::FieldKind::fraction:
        if (field.set_text(flow, text(key))) return;
        fail(key, "expected a fraction from 0 to 1 or a percentage (0.001, 0.1%), got '" +
                      text(key) + "'");
      case model::FieldKind::seconds:
        flow.*field.seconds = seconds(key);
        return;
      case model::FieldKind::rate:
        if (field.set_text(flow, text(key))) return;
        fail(key,
             "expected a rate: bits per second (10Gb/s, 500Mb/s), messages per second "
             "(100K/s, 5000/s) or 0, got '" +
                 text(key) + "'");
      case model::FieldKind::choice:
        if (field.set_text(flow, text(key))) return;
        std::vector<std::string> names;
        for (const auto name : field.choices()) names.emplace_back(name);
        fail(key, "unknown value '" + text(key) + "'" + suggestion(text(key), names) +
                      "; expected one of: " + join(names));
    }
  }

 private:
  const Layer& layer_;
  const std::string& file_;
};

}  // namespace uniperf::suite
