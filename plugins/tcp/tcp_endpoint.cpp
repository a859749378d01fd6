#include "tcp_endpoint.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "socket_calls.hpp"

namespace uniperf::tcp {
namespace {

/// iovecs per sendmsg: up to half as many queued messages go to the kernel
/// in one call when the socket had pushed back (streaming small messages).
constexpr std::size_t kMaxSendParts = 64;

void store_be32(std::byte* at, std::uint32_t value) {
  const std::uint32_t wire = htonl(value);
  std::memcpy(at, &wire, sizeof wire);
}

std::uint32_t load_be32(const std::byte* at) {
  std::uint32_t wire;
  std::memcpy(&wire, at, sizeof wire);
  return ntohl(wire);
}

}  // namespace

TcpEndpoint::TcpEndpoint(int fd, const EndpointParams& params, std::size_t staging_bytes,
                         ReceiveWait receive_wait)
    : fd_(fd),
      sends_(std::max<std::uint32_t>(params.send_depth, 1)),
      receives_(std::max<std::uint32_t>(params.recv_depth, 1)),
      // Every queued completion stands for a request the engine still counts
      // as outstanding, so the two depths bound the queue.
      completions_(std::size_t{std::max<std::uint32_t>(params.send_depth, 1)} +
                   std::max<std::uint32_t>(params.recv_depth, 1)),
      staging_(staging_bytes),
      staged_receive_most_(staging_bytes / 2),
      wait_in_recv_(receive_wait == ReceiveWait::recv) {
  if (wait_in_recv_) {
    // Only wait()'s recv may block; every other call passes MSG_DONTWAIT.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
      throw TransportError(std::string("tcp: making the socket blocking for wait=recv: ") +
                           std::strerror(errno));
  }
}

std::unique_ptr<RemoteRegion> TcpEndpoint::import_region(std::uint64_t address,
                                                         std::uint64_t length,
                                                         std::span<const std::byte>) {
  // No one-sided ops: the region is only a handle the engine keeps.
  return std::make_unique<RemoteRegion>(address, length);
}

void TcpEndpoint::post(const WorkRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const WorkRequest& request = requests[i];
    if (request.op != Op::send) [[unlikely]]
      throw TransportError("tcp: only send is supported, got " +
                           std::string(to_string(request.op)));
    PendingSend& send = append(sends_);
    store_be32(send.header, request.length);
    store_be32(send.header + 4, request.immediate);
    send.payload = static_cast<const std::byte*>(request.local->address()) + request.local_offset;
    send.length = request.length;
    send.signaled = (request.flags & WorkRequest::kSignaled) != 0;
    send.id = request.id;
  }
  flush_sends();
}

void TcpEndpoint::post_recv(const RecvRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) append(receives_) = requests[i];
}

std::size_t TcpEndpoint::poll(Completion* out, std::size_t max) {
  if (!sends_.empty()) flush_sends();
  // Without a posted receive the bytes stay in the kernel: its window then
  // throttles the sender, the way a receiver-not-ready does on RDMA.
  if (!receives_.empty() && completions_.size() < max) receive_messages();
  return completions_.pop_into(out, max);
}

bool TcpEndpoint::wait(std::chrono::milliseconds timeout, std::uint32_t) {
  // The kernel offers no completion threshold on a socket: wake on the first
  // byte (allowed by the contract; the engine polls afterwards).
  if (!completions_.empty()) return true;
  // Messages already read out of the socket wake no poll(2).
  if (!receives_.empty() && staged() > 0) return true;
  // A sender with queued bytes waits for buffer space, which no recv
  // tells; a zero timeout is SO_RCVTIMEO's "forever".
  if (wait_in_recv_ && sends_.empty() && !receives_.empty() && timeout.count() > 0)
    return wait_in_recv(timeout);
  short events = 0;
  if (!receives_.empty()) events |= POLLIN;
  if (!sends_.empty()) events |= POLLOUT;
  pollfd watched{fd_.get(), events, 0};
  const auto milliseconds = std::clamp<std::chrono::milliseconds::rep>(timeout.count(), 0, INT_MAX);
  return ::poll(&watched, 1, static_cast<int>(milliseconds)) > 0;
}

