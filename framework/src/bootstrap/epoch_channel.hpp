// Epochs on the control connection, so one failed test does not end a run
// (docs/architecture.md, "Recovering from a failed test").
//
// A test that fails leaves the two sides at unknown points of their control
// conversation: one may wait for a message the other will never send, or
// have sent messages the other will never read. Every message therefore
// carries the epoch it belongs to (a number both sides advance alike, one
// per config and per test), and each epoch opens with a sync: both sides
// send "sync N" and read until the peer's "sync N", dropping whatever the
// failed epoch left behind. A side whose test fails says so in band ("abort
// N" with its reason: a peer waiting for any message gets that instead and
// fails at once) and out of band (Bootstrap::interrupt_peer: the peer's
// watchdog stops a timed loop that reads no control messages). A side whose
// user stopped the run (Ctrl-C) says "stop N" the same ways: the peer ends
// its test alike but knows that nothing failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace uniperf::bootstrap {

/// What a receive returns instead of a message when the peer's side of the
/// current epoch failed: its reason, in the peer's words. A BootstrapError,
/// so every waiter already handles it; EpochChannel::peer_failure() tells it
/// apart from a lost connection.
struct PeerFailed : BootstrapError {
  using BootstrapError::BootstrapError;
};

class EpochChannel final : public Bootstrap {
 public:
  /// `base` must outlive the channel and must not be used directly while
  /// the channel lives.
  explicit EpochChannel(Bootstrap& base);

  int rank() const override { return base_.rank(); }
  int liveness_fd() const override { return base_.liveness_fd(); }
  std::string peer_host() const override { return base_.peer_host(); }
  void interrupt_peer(std::uint8_t tag) override { base_.interrupt_peer(tag); }
  std::optional<std::uint8_t> take_interrupt() override { return base_.take_interrupt(); }
  int heartbeat_fd() const override { return base_.heartbeat_fd(); }
  void sever(const std::string& why) override { base_.sever(why); }

  /// A message of the current epoch.
  void send(std::span<const std::byte> message) override;
  /// The next message of the current epoch (an earlier epoch's are
  /// dropped). Throws PeerFailed when the peer aborted this epoch.
  Bytes receive(std::chrono::milliseconds timeout) override;
  /// Whether receive() has a message now; throws PeerFailed like receive().
  bool message_ready() override;

  /// Enters epoch `epoch` (larger than the current one) in step with the
  /// peer: sends the sync, then drops the peer's messages until its sync for
  /// the same epoch. Throws BootstrapError when the peer does not arrive
  /// within `timeout` or the connection is lost: only then is the peer
  /// really gone.
  void begin(std::uint32_t epoch, std::chrono::milliseconds timeout);

  /// Tells the peer this side's part of the current epoch failed: in band
  /// (its receives throw PeerFailed with `reason`) and out of band (its
  /// watchdog stops its loop). Best effort: a lost connection is found by
  /// the next begin().
  void abort(const std::string& reason);
  /// As abort(), but this side stops the run at its user's request (a
  /// Ctrl-C): not a failure. The peer's receives throw PeerFailed with
  /// `reason` alike, and peer_stopped() tells it apart.
  void stop(const std::string& reason);

  /// Waits up to `timeout` for the peer's abort of the current epoch and
  /// returns its reason (after the peer's interrupt stopped this side: its
  /// in-band reason is on its way). Messages before it are dropped: the
  /// epoch failed. nullopt when none came.
  std::optional<std::string> await_peer_failure(std::chrono::milliseconds timeout);

  /// Whether the peer already ended the current epoch (abort or stop), from
  /// what the connection holds now, without waiting: for a side whose own
  /// failure may be the peer's doing (its transport closed after it told
  /// us why). The epoch's messages read meanwhile are dropped.
  bool peer_ended_epoch();

  /// The peer's reason when it aborted the current epoch, once seen.
  const std::optional<std::string>& peer_failure() const { return peer_failure_; }
  /// Whether that was the peer stopping its run (stop()), not failing.
  bool peer_stopped() const { return peer_stopped_; }
  std::uint32_t epoch() const { return epoch_; }
  /// The tag the peer's interrupts carry in the current epoch.
  std::uint8_t interrupt_tag() const { return static_cast<std::uint8_t>(epoch_); }

 private:
  enum class Kind : std::uint8_t { message = 0, sync = 1, abort = 2, stop = 3 };
  struct Frame {
    std::uint32_t epoch = 0;
    Kind kind = Kind::message;
    Bytes payload;
  };

  void send_frame(Kind kind, std::span<const std::byte> payload);
  /// abort() and stop(): the frame, then the out-of-band interrupt.
  void end_epoch(Kind kind, const std::string& reason);
  Frame read_frame(std::chrono::milliseconds timeout);
  /// The next frame of the current epoch that is a message, into pending_;
  /// `wait` false: only if the base has one ready now.
  bool fill_pending(bool wait, std::chrono::milliseconds timeout);

  Bootstrap& base_;
  std::uint32_t epoch_ = 0;
  std::optional<Bytes> pending_;  // a message read ahead by message_ready()
  std::optional<std::string> peer_failure_;
  bool peer_stopped_ = false;
};

}  // namespace uniperf::bootstrap
