#include "engine/validation.hpp"

#include <algorithm>
#include <cstring>

namespace uniperf::engine {
namespace {

/// How many slots `count` requests of a phase wrote into.
std::uint64_t slots_touched(const Lanes& lanes, std::uint64_t count) {
  return std::min<std::uint64_t>(count, lanes.slot_stride() == 0 ? 1 : lanes.geometry.slots);
}

/// Each target word was hit by c of the peer's n requests, with ordinals
/// 0..c-1: fetch_add added them all (c(c-1)/2), cswap advanced it c times.
std::uint64_t atomic_word_errors(Lanes& lanes, Lane& lane, std::uint64_t n) {
  const std::uint64_t words = lanes.slot_stride() == 0 ? 1 : lanes.geometry.slots;
  std::uint64_t bad = 0;
  for (std::uint64_t w = 0; w < words; ++w) {
    const std::uint64_t c = n > w ? (n - w - 1) / words + 1 : 0;
    const std::uint64_t expected = lanes.flow.op == Op::fetch_add ? c * (c - 1) / 2 : c;
    std::uint64_t word = 0;
    std::memcpy(&word, lanes.rx(lane, w), 8);
    bad += word == expected ? 0 : 8;
  }
  return bad;
}

}  // namespace

void fill_pattern(Lanes& lanes) {
  for (Lane& lane : lanes.all()) {
    const std::uint64_t size = lane.length;
    for (std::uint32_t s = 0; s < lanes.geometry.slots; ++s) {
      std::byte* out = lanes.tx(lane, s);
      for (std::size_t b = 0; b < size; ++b) out[b] = std::byte{pattern_byte(size, b)};
    }
  }
}

std::uint64_t corrupted_bytes(Lanes& lanes, const PeerLink& peer, bool initiator) {
  const FlowSpec& flow = lanes.flow;
  const bool active = initiator || flow.direction == Direction::bi;
  const bool target = !initiator || flow.direction == Direction::bi;
  const bool write_latency = flow.op == Op::write && flow.pattern == Pattern::latency;
  std::uint64_t bad = 0;
  for (Lane& lane : lanes.all()) {
    // A lane's requests carry its length (a stripe's piece, else the size);
    // write latency keeps its iteration marker in the last byte.
    const std::uint64_t size = lane.length;
    const std::size_t checked = write_latency ? size - 1 : size;
    const std::uint64_t peer_posted = peer.peer_posted(lanes.index_of(lane));
    if (is_atomic(flow.op)) {
      bad += target ? atomic_word_errors(lanes, lane, peer_posted) : 0;
      continue;
    }
    for (std::uint32_t s = 0; s < lanes.geometry.slots; ++s) {
      bool filled = false;
      switch (flow.op) {
        case Op::send:
          // A pipeline's receiver copied the fragments into its message
          // buffer (the rx half's one slot); in a ping-pong both sides did,
          // whole messages each (an iteration ends with the echo placed).
          filled = flow.fragment == 0                 ? lane.rx_length[s] == size
                   : flow.pattern == Pattern::latency ? lane.received > 0
                                                      : target && peer_posted > 0;
          break;
        case Op::write_imm:
          // The data lands where the write pointed, like a write's; the
          // receive that reports it carries no bytes. Ping-pong writes both
          // ways.
          filled =
              (target || flow.pattern == Pattern::latency) && s < slots_touched(lanes, peer_posted);
          break;
        case Op::read:
          filled = active && s < slots_touched(lanes, lane.phase_posted());
          break;
        case Op::write:
          filled = write_latency ? s == 0 : target && s < slots_touched(lanes, peer_posted);
          break;
        default:
          break;
      }
      if (!filled) continue;
      const std::byte* in = lanes.rx(lane, s);
      for (std::size_t b = 0; b < checked; ++b) bad += in[b] != std::byte{pattern_byte(size, b)};
    }
  }
  return bad;
}

}  // namespace uniperf::engine
