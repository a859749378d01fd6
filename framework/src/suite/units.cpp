#include "suite/units.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>
#include <uniperf/plugin.hpp>

namespace uniperf::suite {
std::vector<std::uint64_t> parse_size_range(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  auto size_of = [&](std::string_view s) {
    s = trim(s);
    // parse_size() does not guard against overflow; a size beyond 2^40
    // (13 digits) is nonsense here anyway.
    const auto digits = s.find_first_not_of("0123456789");
    if ((digits == std::string_view::npos ? s.size() : digits) > 13) {
      throw std::invalid_argument("'" + std::string(s) + "' is too large");
    }
    const auto value = parse_size(s);
    if (!value) throw std::invalid_argument("'" + std::string(s) + "' is not a size (64, 4K, 1M)");
    return *value;
  };
  text = trim(text);
  const auto dots = text.find("..");
  if (dots == std::string_view::npos) return {size_of(text)};

  const std::uint64_t from = size_of(text.substr(0, dots));
  const std::string_view rest = trim(text.substr(dots + 2));
  const auto space = rest.find_first_of(" \t");
  const std::uint64_t to = size_of(rest.substr(0, space));
  const std::string_view step = space == std::string_view::npos ? "x2" : trim(rest.substr(space));
  if (from == 0 || from > to) {
    throw std::invalid_argument("a range goes from a size above 0 up to a larger one");
  }
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    throw std::invalid_argument("a range step is xFACTOR or +INCREMENT, e.g. '2..8M x2'");
  }
  const bool geometric = step[0] == 'x';
  const std::uint64_t by = size_of(step.substr(1));
  if (by == 0 || (geometric && by < 2)) {
    throw std::invalid_argument("the range step must make progress");
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = from; size <= to;) {
    sizes.push_back(size);
    if (sizes.size() > kMaxSizes) {
      throw std::invalid_argument("a range of more than " + std::to_string(kMaxSizes) + " sizes");
    }
    // Both operands are below 2^44, so neither step overflows 64 bits.
    size = geometric ? size * by : size + by;
  }
  return sizes;
}

double parse_seconds(std::string_view text) {
  const std::string original(text);
  // Parts of a second divide (50us is 50 / 1e6, which prints as 5e-05;
  // 50 * 1e-6 would print as 4.9999999999999996e-05).
  double scale = 1, parts = 1;
  if (text.ends_with("ms")) {
    parts = 1e3;
    text.remove_suffix(2);
  } else if (text.ends_with("us")) {
    parts = 1e6;
    text.remove_suffix(2);
  } else if (text.ends_with("ns")) {
    parts = 1e9;
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
  } else if (text.ends_with("m")) {
    scale = 60;
    text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0) {
    throw std::invalid_argument("expected a time such as 2s, 500ms, 10us or 1.5, got '" + original +
                                "'");
  }
  return value * scale / parts;
}

}  // namespace uniperf::suite
