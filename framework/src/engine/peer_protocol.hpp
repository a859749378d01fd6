// Every control message the engine exchanges with its peer during a test, in
// one place and one encoding. The engine's messages ride the session's
// control channel (bootstrap::Bootstrap) between the two sides' lockstep
// points; none of them is sent inside a timed loop.
//
// Encoding: a kind byte, then fixed-width little-endian fields; byte strings
// and lists carry a 32-bit count first. A message of another kind, or one
// that is cut short or too long, is a ProtocolError naming what was expected.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/cpu_meter.hpp"

namespace uniperf::engine {

/// Where the peer may write and read: one endpoint's registered memory.
struct RegionAdvert {
  std::uint64_t address = 0;
  std::uint64_t length = 0;
  Bytes key;  ///< the plugin's remote key, opaque
};

/// A side's end of one measured or warm-up phase.
struct PhaseDone {
  std::vector<std::uint64_t> posted;  ///< data requests posted per endpoint (acks excluded)
  double seconds = 0;                 ///< first post -> last completion (streams)
  std::uint64_t bytes = 0;            ///< payload bytes those requests moved
};

/// One side's end of the engine's control conversation. Not thread-safe: a
/// flow's runner owns it, on the flow's own channel.
class PeerLink {
 public:
  explicit PeerLink(bootstrap::Bootstrap& control) : control_(control) {}

  /// Sends ours, returns the peer's (setup, once per endpoint).
  RegionAdvert exchange_region(const RegionAdvert& mine);

  /// End of a phase: the sender says what it posted; the other side takes
  /// it once (receive_done) and keeps it for the rest of the phase.
  void send_done(const PhaseDone& done);
  void receive_done();
  /// Whether a message (the peer's PhaseDone) is waiting: a system call on
  /// a socket channel, so the serving loops ask only when idle.
  bool message_ready() { return control_.message_ready(); }
  bool done_received() const { return done_received_; }
  /// The peer's PhaseDone of this phase; all zeros before it arrived.
  const PhaseDone& peer_done() const { return peer_done_; }
  /// The peer's posted count for endpoint `lane` (0 before it arrived).
  std::uint64_t peer_posted(std::size_t lane) const {
    return lane < peer_done_.posted.size() ? peer_done_.posted[lane] : 0;
  }
  void forget_done();

  /// The end of a latency phase (TestRunner::settle): this side's requests
  /// are complete; the other side's word, taken once message_ready().
  void send_settled();
  void receive_settled();

  /// Sends our count of corrupted bytes, returns the peer's.
  std::uint64_t exchange_corrupted(std::uint64_t mine);
  /// The end of every stream phase: sends how many of the peer's messages
  /// this side received, returns how many of ours the peer received (what
  /// an unreliable transport delivered; docs/architecture.md, "Loss").
  std::uint64_t exchange_delivered(std::uint64_t mine);
  /// The end of a pipelined stream (docs/pipeline.md): sends how long this
  /// side spent placing the last message after its last fragment arrived
  /// (0 for the sender), returns the peer's.
  double exchange_placing(double mine);
  /// The end of every measured phase: sends the CPU this side used over
  /// it, returns the peer's.
  CpuUse exchange_cpu(const CpuUse& mine);

  /// Both sides reach this point before either goes on.
  void barrier() { control_.barrier(control_.timeout()); }

 private:
  Bytes exchange(const std::vector<std::byte>& mine);

  bootstrap::Bootstrap& control_;
  PhaseDone peer_done_;
  bool done_received_ = false;
};

// The encoding, exposed for its unit tests.
std::vector<std::byte> encode(const RegionAdvert& message);
std::vector<std::byte> encode(const PhaseDone& message);
std::vector<std::byte> encode_corrupted(std::uint64_t count);
std::vector<std::byte> encode_delivered(std::uint64_t count);
std::vector<std::byte> encode(const CpuUse& message);
std::vector<std::byte> encode_placing(double seconds);
std::vector<std::byte> encode_settled();
RegionAdvert decode_region(std::span<const std::byte> bytes);
PhaseDone decode_done(std::span<const std::byte> bytes);
std::uint64_t decode_corrupted(std::span<const std::byte> bytes);
std::uint64_t decode_delivered(std::span<const std::byte> bytes);
CpuUse decode_cpu(std::span<const std::byte> bytes);
double decode_placing(std::span<const std::byte> bytes);
void decode_settled(std::span<const std::byte> bytes);

}  // namespace uniperf::engine
