#include "bootstrap/bootstrap.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string_view>
#include <thread>

namespace uniperf::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// ---------------------------------------------------------------------------
// In-process pair: two queues guarded by one mutex.
// ---------------------------------------------------------------------------

struct SharedQueues {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Bytes> to_rank[2];
  bool closed[2] = {false, false};
  std::atomic<int> interrupt_to_rank[2] = {-1, -1};  // -1: none
};

class InProcessBootstrap final : public Bootstrap {
 public:
  InProcessBootstrap(std::shared_ptr<SharedQueues> queues, int rank)
      : queues_(std::move(queues)), rank_(rank) {}
  ~InProcessBootstrap() override {
    std::lock_guard lock(queues_->mutex);
    queues_->closed[rank_] = true;
    queues_->ready.notify_all();
  }

  int rank() const override { return rank_; }
  std::string peer_host() const override { return "127.0.0.1"; }
  std::string local_host() const override { return "127.0.0.1"; }

  void send(std::span<const std::byte> message) override {
    std::lock_guard lock(queues_->mutex);
    queues_->to_rank[1 - rank_].emplace_back(message.begin(), message.end());
    queues_->ready.notify_all();
  }

  Bytes receive(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(queues_->mutex);
    auto& queue = queues_->to_rank[rank_];
    const bool got = queues_->ready.wait_for(
        lock, timeout, [&] { return !queue.empty() || queues_->closed[1 - rank_]; });
    if (!queue.empty()) {
      Bytes message = std::move(queue.front());
      queue.pop_front();
      return message;
    }
    if (!got)
      throw BootstrapError("peer did not answer within " + std::to_string(timeout.count()) + " ms");
    throw BootstrapError("peer closed the control connection");
  }

  bool message_ready() override {
    std::lock_guard lock(queues_->mutex);
    return !queues_->to_rank[rank_].empty();
  }

  void interrupt_peer(std::uint8_t tag) override { queues_->interrupt_to_rank[1 - rank_] = tag; }
  std::optional<std::uint8_t> take_interrupt() override {
    const int tag = queues_->interrupt_to_rank[rank_].exchange(-1);
    if (tag < 0) return std::nullopt;
    return static_cast<std::uint8_t>(tag);
  }

 private:
  std::shared_ptr<SharedQueues> queues_;
  int rank_;
};

// ---------------------------------------------------------------------------
// TCP: length-prefixed frames on a blocking socket, waits bounded by poll().
// ---------------------------------------------------------------------------

