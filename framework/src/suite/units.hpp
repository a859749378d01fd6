// The suite's scalar units: message sizes and size ranges, and times.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace uniperf::suite {

/// The largest message a suite may ask for (1 GiB).
inline constexpr std::uint64_t kMaxMessageSize = std::uint64_t{1} << 30;
/// The most sizes a test (or one range) may list: YAML aliases let a short
/// file repeat a range thousands of times.
inline constexpr std::size_t kMaxSizes = 4096;

/// "2..8M x2" (geometric), "1K..64K +1K" (arithmetic), "2..8M" (x2), or one
/// size. Throws std::invalid_argument.
std::vector<std::uint64_t> parse_size_range(std::string_view text);

/// Seconds from "2s", "500ms", "1m" or a plain number of seconds ("1.5").
/// Throws std::invalid_argument.
double parse_seconds(std::string_view text);

}  // namespace uniperf::suite
