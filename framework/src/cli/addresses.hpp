// The addresses the command line takes (--peer, --listen, --coordinator):
// HOST[:PORT], [IPV6-ADDRESS][:PORT], a bare IPv6 address or a bare PORT.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace uniperf::cli {

/// The control port when an address names none.
inline constexpr std::uint16_t kDefaultPort = 18521;

/// `text` as a host and a port: a number alone is a port on `default_host`,
/// a missing port is kDefaultPort. Throws std::invalid_argument naming
/// `flag` for a port that is not one (99999, "xyz").
std::pair<std::string, std::uint16_t> split_host_port(std::string_view flag,
                                                      const std::string& text,
                                                      const std::string& default_host);

/// host:port as a person types it back: [host]:port for an IPv6 address.
std::string join_host_port(const std::string& host, std::uint16_t port);

}  // namespace uniperf::cli
