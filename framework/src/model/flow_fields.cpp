#include "model/flow_fields.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

namespace uniperf::model {

std::string FlowField::text(const FlowSpec& flow) const {
  switch (kind) {
    case FieldKind::count:
      return std::to_string(flow.*count);
    case FieldKind::flag:
      return flow.*flag ? "true" : "false";
    case FieldKind::choice:
      return std::string(choice_name(get_choice(flow)));
    case FieldKind::fraction:
    case FieldKind::seconds: {
      char text[32];
      const double value = kind == FieldKind::fraction ? flow.*fraction : flow.*seconds;
      const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
      return ec == std::errc() ? std::string(text, end) : std::string("nan");
    }
    case FieldKind::rate:
      return rate_text(flow.*rate);
  }
  return {};
}

bool FlowField::set_text(FlowSpec& flow, std::string_view value) const {
  switch (kind) {
    case FieldKind::count: {
      std::uint32_t number = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec != std::errc() || end != value.data() + value.size()) return false;
      flow.*count = number;
      return true;
    }
    case FieldKind::flag:
      if (value != "true" && value != "false") return false;
      flow.*flag = value == "true";
      return true;
    case FieldKind::fraction: {
      const std::optional<double> number = parse_fraction(value);
      if (!number) return false;
      flow.*fraction = *number;
      return true;
    }
    case FieldKind::seconds: {
      // The canonical text: a plain number of seconds.
      double number = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (ec != std::errc() || end != value.data() + value.size() || !(number >= 0) ||
          !std::isfinite(number))
        return false;
      flow.*seconds = number;
      return true;
    }
    case FieldKind::rate: {
      const std::optional<Rate> parsed = parse_rate(value);
      if (!parsed) return false;
      flow.*rate = *parsed;
      return true;
    }
    case FieldKind::choice:
      for (std::size_t i = 0; i < choice_count; ++i) {
        if (choice_name(i) == value) {
          set_choice(flow, i);
          return true;
        }
      }
      return false;
  }
  return false;
}

std::vector<std::string_view> FlowField::choices() const {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < choice_count; ++i) names.push_back(choice_name(i));
  return names;
}

std::string FlowField::choice_list(std::string_view separator) const {
  std::string list;
  for (std::size_t i = 0; i < choice_count; ++i) {
    if (i > 0) list += separator;
    list += choice_name(i);
  }
  return list;
}

std::optional<double> parse_fraction(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (percent) number /= 100;
  if (!(number >= 0 && number <= 1)) return std::nullopt;  // also NaN
  return number;
}

std::optional<Rate> parse_rate(std::string_view text) {
  if (text == "0") return Rate{};
  Rate rate;
  if (text.ends_with("b/s")) {
    rate.bits = true;
    text.remove_suffix(3);
  } else if (text.ends_with("/s")) {
    text.remove_suffix(2);
  } else {
    return std::nullopt;  // a unit is required: perftest's bare number means Gb/s
  }
  double scale = 1;
  if (!text.empty() && std::string_view("kKMG").find(text.back()) != std::string_view::npos) {
    scale = text.back() == 'M' ? 1e6 : text.back() == 'G' ? 1e9 : 1e3;
    text.remove_suffix(1);
  }
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(number > 0) ||
      !std::isfinite(number))
    return std::nullopt;
  rate.per_second = number * scale;
  return rate;
}

std::string rate_text(const Rate& rate) {
  if (rate.per_second <= 0) return "0";
  const char* prefix = "";
  double number = rate.per_second;
  static constexpr std::pair<const char*, double> kPrefixes[] = {
      {"G", 1e9}, {"M", 1e6}, {"K", 1e3}};
  for (const auto& [letter, scale] : kPrefixes) {
    if (rate.per_second >= scale) {
      prefix = letter;
      number = rate.per_second / scale;
      break;
    }
  }
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, number);
  return std::string(text, ec == std::errc() ? end : text) + prefix + (rate.bits ? "b/s" : "/s");
}

const FlowField* find_flow_field(std::string_view name) {
  for (const FlowField& field : kFlowFields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

}  // namespace uniperf::model
