#include "bootstrap/epoch_channel.hpp"

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>

namespace uniperf::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;

/// Every frame: the epoch (32 bits, network order), the kind, the payload.
constexpr std::size_t kHeaderBytes = sizeof(std::uint32_t) + 1;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

}  // namespace

EpochChannel::EpochChannel(Bootstrap& base) : base_(base) {
  set_timeout(base.timeout());
}

void EpochChannel::send_frame(Kind kind, std::span<const std::byte> payload) {
  Bytes frame(kHeaderBytes + payload.size());
  const std::uint32_t epoch = htonl(epoch_);
  std::memcpy(frame.data(), &epoch, sizeof epoch);
  frame[sizeof epoch] = static_cast<std::byte>(kind);
  if (!payload.empty()) std::memcpy(frame.data() + kHeaderBytes, payload.data(), payload.size());
  base_.send(frame);
}

EpochChannel::Frame EpochChannel::read_frame(std::chrono::milliseconds timeout) {
  Bytes bytes = base_.receive(timeout);
  if (bytes.size() < kHeaderBytes ||
      std::to_integer<std::uint8_t>(bytes[4]) > static_cast<std::uint8_t>(Kind::stop)) {
    throw BootstrapError("control protocol error: a message without a valid epoch header");
  }
  Frame frame;
  std::memcpy(&frame.epoch, bytes.data(), sizeof frame.epoch);
  frame.epoch = ntohl(frame.epoch);
  frame.kind = static_cast<Kind>(bytes[4]);
  if (frame.epoch > epoch_ || (frame.epoch == epoch_ && frame.kind == Kind::sync)) {
    // The peer never runs ahead: it enters an epoch only after our sync.
    throw BootstrapError("control protocol error: the peer sent " +
                         std::string(frame.kind == Kind::sync ? "a sync" : "a message") +
                         " for epoch " + std::to_string(frame.epoch) + " in epoch " +
                         std::to_string(epoch_));
  }
  bytes.erase(bytes.begin(), bytes.begin() + kHeaderBytes);
  frame.payload = std::move(bytes);
  return frame;
}

bool EpochChannel::fill_pending(bool wait, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!pending_) {
    if (peer_failure_) throw PeerFailed(*peer_failure_);
    if (!wait && !base_.message_ready()) return false;
    Frame frame = read_frame(wait ? left_until(deadline) : base_.timeout());
    if (frame.epoch < epoch_) continue;  // left behind by a failed epoch
    if (frame.kind == Kind::abort || frame.kind == Kind::stop) {
      peer_failure_.emplace(reinterpret_cast<const char*>(frame.payload.data()),
                            frame.payload.size());
      peer_stopped_ = frame.kind == Kind::stop;
      continue;
    }
    pending_ = std::move(frame.payload);
  }
  return true;
}

void EpochChannel::send(std::span<const std::byte> message) {
  send_frame(Kind::message, message);
}

Bytes EpochChannel::receive(std::chrono::milliseconds timeout) {
  fill_pending(true, timeout);
  Bytes message = std::move(*pending_);
  pending_.reset();
  return message;
}

bool EpochChannel::message_ready() {
  return fill_pending(false, base_.timeout());
}

void EpochChannel::begin(std::uint32_t epoch, std::chrono::milliseconds timeout) {
  if (epoch <= epoch_) {
    throw std::logic_error("epoch " + std::to_string(epoch) + " after " + std::to_string(epoch_));
  }
  epoch_ = epoch;
  pending_.reset();
  peer_failure_.reset();
  peer_stopped_ = false;
  send_frame(Kind::sync, {});
  const auto deadline = Clock::now() + timeout;
  while (true) {
    Bytes bytes = base_.receive(left_until(deadline));
    if (bytes.size() < kHeaderBytes) {
      throw BootstrapError("control protocol error: a message without a valid epoch header");
    }
    std::uint32_t peer_epoch = 0;
    std::memcpy(&peer_epoch, bytes.data(), sizeof peer_epoch);
    peer_epoch = ntohl(peer_epoch);
    const auto kind = static_cast<Kind>(bytes[4]);
    if (peer_epoch == epoch_ && kind == Kind::sync) return;
    if (peer_epoch >= epoch_) {
      throw BootstrapError("control protocol error: the peer sent epoch " +
                           std::to_string(peer_epoch) + " before its sync for epoch " +
                           std::to_string(epoch_));
    }
    // Anything of an earlier epoch is what a failure left behind: dropped.
  }
}

void EpochChannel::abort(const std::string& reason) {
  end_epoch(Kind::abort, reason);
}

void EpochChannel::stop(const std::string& reason) {
  end_epoch(Kind::stop, reason);
}

void EpochChannel::end_epoch(Kind kind, const std::string& reason) {
  if (peer_failure_) return;  // the peer ended the epoch first and knows
  try {
    send_frame(kind, std::as_bytes(std::span(reason)));
  } catch (const BootstrapError&) {
    // The connection is gone: the next begin() says so.
  }
  base_.interrupt_peer(interrupt_tag());
}

bool EpochChannel::peer_ended_epoch() {
  try {
    while (message_ready()) pending_.reset();
  } catch (const BootstrapError&) {
    // PeerFailed (the reason is set), or a lost connection: the next
    // begin() says so.
  }
  return peer_failure_.has_value();
}

std::optional<std::string> EpochChannel::await_peer_failure(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  try {
    while (!peer_failure_) {
      receive(left_until(deadline));  // a message of the failed epoch: dropped
    }
  } catch (const BootstrapError&) {
    // PeerFailed (the reason is set), or nothing came in time.
  }
  return peer_failure_;
}

}  // namespace uniperf::bootstrap
