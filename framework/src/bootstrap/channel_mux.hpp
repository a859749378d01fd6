// Several independent control channels over one Bootstrap, for a test whose
// concurrent flows each run their own engine on their own thread, started at
// one barrier (docs/architecture.md, "The control conversation").
//
// Every flow's runner talks to its peer exactly as a single-flow test does
// (barriers, end-of-phase messages, validation counts) on its own channel; the mux
// tags each message with its channel and delivers it to that channel only,
// so the flows' control conversations never see each other's messages.
//
// No thread of its own: whichever channel waits for a message reads the
// shared connection and files what it reads under the channel it belongs to;
// the others wait on a condition variable for their share. Both sides must
// create the same number of channels (the test decides it, and both sides
// run the same test).
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace uniperf::bootstrap {

class ChannelMux {
 public:
  /// `base` must outlive the mux and must not be used directly while it lives.
  ChannelMux(Bootstrap& base, std::size_t channels);
  ~ChannelMux();
  ChannelMux(const ChannelMux&) = delete;
  ChannelMux& operator=(const ChannelMux&) = delete;

  std::size_t size() const { return channels_.size(); }
  /// Channel `index`: a Bootstrap of the same rank, peer and timeout as the
  /// base. Each channel is used by one thread at a time.
  Bootstrap& channel(std::size_t index);

 private:
  class Channel;
  friend class Channel;

  void send(std::uint8_t channel, std::span<const std::byte> message);
  Bytes receive(std::uint8_t channel, std::chrono::milliseconds timeout);
  bool message_ready(std::uint8_t channel);
  /// Reads one message from the base and files it; `lock` holds mutex_ and
  /// is released while the base is read.
  void read_one(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds timeout);

  Bootstrap& base_;
  std::mutex send_mutex_;
  std::mutex mutex_;  // guards inbox_, reading_, failure_
  std::condition_variable filed_;
  std::vector<std::deque<Bytes>> inbox_;
  bool reading_ = false;  // one thread reads the base at a time
  std::string failure_;   // the base failed: every channel fails with this
  std::vector<std::unique_ptr<Channel>> channels_;
};

}  // namespace uniperf::bootstrap