bool TcpEndpoint::wait_in_recv(std::chrono::milliseconds timeout) {
  if (timeout != receive_timeout_) {
    // The engine sleeps in slices of one length per loop, so this runs
    // once per run, not per wait.
    const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                        static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0)
      throw TransportError(std::string("tcp: setting the receive timeout (SO_RCVTIMEO): ") +
                           std::strerror(errno));
    receive_timeout_ = timeout;
  }
  // staged() is 0 here (wait() returned early otherwise): the bytes land
  // where the next poll's receive_messages() looks first.
  const ssize_t got = socket_calls::recv(fd_.get(), staging_.data(), staging_.size(), 0);
  if (got == 0) return true;                 // the peer closed: the next poll's recv says so
  if (!moved(got, "receive")) return false;  // timed out, or a signal
  staged_begin_ = 0;
  staged_end_ = static_cast<std::size_t>(got);
  drained_in_wait_ = staged_end_ < staging_.size();
  return true;
}

void TcpEndpoint::progress() {
  // Nothing lands without this side's poll() (target_progress is false);
  // only keep queued sends moving, and make no system call when none are.
  if (!sends_.empty()) flush_sends();
}

bool TcpEndpoint::flush() {
  if (!sends_.empty()) {
    flush_sends();
    if (!sends_.empty()) return false;
  }
  // A send completes once the kernel took its bytes; they are at the peer
  // once its kernel acknowledged them all (SIOCOUTQ: sent and unacknowledged
  // plus not yet sent).
  int unacknowledged = 0;
  if (::ioctl(fd_.get(), SIOCOUTQ, &unacknowledged) != 0)
    throw TransportError(
        std::string("tcp: reading the socket's unacknowledged bytes (SIOCOUTQ): ") +
        std::strerror(errno));
  return unacknowledged == 0;
}

std::string TcpEndpoint::describe(std::int32_t status) const {
  switch (status) {
    case 0:
      return "success";
    case kStatusTruncated:
      return "message truncated: the incoming message was longer than the posted receive "
             "buffer (the excess bytes were discarded)";
    default:
      return "unknown tcp plugin status " + std::to_string(status);
  }
}

