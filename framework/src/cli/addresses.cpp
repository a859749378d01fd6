#include "cli/addresses.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace uniperf::cli {
namespace {

/// A port number in full, or a clear error naming the flag (a port of
/// 99999 must not wrap to 34463, "xyz" must not surface as `stoi`).
std::uint16_t parse_port(std::string_view flag, const std::string& text, std::string_view port) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value > 65535) {
    throw std::invalid_argument(std::string(flag) + " " + text + ": '" + std::string(port) +
                                "' is not a port number (0-65535)");
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

std::pair<std::string, std::uint16_t> split_host_port(std::string_view flag,
                                                      const std::string& text,
                                                      const std::string& default_host) {
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    const std::string rest = close == std::string::npos ? "" : text.substr(close + 1);
    if (close == std::string::npos || (!rest.empty() && !rest.starts_with(':'))) {
      throw std::invalid_argument(std::string(flag) + " " + text +
                                  ": expected [ADDRESS] or [ADDRESS]:PORT");
    }
    const std::string host = text.substr(1, close - 1);
    return {host,
            rest.empty() ? kDefaultPort : parse_port(flag, text, std::string_view(rest).substr(1))};
  }
  const auto colons = std::count(text.begin(), text.end(), ':');
  if (colons > 1) return {text, kDefaultPort};  // an IPv6 address without a port
  if (colons == 1) {
    const auto colon = text.find(':');
    const std::string host = text.substr(0, colon);
    return {host.empty() ? default_host : host,
            parse_port(flag, text, std::string_view(text).substr(colon + 1))};
  }
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    return {default_host, parse_port(flag, text, text)};
  }
  return {text.empty() ? default_host : text, kDefaultPort};
}

std::string join_host_port(const std::string& host, std::uint16_t port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

}  // namespace uniperf::cli