void configure_socket(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Keepalive with short intervals: a peer host that vanishes without a FIN
  // is detected in seconds, not hours.
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = 2, interval = 1, count = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

/// Every control message travels as a frame: this magic, a 32-bit length
/// in network order, then the bytes.
constexpr std::byte kFrameMagic[4] = {std::byte{'u'}, std::byte{'p'}, std::byte{'f'}, std::byte{1}};
constexpr std::size_t kFrameHeaderBytes = sizeof kFrameMagic + sizeof(std::uint32_t);

/// Bytes as text for a message, non-printable ones as '.'.
std::string printable(const std::byte* data, std::size_t size) {
  std::string text;
  for (std::size_t i = 0; i < size; ++i) {
    const auto c = std::to_integer<unsigned char>(data[i]);
    text += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.';
  }
  return text;
}

/// The port of a socket address (IPv4 or IPv6) set to `port`.
void set_port(sockaddr_storage& address, std::uint16_t port) {
  if (address.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&address)->sin6_port = htons(port);
  else
    reinterpret_cast<sockaddr_in*>(&address)->sin_port = htons(port);
}

std::uint16_t port_of(const sockaddr_storage& address) {
  return ntohs(address.ss_family == AF_INET6
                   ? reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port
                   : reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

/// poll(2) over `fds` until one is ready or `deadline` passes, through
/// interruptions: what poll returns.
int poll_until(pollfd* fds, nfds_t count, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    const int ready = ::poll(fds, count, static_cast<int>(std::max<std::int64_t>(left, 0)));
    if (ready < 0 && errno == EINTR) continue;
    return ready;
  }
}

int poll_until(int fd, short events, Clock::time_point deadline) {
  pollfd pfd{fd, events, 0};
  return poll_until(&pfd, 1, deadline);
}

/// Reads exactly `size` bytes from `fd` before `deadline`; false if it
/// closed, failed or ran out of time first.
bool read_exact(int fd, char* data, std::size_t size, Clock::time_point deadline) {
  while (size > 0) {
    if (poll_until(fd, POLLIN, deadline) <= 0) return false;
    const ssize_t n = ::recv(fd, data, size, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// A one-time token that ties the heartbeat connection to its control
/// connection: 16 hex digits.
std::string random_token() {
  std::random_device random;
  const std::uint64_t value = (std::uint64_t{random()} << 32) ^ random();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

constexpr std::size_t kTokenChars = 16;

class TcpBootstrap final : public Bootstrap {
 public:
  /// `heartbeat_listener`: a listening socket, alive until the heartbeat is
  /// open, on which the accepting side takes the heartbeat connection (a
  /// server's control port: one port for a firewall to open); -1: an
  /// ephemeral port of its own.
  TcpBootstrap(int fd, int rank, bool accepted, int heartbeat_listener = -1)
      : fd_(fd), rank_(rank), accepted_(accepted), heartbeat_listener_(heartbeat_listener) {
    configure_socket(fd_);
  }
  ~TcpBootstrap() override {
    if (heartbeat_fd_ >= 0) ::close(heartbeat_fd_);
    ::close(fd_);
  }

  int rank() const override { return rank_; }
  int liveness_fd() const override { return fd_; }
  int heartbeat_fd() const override { return heartbeat_fd_; }

  void open_heartbeat(std::chrono::milliseconds timeout) override {
    if (heartbeat_fd_ >= 0) return;
    heartbeat_fd_ = accepted_ ? accept_heartbeat(timeout) : connect_heartbeat(timeout);
  }

  // shutdown(), not close(): the descriptors stay valid for the threads
  // that may be using them; their waits end at once.
  void sever(const std::string& why) override {
    {
      std::lock_guard lock(sever_mutex_);
      if (severed_) return;
      sever_reason_ = why;
      severed_ = true;
    }
    ::shutdown(fd_, SHUT_RDWR);
    if (heartbeat_fd_ >= 0) ::shutdown(heartbeat_fd_, SHUT_RDWR);
  }

  std::string peer_host() const override { return address_of(::getpeername); }
  std::string local_host() const override { return address_of(::getsockname); }

  void send(std::span<const std::byte> message) override {
    throw_if_severed();
    if (message.size() > kMaxFrameBytes) {
      throw BootstrapError("a control message of " + std::to_string(message.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxFrameBytes));
    }
    std::byte header[kFrameHeaderBytes];
    std::memcpy(header, kFrameMagic, sizeof kFrameMagic);
    const std::uint32_t length = htonl(static_cast<std::uint32_t>(message.size()));
    std::memcpy(header + sizeof kFrameMagic, &length, sizeof length);
    write_all(header, sizeof header);
    write_all(message.data(), message.size());
  }

  // The header is checked before anything is allocated: whatever connects
  // to a control port (a port scan, an HTTP health check, another program)
  // costs a few bytes of reading and a clear error, never a buffer of the
  // size its first bytes happen to spell.
  Bytes receive(std::chrono::milliseconds timeout) override {
    throw_if_severed();
    const auto deadline = Clock::now() + timeout;
    std::byte header[kFrameHeaderBytes];
    read_all(header, sizeof header, deadline, timeout);
    if (std::memcmp(header, kFrameMagic, sizeof kFrameMagic) != 0) {
      throw BootstrapError("the peer is not a uniperf process (its message starts with \"" +
                           printable(header, sizeof header) + "\")");
    }
    std::uint32_t length = 0;
    std::memcpy(&length, header + sizeof kFrameMagic, sizeof length);
    length = ntohl(length);
    if (length > kMaxFrameBytes) {
      throw BootstrapError("the peer announced a control message of " + std::to_string(length) +
                           " bytes, over the limit of " + std::to_string(kMaxFrameBytes));
    }
    Bytes message(length);
    read_all(message.data(), message.size(), deadline, timeout);
    return message;
  }

  bool message_ready() override {
    pollfd pfd{fd_, POLLIN, 0};
    return ::poll(&pfd, 1, 0) > 0;
  }

  // Urgent data leaves the in-band stream alone: without SO_OOBINLINE the
  // byte is skipped by ordinary reads and kept for a MSG_OOB read.
  void interrupt_peer(std::uint8_t tag) override {
    // Best effort: a peer that is gone is found by other means.
    (void)::send(fd_, &tag, 1, MSG_OOB | MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  std::optional<std::uint8_t> take_interrupt() override {
    std::uint8_t tag = 0;
    if (::recv(fd_, &tag, 1, MSG_OOB | MSG_DONTWAIT) != 1) return std::nullopt;
    return tag;
  }

 private:
  void write_all(const std::byte* data, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_if_severed();
        throw BootstrapError(errno_text("control connection to the peer failed"));
      }
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  void read_all(std::byte* data, std::size_t size, Clock::time_point deadline,
                std::chrono::milliseconds timeout) {
    while (size > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd pfd{fd_, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        throw BootstrapError("peer did not answer within " + std::to_string(timeout.count()) +
                             " ms");
      }
      const ssize_t n = ::recv(fd_, data, size, 0);
      if (n <= 0) throw_if_severed();
      if (n == 0) throw BootstrapError("peer closed the control connection");
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        throw BootstrapError(errno_text("control connection to the peer failed"));
      }
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  void throw_if_severed() {
    if (!severed_) return;
    std::lock_guard lock(sever_mutex_);
    throw BootstrapError(sever_reason_);
  }

  /// Waits until `listener` has a connection to accept (true) or `deadline`
  /// passes (false), watching the control connection meanwhile: a peer that
  /// dies before it connects (killed while it starts) ends the wait with its
  /// error at once, not at the deadline.
  bool heartbeat_knocks(int listener, Clock::time_point deadline) {
    bool watch_control = true;
    while (true) {
      pollfd fds[2] = {{listener, POLLIN, 0}, {fd_, POLLIN, 0}};
      if (poll_until(fds, watch_control ? 2 : 1, deadline) <= 0) return false;
      if (fds[0].revents != 0) return true;
      char byte = 0;
      const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0) throw BootstrapError("peer closed the control connection");
      if (n < 0 && errno != EAGAIN && errno != EINTR)
        throw BootstrapError(errno_text("control connection to the peer failed"));
      // Bytes ahead of the heartbeat are the next reads' to take.
      if (n > 0) watch_control = false;
    }
  }

  /// The accepting side: offers a port in band with a token, and takes the
  /// first connection there that sends the token back (anything else that
  /// connects is dropped). The port is the server's own listening port when
  /// it gave one (heartbeat_listener_), else an ephemeral one of the address
  /// the peer reached.
  int accept_heartbeat(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    const bool shared = heartbeat_listener_ >= 0;
    int listener = heartbeat_listener_;
    if (shared) {
      if (::getsockname(listener, reinterpret_cast<sockaddr*>(&local), &length) != 0)
        throw BootstrapError(errno_text("heartbeat: the listening address"));
    } else {
      if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0)
        throw BootstrapError(errno_text("heartbeat: the control connection's address"));
      set_port(local, 0);
      listener = ::socket(local.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (listener < 0) throw BootstrapError(errno_text("heartbeat: socket"));
      if (::bind(listener, reinterpret_cast<sockaddr*>(&local), length) != 0 ||
          ::listen(listener, 4) != 0 ||
          ::getsockname(listener, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
        const std::string error = errno_text("cannot listen for the heartbeat connection");
        ::close(listener);
        throw BootstrapError(error);
      }
    }
    // Closes a listener of our own; a shared one stays the server's.
    const auto done_listening = [&] {
      if (!shared) ::close(listener);
    };
    const std::uint16_t port = port_of(local);
    const std::string token = random_token();
    try {
      send_text("heartbeat " + std::to_string(port) + " " + token);
    } catch (...) {
      done_listening();
      throw;
    }
    // A connection that does not send a token soon (a stranger on a shared,
    // public port) is dropped without holding up the peer's.
    constexpr auto kTokenWait = std::chrono::seconds(2);
    while (true) {
      bool knocked = false;
      try {
        knocked = heartbeat_knocks(listener, deadline);
      } catch (...) {
        done_listening();
        throw;
      }
      if (!knocked) {
        done_listening();
        throw BootstrapError("the peer did not open the heartbeat connection to port " +
                             std::to_string(port) + " within " +
                             std::to_string(timeout.count() / 1000) +
                             " s (a firewall between the hosts?)");
      }
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      char theirs[kTokenChars];
      if (read_exact(fd, theirs, sizeof theirs, std::min(deadline, Clock::now() + kTokenWait)) &&
          std::string_view(theirs, sizeof theirs) == token) {
        done_listening();
        configure_socket(fd);
        try {
          send_text("heartbeat ok");
        } catch (...) {
          ::close(fd);
          throw;
        }
        return fd;
      }
      ::close(fd);
    }
  }

  /// The connecting side: connects to the offered port at the address it
  /// reached the peer on and sends the token.
  int connect_heartbeat(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const std::string offer = receive_text(timeout);
    unsigned port = 0;
    char token[kTokenChars + 1] = {};
    if (std::sscanf(offer.c_str(), "heartbeat %u %16s", &port, token) != 2 || port == 0 ||
        port > 65535 || std::strlen(token) != kTokenChars) {
      throw BootstrapError("control protocol error: expected the heartbeat offer, got \"" +
                           printable(reinterpret_cast<const std::byte*>(offer.data()),
                                     std::min<std::size_t>(offer.size(), 64)) +
                           "\"");
    }
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&peer), &length) != 0)
      throw BootstrapError(errno_text("heartbeat: the control connection's peer"));
    set_port(peer, static_cast<std::uint16_t>(port));
    const int fd = ::socket(peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw BootstrapError(errno_text("heartbeat: socket"));
    auto fail = [&](const std::string& what) {
      ::close(fd);
      throw BootstrapError("cannot open the heartbeat connection to port " + std::to_string(port) +
                           ": " + what);
    };
    // From the control connection's own address (a client's --bind), so
    // both leave the same way.
    sockaddr_storage local{};
    socklen_t local_length = sizeof local;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &local_length) != 0)
      fail(std::strerror(errno));
    set_port(local, 0);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), local_length) != 0)
      fail(std::strerror(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&peer), length) != 0) {
      if (errno != EINPROGRESS) fail(std::strerror(errno));
      if (poll_until(fd, POLLOUT, deadline) <= 0) fail("timed out");
      int error = 0;
      socklen_t error_length = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_length);
      if (error != 0) fail(std::strerror(error));
    }
    if (::send(fd, token, kTokenChars, MSG_NOSIGNAL) != static_cast<ssize_t>(kTokenChars))
      fail(errno_text("sending its token"));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    configure_socket(fd);
    std::string answer;
    try {
      answer = receive_text(timeout);
    } catch (const BootstrapError& e) {
      fail(e.what());
    }
    if (answer != "heartbeat ok") fail("the peer did not accept it");
    return fd;
  }

  /// One end's numeric address, by getpeername or getsockname.
  std::string address_of(int (*name_of)(int, sockaddr*, socklen_t*)) const {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (name_of(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
    char host[NI_MAXHOST] = {};
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host,
                      nullptr, 0, NI_NUMERICHOST) != 0) {
      return "";
    }
    // A dual-stack listener sees IPv4 peers as IPv4-mapped IPv6 addresses.
    std::string_view text = host;
    if (text.starts_with("::ffff:") && text.find('.') != std::string_view::npos) {
      text.remove_prefix(7);
    }
    return std::string(text);
  }

  int fd_;
  int rank_;
  bool accepted_;  // this side accepted the control connection (it listens for the heartbeat)
  int heartbeat_listener_;  // the server's listening socket for the heartbeat, or -1 (not owned)
  int heartbeat_fd_ = -1;
  std::atomic<bool> severed_{false};
  std::mutex sever_mutex_;
  std::string sever_reason_;
};

