// The content hash the handshake compares, so both sides run the same suite
// and configs.
#pragma once

#include <string>
#include <string_view>

namespace uniperf::suite {

/// SHA-256 of `bytes`, lower-case hex.
std::string sha256_hex(std::string_view bytes);

}  // namespace uniperf::suite
