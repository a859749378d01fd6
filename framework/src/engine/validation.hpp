// Payload validation: what each side writes into its outgoing slots, and how
// many bytes of what arrived differ from it. Runs between phases, never in a
// timed loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/lane.hpp"
#include "engine/peer_protocol.hpp"

namespace uniperf::engine {

/// Byte `index` of the validation pattern for messages of `size` bytes. Never
/// zero, so a receive buffer cleared to zero shows what did not arrive.
inline std::uint8_t pattern_byte(std::uint64_t size, std::size_t index) {
  return static_cast<std::uint8_t>((index * 131 + size * 7) % 255 + 1);
}

/// Fills every tx slot of every lane with the pattern for its length
/// (Lane::length: the message size, or a stripe's piece).
void fill_pattern(Lanes& lanes);

/// Bytes in this side's receive/result slots that differ from what the peer
/// sent in the phase that just ended. Only slots that received something at
/// this size are checked. `initiator`: rank 0.
std::uint64_t corrupted_bytes(Lanes& lanes, const PeerLink& peer, bool initiator);

}  // namespace uniperf::engine