addrinfo* resolve(const std::string& host, std::uint16_t port, bool passive,
                  int family = AF_UNSPEC) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0) throw UnknownHost("cannot resolve '" + host + "': " + gai_strerror(rc));
  return result;
}

}  // namespace

std::string Bootstrap::receive_text(std::chrono::milliseconds timeout) {
  const Bytes message = receive(timeout);
  return std::string(reinterpret_cast<const char*>(message.data()), message.size());
}

Bytes Bootstrap::exchange(std::span<const std::byte> mine, std::chrono::milliseconds timeout) {
  send(mine);
  return receive(timeout);
}

void Bootstrap::barrier(std::chrono::milliseconds timeout) {
  static constexpr std::byte token[] = {std::byte{'B'}};
  const Bytes reply = exchange(token, timeout);
  if (reply.size() != 1 || reply[0] != token[0]) {
    throw BootstrapError("protocol error: the peer is not at the same barrier");
  }
}

std::pair<std::unique_ptr<Bootstrap>, std::unique_ptr<Bootstrap>> make_in_process_pair() {
  auto queues = std::make_shared<SharedQueues>();
  return {std::make_unique<InProcessBootstrap>(queues, 0),
          std::make_unique<InProcessBootstrap>(queues, 1)};
}

TcpListener::TcpListener(const std::string& host, std::uint16_t port) {
  addrinfo* addresses = resolve(host, port, true);
  std::string last_error = "no address";
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // A launcher's rank 0 takes a connection from every rank at once: a
    // short queue overflows, the kernel drops the handshakes' last ACKs,
    // and the ranks it dropped see their connection reset later.
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(addresses);
  if (fd_ < 0) {
    throw BootstrapError("cannot listen on " + (host.empty() ? std::string("*") : host) + ":" +
                         std::to_string(port) + ": " + last_error);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<Bootstrap> TcpListener::accept(int rank, std::chrono::milliseconds timeout,
                                               bool heartbeat_here) {
  auto peer = try_accept(rank, timeout, heartbeat_here);
  if (!peer) {
    throw BootstrapError("no peer connected to port " + std::to_string(port_) + " within " +
                         std::to_string(timeout.count() / 1000) + " s");
  }
  return peer;
}

std::unique_ptr<Bootstrap> TcpListener::try_accept(int rank, std::chrono::milliseconds timeout,
                                                   bool heartbeat_here) {
  pollfd pfd{fd_, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) return nullptr;
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) throw BootstrapError(errno_text("accept failed"));
  return std::make_unique<TcpBootstrap>(fd, rank, true, heartbeat_here ? fd_ : -1);
}

std::pair<std::string, std::uint16_t> split_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  unsigned port = 0;
  const char* end = address.data() + address.size();
  if (colon == std::string::npos || colon == 0 ||
      std::from_chars(address.data() + colon + 1, end, port).ptr != end || port > 65535 ||
      colon + 1 == address.size()) {
    throw BootstrapError("bad address '" + address + "' (expected HOST:PORT)");
  }
  return {address.substr(0, colon), static_cast<std::uint16_t>(port)};
}

