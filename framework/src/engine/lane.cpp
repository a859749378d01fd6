#include "engine/lane.hpp"

namespace uniperf::engine {

// Sources come from the tx half and land in the peer's rx half; reads fetch
// the peer's tx half into our rx half; atomics hit a word at the start of
// the peer's rx slot and return the old value 8 bytes further into the same
// slot of our own rx half (where, bidirectional, the peer's atomics hit only
// the first word).
//
// Atomics in a stream spread over the slots, one per request in flight: the
// cswap check (every word ends at the number of requests that hit it) then
// holds on any transport, in order or not. RC queue pairs execute atomics in
// posting order; UCP does not promise it, and over rc_verbs reorders them
// when both sides stream at once.
void Lanes::prepare() {
  const Op op = flow.op;
  local_base_ = op == Op::read || is_atomic(op) ? geometry.rx_base : geometry.tx_base;
  remote_base_ = op == Op::read ? geometry.tx_base : geometry.rx_base;
  // Ping-pong reuses slot 0 (write latency polls its last byte); so does
  // every post of a single-buffer stream.
  slot_stride_ = flow.pattern == Pattern::latency || flow.buffers == BufferMode::single ? 0 : 1;
  local_shift_ = is_atomic(op) ? 8 : 0;
  ordinal_shift_ = slot_stride_ == 0 ? 0 : static_cast<unsigned>(std::countr_zero(geometry.slots));

  if (flow.fragment > 0 && !lanes_.empty()) {
    // Every lane of a pipelined flow carries whole messages (no stripes).
    const std::uint64_t size = lanes_.front().length;
    pipe_.fragments = fragments_of(size, flow.fragment);
    pipe_.fragment = static_cast<std::uint32_t>(std::min<std::uint64_t>(flow.fragment, size));
    pipe_.last_fragment = static_cast<std::uint32_t>(size - (pipe_.fragments - 1) * pipe_.fragment);
    for (Lane& lane : lanes_) lane.fragment_posted = lane.fragment_placed = 0;
  }

  // Inline carries outgoing payload only: never reads or atomics.
  const bool carries_payload = op == Op::send || op == Op::write || op == Op::write_imm;
  for (Lane& lane : lanes_) {
    const std::uint64_t length = lane.length;
    for (WorkRequest& wr : lane.chain) {
      wr = WorkRequest{};
      wr.op = op;
      wr.length = static_cast<std::uint32_t>(length);
      wr.local = lane.memory.get();
      wr.remote = lane.remote.get();
      wr.flags = carries_payload && length <= flow.inline_size ? WorkRequest::kInline : 0;
    }
  }
}

}  // namespace uniperf::engine
