// The engine's control messages (engine/peer_protocol.hpp) as the peer could
// send them: the first byte picks the decoder, the rest is the message. A
// message that does not decode is a ProtocolError; a decoded one re-encodes
// to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "engine/errors.hpp"
#include "engine/peer_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto message = std::as_bytes(std::span(data + 1, size - 1));
  auto same = [&](const std::vector<std::byte>& encoded) {
    if (encoded.size() != message.size() ||
        !std::equal(encoded.begin(), encoded.end(), message.begin())) {
      std::abort();  // decode accepted bytes that are not what encode makes
    }
  };
  using namespace uniperf::engine;
  try {
    switch (data[0] % 6) {
      case 0:
        same(encode(decode_region(message)));
        break;
      case 1:
        same(encode(decode_done(message)));
        break;
      case 2:
        same(encode_corrupted(decode_corrupted(message)));
        break;
      case 3:
        same(encode_delivered(decode_delivered(message)));
        break;
      case 4:
        same(encode_placing(decode_placing(message)));
        break;
      default:
        decode_settled(message);
        same(encode_settled());
        break;
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