std::unique_ptr<Bootstrap> tcp_connect(const std::string& host, std::uint16_t port, int rank,
                                       std::chrono::milliseconds timeout,
                                       const std::string& bind_address) {
  const auto deadline = Clock::now() + timeout;
  // The address to leave from, numeric: its family is the peer's to use.
  sockaddr_storage source{};
  socklen_t source_length = 0;
  if (!bind_address.empty()) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    addrinfo* found = nullptr;
    if (getaddrinfo(bind_address.c_str(), "0", &hints, &found) != 0)
      throw CannotBind("cannot bind to '" + bind_address + "': not a numeric IP address");
    std::memcpy(&source, found->ai_addr, found->ai_addrlen);
    source_length = found->ai_addrlen;
    freeaddrinfo(found);
  }
  std::string last_error;
  while (true) {
    addrinfo* addresses;
    try {
      addresses = resolve(host, port, false, source_length ? source.ss_family : AF_UNSPEC);
    } catch (const UnknownHost& e) {
      if (source_length == 0) throw;
      throw CannotBind(std::string(e.what()) + " as an " +
                       (source.ss_family == AF_INET6 ? "IPv6" : "IPv4") +
                       " address, the family of --bind " + bind_address);
    }
    for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (source_length != 0 &&
          ::bind(fd, reinterpret_cast<const sockaddr*>(&source), source_length) != 0) {
        const std::string why = std::strerror(errno);
        ::close(fd);
        freeaddrinfo(addresses);
        throw CannotBind("cannot bind to " + bind_address + ": " + why);
      }
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        freeaddrinfo(addresses);
        return std::make_unique<TcpBootstrap>(fd, rank, false);
      }
      last_error = std::strerror(errno);
      ::close(fd);
    }
    freeaddrinfo(addresses);
    if (Clock::now() >= deadline) {
      throw BootstrapError("cannot connect to " + host + ":" + std::to_string(port) + ": " +
                           last_error);
    }
    std::this_thread::sleep_for(100ms);
  }
}

Bytes BootstrapPeerChannel::exchange(std::span<const std::byte> mine) {
  try {
    return bootstrap_.exchange(mine, bootstrap_.timeout());
  } catch (const BootstrapError& e) {
    throw TransportError(std::string("connecting to the peer: ") + e.what());
  }
}

bool BootstrapPeerChannel::peer_has_spoken() const {
  try {
    return bootstrap_.message_ready();
  } catch (const BootstrapError&) {
    // The peer aborted or is gone: it will not connect either.
    return true;
  }
}

void BootstrapPeerChannel::barrier() {
  try {
    bootstrap_.barrier(bootstrap_.timeout());
  } catch (const BootstrapError& e) {
    throw TransportError(std::string("connecting to the peer: ") + e.what());
  }
}

}  // namespace uniperf::bootstrap
