#include "bootstrap/channel_mux.hpp"

#include <cstring>
#include <limits>

namespace uniperf::bootstrap {

class ChannelMux::Channel final : public Bootstrap {
 public:
  Channel(ChannelMux& mux, std::uint8_t index) : mux_(mux), index_(index) {
    set_timeout(mux.base_.timeout());
  }
  int rank() const override { return mux_.base_.rank(); }
  void send(std::span<const std::byte> message) override { mux_.send(index_, message); }
  Bytes receive(std::chrono::milliseconds timeout) override {
    return mux_.receive(index_, timeout);
  }
  bool message_ready() override { return mux_.message_ready(index_); }
  int liveness_fd() const override { return mux_.base_.liveness_fd(); }
  std::string peer_host() const override { return mux_.base_.peer_host(); }

 private:
  ChannelMux& mux_;
  std::uint8_t index_;
};

ChannelMux::ChannelMux(Bootstrap& base, std::size_t channels) : base_(base), inbox_(channels) {
  if (channels == 0 || channels > std::numeric_limits<std::uint8_t>::max()) {
    throw std::invalid_argument("a channel mux holds 1 to 255 channels");
  }
  for (std::size_t i = 0; i < channels; ++i) {
    channels_.push_back(std::make_unique<Channel>(*this, static_cast<std::uint8_t>(i)));
  }
}

ChannelMux::~ChannelMux() = default;

Bootstrap& ChannelMux::channel(std::size_t index) {
  return *channels_.at(index);
}

void ChannelMux::send(std::uint8_t channel, std::span<const std::byte> message) {
  // Control messages only (setup, barriers, end-of-phase): a copy is cheap.
  Bytes tagged(message.size() + 1);
  tagged[0] = static_cast<std::byte>(channel);
  if (!message.empty()) std::memcpy(tagged.data() + 1, message.data(), message.size());
  std::lock_guard lock(send_mutex_);
  base_.send(tagged);
}

void ChannelMux::read_one(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout) {
  reading_ = true;
  lock.unlock();
  Bytes message;
  std::string error;
  try {
    message = base_.receive(timeout);
  } catch (const BootstrapError& e) {
    error = e.what();
  }
  lock.lock();
  reading_ = false;
  if (error.empty() &&
      (message.empty() || std::to_integer<std::size_t>(message[0]) >= inbox_.size())) {
    error = "control protocol error: a message for flow channel " +
            (message.empty() ? std::string("(none)")
                             : std::to_string(std::to_integer<int>(message[0]))) +
            " of " + std::to_string(inbox_.size()) + " (do both sides run the same test?)";
  }
  if (!error.empty()) {
    // The shared connection is broken or out of step (a timeout may have cut
    // a message in half): every channel fails from now on.
    failure_ = error;
  } else {
    auto& inbox = inbox_[std::to_integer<std::size_t>(message[0])];
    message.erase(message.begin());
    inbox.push_back(std::move(message));
  }
  filed_.notify_all();
}

Bytes ChannelMux::receive(std::uint8_t channel, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  while (true) {
    auto& inbox = inbox_[channel];
    if (!inbox.empty()) {
      Bytes message = std::move(inbox.front());
      inbox.pop_front();
      return message;
    }
    if (!failure_.empty()) throw BootstrapError(failure_);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      throw BootstrapError("peer did not answer within " + std::to_string(timeout.count()) + " ms");
    }
    if (!reading_) {
      read_one(lock, left);
    } else {
      filed_.wait_until(lock, deadline);
    }
  }
}

bool ChannelMux::message_ready(std::uint8_t channel) {
  std::unique_lock lock(mutex_);
  if (!inbox_[channel].empty() || !failure_.empty()) return true;  // a failure surfaces on receive
  if (reading_ || !base_.message_ready()) return false;
  read_one(lock, base_.timeout());
  return !inbox_[channel].empty() || !failure_.empty();
}

}  // namespace uniperf::bootstrap
