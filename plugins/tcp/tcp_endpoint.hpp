// The hot path of the `tcp` plugin: one connected, non-blocking TCP socket
// per Endpoint, carrying framed messages.
//
// Wire format: every send is one message, an 8-byte header (payload length,
// immediate; both big-endian) followed by the payload. The receiver puts one
// message into the oldest posted receive. For a large receive buffer it reads
// the payload straight into it (and the next header in the same call), so a
// large payload is never copied in user space. For a small one (up to half
// the staging buffer, the option `staging`) it reads whatever the socket
// holds, up to the staging buffer's size, into it and copies each message
// out of it: one system call per ping-pong message (the header and payload
// together, as sockperf's single recv), and one per many messages of a
// stream of small ones.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>
#include <vector>

namespace uniperf::tcp {

/// Completion::status values this plugin produces (see describe()).
inline constexpr std::int32_t kStatusTruncated = 1;

inline constexpr std::size_t kHeaderSize = 8;

/// The staging buffer's default size (the option `staging`). Receives of up
/// to half of it are read through it; above that, the payload is read in
/// place.
inline constexpr std::size_t kDefaultStagingBytes = 8192;
/// How an event-driven receiver sleeps (the option `wait`).
enum class ReceiveWait {
  /// In poll(2) until the socket is readable; the bytes are read after it
  /// returns.
  poll,
  /// Inside a blocking recv(2) into the staging buffer, as sockperf's and
  /// qperf's servers read: the wakeup returns with the bytes already copied,
  /// one system call instead of two.
  recv,
};

/// The largest payload sent as one copied buffer when it is alone in the
/// send queue: copying this little costs tens of nanoseconds, less than the
/// second iovec of a sendmsg (see flush_sends).
inline constexpr std::size_t kCopiedSendMost = 1024;

/// The next slot of a ring sized from EndpointParams at connect time (so
/// the hot path never allocates). Full means the engine posted more than
/// the depth it declared: a broken promise, not back-pressure.
template <class T>
T& append(support::CompletionRing<T>& ring) {
  if (ring.full()) [[unlikely]]
    throw TransportError("tcp: more requests posted than the endpoint's depth allows");
  return ring.push_slot();
}

class TcpEndpoint final : public Endpoint {
 public:
  /// Takes ownership of `fd`, a connected socket in non-blocking mode;
  /// `staging_bytes` is the staging buffer's size (the option `staging`),
  /// `receive_wait` how wait() sleeps for a receive (the option `wait`).
  TcpEndpoint(int fd, const EndpointParams& params, std::size_t staging_bytes,
              ReceiveWait receive_wait);
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
  /// True once the peer's kernel acknowledged every byte of every send.
  bool flush() override;

 private:
  struct PendingSend {
    std::byte header[kHeaderSize];
    const std::byte* payload;
    std::uint32_t length;
    bool signaled;
    std::uint64_t id;
  };

  void flush_sends();
  /// Retires the queued sends the kernel took `written` more bytes of.
  void retire_sent(std::size_t written);
  void receive_messages();
  /// wait() for ReceiveWait::recv: sleeps in one recv into the empty
  /// staging buffer for up to `timeout`; true when bytes (or the peer's
  /// close, which the next poll reports) arrived.
  bool wait_in_recv(std::chrono::milliseconds timeout);
  /// Bytes read from the socket into staging_ and not consumed yet.
  std::size_t staged() const { return staged_end_ - staged_begin_; }
  /// One recv of what the socket holds into the empty staging buffer; false
  /// when it holds nothing, or when an earlier recv of this poll already
  /// emptied it.
  bool fill_staging();
  /// Moves up to `most` staged bytes to `into` (dropped when null); returns
  /// how many.
  std::size_t take_staged(std::byte* into, std::size_t most);
  /// Interprets a recv/sendmsg result: true when bytes moved, false when the
  /// socket has nothing (more) for now; throws when the connection is gone.
  bool moved(ssize_t result, const char* what) const;

  support::Descriptor fd_;
  support::CompletionRing<PendingSend> sends_;
  support::CompletionRing<RecvRequest> receives_;
  support::CompletionRing<Completion> completions_;

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
  /// What a small receive's recv brought beyond what it consumed: the
  /// following messages, in stream order, ahead of the socket's bytes.
  std::vector<std::byte> staging_;
  /// The largest posted receive read through staging_: half its size, so
  /// that one recv brings a whole message and the start of the next.
  std::size_t staged_receive_most_;
  std::size_t staged_begin_ = 0;
  std::size_t staged_end_ = 0;
  /// A recv of this poll got less than it asked for: the socket had no
  /// more, so a second recv would almost surely return EAGAIN - a system
  /// call between a ping-pong message's arrival and its completion (it made
  /// the 64 B ping-pong 1.14x sockperf's; 1.04x without it). The next poll
  /// asks again.
  bool socket_drained_ = false;
  /// wait()'s recv got less than the staging buffer holds: the next poll
  /// starts with the socket drained (no recv that would return EAGAIN
  /// before the staged messages complete).
  bool drained_in_wait_ = false;
  /// ReceiveWait::recv: the socket is blocking (every other call passes
  /// MSG_DONTWAIT) and SO_RCVTIMEO bounds wait()'s recv; the timeout it
  /// holds now (0: not set yet).
  bool wait_in_recv_;
  std::chrono::milliseconds receive_timeout_{0};
  /// Header and payload of a small message sent alone (see flush_sends).
  std::byte send_copy_[kHeaderSize + kCopiedSendMost] = {};
};

}  // namespace uniperf::tcp
