// The hot path of the `tcp` plugin: one connected, non-blocking TCP socket
// per Endpoint, carrying framed messages.
//
// Wire format: every send is one message, an 8-byte header (payload length,
// immediate; both big-endian) followed by the payload. The receiver puts one
// message into the oldest posted receive: it reads the header first, then
// the payload straight into the receive buffer, so the payload is never
// copied in user space.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::tcp {

/// Completion::status values this plugin produces (see describe()).
inline constexpr std::int32_t kStatusTruncated = 1;

inline constexpr std::size_t kHeaderSize = 8;

/// A fixed-capacity FIFO sized at connect time, so the hot path never allocates.
template <class T>
class Ring {
 public:
  explicit Ring(std::size_t capacity) : slots_(capacity + 1) {}

  bool empty() const { return head_ == tail_; }
  std::size_t size() const {
    return tail_ >= head_ ? tail_ - head_ : tail_ + slots_.size() - head_;
  }
  std::size_t capacity() const { return slots_.size() - 1; }
  T& front() { return slots_[head_]; }
  /// The i-th oldest element; i < size().
  T& at(std::size_t i) {
    const std::size_t index = head_ + i;
    return slots_[index < slots_.size() ? index : index - slots_.size()];
  }
  void pop() { head_ = next(head_); }
  /// Appends a slot and returns it. Throws only when the engine posted more
  /// than the depth it declared in EndpointParams.
  T& push() {
    const std::size_t after = next(tail_);
    if (after == head_) [[unlikely]]
      throw TransportError("tcp: more requests posted than the endpoint's depth allows");
    T& slot = slots_[tail_];
    tail_ = after;
    return slot;
  }

 private:
  std::size_t next(std::size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

class TcpEndpoint final : public Endpoint {
 public:
  /// Takes ownership of `fd`, a connected socket in non-blocking mode.
  TcpEndpoint(int fd, const EndpointParams& params);
  ~TcpEndpoint() override;
  TcpEndpoint(const TcpEndpoint&) = delete;
  TcpEndpoint& operator=(const TcpEndpoint&) = delete;

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override;
  std::string describe(std::int32_t status) const override;

 private:
  struct PendingSend {
    std::byte header[kHeaderSize];
    const std::byte* payload;
    std::uint32_t length;
    bool signaled;
    std::uint64_t id;
  };

  void flush_sends();
  void receive_messages();
  /// Interprets a recv/sendmsg result: true when bytes moved, false when the
  /// socket has nothing (more) for now; throws when the connection is gone.
  bool moved(ssize_t result, const char* what) const;

  int fd_;
  Ring<PendingSend> sends_;
  Ring<RecvRequest> receives_;
  Ring<Completion> completions_;

  /// Bytes of sends_.front() (header + payload) the kernel already accepted.
  std::size_t front_sent_ = 0;

  /// The message being received: its header, how much of the header has
  /// arrived, and how much of its payload was stored or (beyond the posted
  /// buffer) discarded.
  std::byte header_[kHeaderSize] = {};
  std::size_t header_received_ = 0;
  std::uint32_t payload_stored_ = 0;
  std::uint32_t payload_discarded_ = 0;
  /// The start of the following message's header, read in the same system
  /// call as the end of the current payload (one recv per message when
  /// streaming).
  std::byte next_header_[kHeaderSize] = {};
  std::size_t next_header_received_ = 0;
};

}  // namespace uniperf::tcp