void TcpEndpoint::flush_sends() {
  if (front_sent_ == 0 && sends_.size() == 1 && sends_.front().length <= kCopiedSendMost) {
    // A small message alone in the queue (every ping-pong message): header
    // and payload copied together go as one buffer. send() of one buffer
    // skips sendmsg's iovec import and per-segment copy, a few percent of a
    // loopback one-way time (against sockperf, which sends one buffer).
    const PendingSend& send = sends_.front();
    const std::size_t total = kHeaderSize + send.length;
    std::memcpy(send_copy_, send.header, kHeaderSize);
    std::memcpy(send_copy_ + kHeaderSize, send.payload, send.length);
    const ssize_t written =
        socket_calls::send(fd_.get(), send_copy_, total, MSG_NOSIGNAL | MSG_DONTWAIT);
    // What the kernel did not take is sent from the message itself later.
    if (moved(written, "send")) retire_sent(static_cast<std::size_t>(written));
    return;
  }
  while (!sends_.empty()) {
    iovec parts[kMaxSendParts];
    std::size_t part_count = 0;
    std::size_t offered = 0;
    std::size_t skip = front_sent_;  // only the front message can be partly sent
    for (std::size_t i = 0; i < sends_.size() && part_count + 2 <= kMaxSendParts; ++i) {
      PendingSend& send = sends_.at(i);
      if (skip < kHeaderSize) {
        parts[part_count++] = {send.header + skip, kHeaderSize - skip};
        offered += kHeaderSize - skip;
        skip = 0;
      } else {
        skip -= kHeaderSize;
      }
      if (send.length > skip) {
        // sendmsg only reads the payload; iovec just lacks a const member.
        parts[part_count++] = {const_cast<std::byte*>(send.payload) + skip, send.length - skip};
        offered += send.length - skip;
      }
      skip = 0;
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = part_count;
    const ssize_t written = socket_calls::sendmsg(fd_.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (!moved(written, "send")) return;
    retire_sent(static_cast<std::size_t>(written));
    if (static_cast<std::size_t>(written) < offered) return;  // the socket buffer is full
  }
}

void TcpEndpoint::retire_sent(std::size_t written) {
  // Every message whose last byte the kernel accepted is done, in order, so
  // a signaled completion also covers the unsignaled sends before it.
  while (written != 0) {
    const PendingSend& send = sends_.front();
    const std::size_t rest = kHeaderSize + send.length - front_sent_;
    if (written < rest) {
      front_sent_ += written;
      return;
    }
    written -= rest;
    front_sent_ = 0;
    if (send.signaled) {
      append(completions_) = Completion{send.id, CompletionType::send, 0, send.length, 0};
    }
    sends_.pop();
  }
}

bool TcpEndpoint::fill_staging() {
  if (socket_drained_) return false;
  const ssize_t got = socket_calls::recv(fd_.get(), staging_.data(), staging_.size(), MSG_DONTWAIT);
  if (!moved(got, "receive")) return false;
  staged_begin_ = 0;
  staged_end_ = static_cast<std::size_t>(got);
  socket_drained_ = staged_end_ < staging_.size();
  return true;
}

std::size_t TcpEndpoint::take_staged(std::byte* into, std::size_t most) {
  const std::size_t n = std::min(most, staged());
  if (into != nullptr) std::memcpy(into, staging_.data() + staged_begin_, n);
  staged_begin_ += n;
  return n;
}

void TcpEndpoint::receive_messages() {
  socket_drained_ = std::exchange(drained_in_wait_, false);
  while (!receives_.empty()) {
    const RecvRequest& receive = receives_.front();
    // A small receive reads through the staging buffer; a large one in place.
    const bool staged_receive = receive.length <= staged_receive_most_;
    if (header_received_ < kHeaderSize) {
      header_received_ += take_staged(header_ + header_received_, kHeaderSize - header_received_);
      if (header_received_ < kHeaderSize) {
        if (staged_receive) {
          if (!fill_staging()) return;
          continue;
        }
        const std::size_t wanted = kHeaderSize - header_received_;
        const ssize_t got =
            socket_calls::recv(fd_.get(), header_ + header_received_, wanted, MSG_DONTWAIT);
        if (!moved(got, "receive")) return;
        header_received_ += static_cast<std::size_t>(got);
        if (static_cast<std::size_t>(got) < wanted) return;  // the rest is not here yet
      }
    }
    const std::uint32_t length = load_be32(header_);
    const std::uint32_t fits = std::min(length, receive.length);
    auto* into = static_cast<std::byte*>(receive.local->address()) + receive.offset;
    bool drained = false;  // the last system call got less than it asked for

    payload_stored_ +=
        static_cast<std::uint32_t>(take_staged(into + payload_stored_, fits - payload_stored_));
    if (payload_stored_ < fits) {
      // Staging is empty here: what comes next is in the socket.
      if (staged_receive) {
        if (!fill_staging()) return;
        continue;
      }
      const std::size_t wanted = fits - payload_stored_;
      iovec parts[2] = {{into + payload_stored_, wanted}, {next_header_, kHeaderSize}};
      msghdr message{};
      message.msg_iov = parts;
      // Reading the next header in the same call saves a recv per message;
      // not when the excess of a truncated message must be discarded first.
      const bool chain_next_header = fits == length;
      message.msg_iovlen = chain_next_header ? 2 : 1;
      const ssize_t got = socket_calls::recvmsg(fd_.get(), &message, MSG_DONTWAIT);
      if (!moved(got, "receive")) return;
      if (static_cast<std::size_t>(got) < wanted) {
        payload_stored_ += static_cast<std::uint32_t>(got);
        return;
      }
      payload_stored_ = fits;
      next_header_received_ = static_cast<std::size_t>(got) - wanted;
      drained = chain_next_header && next_header_received_ < kHeaderSize;
    }

    if (payload_stored_ + payload_discarded_ < length) {
      payload_discarded_ += static_cast<std::uint32_t>(
          take_staged(nullptr, length - payload_stored_ - payload_discarded_));
    }
    if (payload_stored_ + payload_discarded_ < length) {
      // MSG_TRUNC on a TCP socket drops the bytes in the kernel: no buffer needed.
      const std::size_t wanted = length - payload_stored_ - payload_discarded_;
      const ssize_t got = socket_calls::recv(fd_.get(), nullptr, wanted, MSG_DONTWAIT | MSG_TRUNC);
      if (!moved(got, "receive")) return;
      payload_discarded_ += static_cast<std::uint32_t>(got);
      if (static_cast<std::size_t>(got) < wanted) return;
    }

    append(completions_) =
        Completion{receive.id, CompletionType::recv, fits < length ? kStatusTruncated : 0, fits,
                   load_be32(header_ + 4)};
    receives_.pop();
    std::memcpy(header_, next_header_, next_header_received_);
    header_received_ = next_header_received_;
    next_header_received_ = 0;
    payload_stored_ = 0;
    payload_discarded_ = 0;
    if (drained) return;
  }
}

bool TcpEndpoint::moved(ssize_t result, const char* what) const {
  if (result > 0) return true;
  if (result == 0) throw TransportError("tcp: peer closed the connection");
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
  if (errno == ECONNRESET || errno == EPIPE) {
    throw TransportError(std::string("tcp: peer closed the connection (") + what + ": " +
                         std::strerror(errno) + ")");
  }
  throw TransportError(std::string("tcp: ") + what + " failed: " + std::strerror(errno));
}

}  // namespace uniperf::tcp
