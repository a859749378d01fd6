// The `tcp` plugin: two-sided messages over kernel TCP sockets, one
// connection per endpoint. A send is a small header (length, immediate) and
// the payload; the receiver reads one message into the oldest posted
// receive. One-sided ops are not offered: the engine SKIPs them with reason.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::tcp {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::int32_t kStatusTruncated = 1;

std::string errno_text(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

/// A fixed-capacity FIFO: the hot path never allocates.
template <class T>
class Ring {
 public:
  void reserve(std::size_t capacity) { slots_.resize(capacity + 1); }
  bool empty() const { return head_ == tail_; }
  bool full() const { return next(tail_) == head_; }
  T& front() { return slots_[head_]; }
  void pop() { head_ = next(head_); }
  T& push() {
    if (full())
      throw TransportError("tcp: internal queue overflow (the engine broke its depth contract)");
    T& slot = slots_[tail_];
    tail_ = next(tail_);
    return slot;
  }

 private:
  std::size_t next(std::size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }
  std::vector<T> slots_;
  std::size_t head_ = 0, tail_ = 0;
};

struct Header {
  std::uint32_t length;
  std::uint32_t immediate;
};

struct PendingSend {
  Header header;
  const std::byte* payload;
  std::size_t sent;  // bytes of header + payload already written
  std::uint64_t id;
  bool signaled;
};

class TcpMemory final : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  Bytes remote_key() const override { return {}; }
};

class TcpEndpoint final : public Endpoint {
 public:
  TcpEndpoint(int fd, const EndpointParams& params) : fd_(fd) {
    sends_.reserve(params.send_depth + 1);
    receives_.reserve(params.recv_depth + 1);
    completions_.reserve(params.send_depth + params.recv_depth + 2);
  }
  ~TcpEndpoint() override { ::close(fd_); }

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte>) override {
    return std::make_unique<RemoteRegion>(address, length);
  }

  void post(const WorkRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {
      const WorkRequest& wr = requests[i];
      PendingSend& s = sends_.push();
      s.header = {wr.length, wr.immediate};
      s.payload = static_cast<const std::byte*>(wr.local->address()) + wr.local_offset;
      s.sent = 0;
      s.id = wr.id;
      s.signaled = (wr.flags & WorkRequest::kSignaled) != 0;
    }
    flush();
  }

  void post_recv(const RecvRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) receives_.push() = requests[i];
  }

  std::size_t poll(Completion* out, std::size_t max) override {
    flush();
    receive();
    std::size_t n = 0;
    while (n < max && !completions_.empty()) {
      out[n++] = completions_.front();
      completions_.pop();
    }
    return n;
  }

  bool wait(std::chrono::milliseconds timeout, std::uint32_t) override {
    if (!completions_.empty()) return true;
    pollfd pfd{fd_, static_cast<short>(POLLIN | (sends_.empty() ? 0 : POLLOUT)), 0};
    return ::poll(&pfd, 1, static_cast<int>(timeout.count())) > 0;
  }

  void progress() override {
    flush();
    receive();
  }

  std::string describe(std::int32_t status) const override {
    if (status == kStatusTruncated) return "message larger than the posted receive";
    return "tcp status " + std::to_string(status);
  }

 private:
  /// Writes queued sends until the kernel pushes back.
  void flush() {
    while (!sends_.empty()) {
      PendingSend& s = sends_.front();
      const std::size_t total = sizeof(Header) + s.header.length;
      iovec parts[2];
      int count = 0;
      if (s.sent < sizeof(Header)) {
        parts[count++] = {reinterpret_cast<std::byte*>(&s.header) + s.sent,
                          sizeof(Header) - s.sent};
        parts[count++] = {const_cast<std::byte*>(s.payload), s.header.length};
      } else {
        const std::size_t done = s.sent - sizeof(Header);
        parts[count++] = {const_cast<std::byte*>(s.payload) + done, s.header.length - done};
      }
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<std::size_t>(count);
      const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        throw TransportError(errno_text("tcp: the peer closed the connection (send)"));
      }
      s.sent += static_cast<std::size_t>(n);
      if (s.sent < total) return;
      if (s.signaled)
        completions_.push() = Completion{s.id, CompletionType::send, 0, s.header.length, 0};
      sends_.pop();
    }
  }

  /// Reads messages into posted receives; with none posted, leaves the bytes
  /// in the kernel so the sender feels the back-pressure.
  void receive() {
    while (!receives_.empty()) {
      if (header_read_ < sizeof(Header)) {
        const ssize_t n = ::recv(fd_, reinterpret_cast<std::byte*>(&incoming_) + header_read_,
                                 sizeof(Header) - header_read_, MSG_DONTWAIT);
        if (!advance(n)) return;
        header_read_ += static_cast<std::size_t>(n);
        if (header_read_ < sizeof(Header)) return;
        payload_read_ = 0;
        if (incoming_.length > receives_.front().length) {
          throw TransportError("tcp: a message of " + std::to_string(incoming_.length) +
                               " bytes arrived for a receive of " +
                               std::to_string(receives_.front().length));
        }
      }
      RecvRequest& r = receives_.front();
      if (payload_read_ < incoming_.length) {
        auto* into = static_cast<std::byte*>(r.local->address()) + r.offset + payload_read_;
        const ssize_t n = ::recv(fd_, into, incoming_.length - payload_read_, MSG_DONTWAIT);
        if (!advance(n)) return;
        payload_read_ += static_cast<std::size_t>(n);
        if (payload_read_ < incoming_.length) return;
      }
      completions_.push() =
          Completion{r.id, CompletionType::recv, 0, incoming_.length, incoming_.immediate};
      receives_.pop();
      header_read_ = 0;
    }
  }

  /// True when `n` bytes were read; false when nothing is there yet.
  bool advance(ssize_t n) {
    if (n > 0) return true;
    if (n == 0) throw TransportError("tcp: the peer closed the connection");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    throw TransportError(errno_text("tcp: receive failed"));
  }

  int fd_;
  Ring<PendingSend> sends_;
  Ring<RecvRequest> receives_;
  Ring<Completion> completions_;
  Header incoming_{};
  std::size_t header_read_ = 0;
  std::size_t payload_read_ = 0;
};

struct Settings {
  std::string address;
  std::string peer_address;
  bool nodelay = true;
  std::uint64_t sndbuf = 0, rcvbuf = 0;
  std::int64_t busy_poll = 0;
};

void tune(int fd, const Settings& s) {
  int flag = s.nodelay ? 1 : 0;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &flag, sizeof flag);
  if (s.sndbuf) {
    int v = static_cast<int>(s.sndbuf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
  }
  if (s.rcvbuf) {
    int v = static_cast<int>(s.rcvbuf);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
  }
  if (s.busy_poll > 0) {
    int v = static_cast<int>(s.busy_poll);
    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &v, sizeof v);  // EPERM without CAP_NET_ADMIN: ignored
  }
}

bool wait_fd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, events, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

class TcpContext final : public Context {
 public:
  explicit TcpContext(Settings settings) : settings_(std::move(settings)) {}

  Capabilities capabilities() const override {
    Capabilities caps;
    caps.set(Op::send, Support::native);
    caps.selective_completion = Support::emulated;
    caps.completion_events = Support::native;
    caps.post_list = Support::emulated;
    caps.thread_safe_endpoints = true;
    return caps;
  }

  std::string device() const override {
    return "kernel tcp " + settings_.peer_address + (settings_.nodelay ? " nodelay" : "");
  }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<TcpMemory>(address, length);
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    const auto deadline = Clock::now() + 10s;
    int fd = -1;
    if (channel.rank() == 1) {
      // The responder listens; its port travels over the peer channel.
      const int listener = listen_socket();
      sockaddr_in bound{};
      socklen_t length = sizeof bound;
      getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length);
      const std::string port = std::to_string(ntohs(bound.sin_port));
      channel.exchange(std::as_bytes(std::span(port)));
      if (!wait_fd(listener, POLLIN, deadline)) {
        ::close(listener);
        throw TransportError("tcp: the peer did not connect within 10 s");
      }
      fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      ::close(listener);
      if (fd < 0) throw TransportError(errno_text("tcp: accept failed"));
    } else {
      const Bytes reply = channel.exchange({});
      const std::string port(reinterpret_cast<const char*>(reply.data()), reply.size());
      fd = connect_socket(settings_.peer_address, port, deadline);
    }
    tune(fd, settings_);
    channel.barrier();
    return std::make_unique<TcpEndpoint>(fd, params);
  }

 private:
  int listen_socket() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw TransportError(errno_text("tcp: socket"));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = 0;
    if (inet_pton(AF_INET, settings_.address.c_str(), &address.sin_addr) != 1) {
      ::close(fd);
      throw OptionError("tcp: address '" + settings_.address + "' is not an IPv4 address");
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd, 1) != 0) {
      const std::string why = errno_text("tcp: cannot listen on " + settings_.address);
      ::close(fd);
      throw TransportError(why);
    }
    return fd;
  }

  static int connect_socket(const std::string& host, const std::string& port,
                            Clock::time_point deadline) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      throw TransportError("tcp: cannot resolve '" + host + "': " + gai_strerror(rc));
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
    freeaddrinfo(found);
    if (rc != 0 && errno != EINPROGRESS) {
      const std::string why = errno_text("tcp: cannot connect to " + host + ":" + port);
      ::close(fd);
      throw TransportError(why);
    }
    int error = 0;
    socklen_t length = sizeof error;
    if (!wait_fd(fd, POLLOUT, deadline) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      ::close(fd);
      throw TransportError("tcp: cannot connect to " + host + ":" + port + ": " +
                           (error ? std::strerror(error) : "timed out"));
    }
    return fd;
  }

  Settings settings_;
};

class TcpPlugin final : public Plugin {
 public:
  std::string name() const override { return "tcp"; }
  std::string version() const override { return "0.1.0"; }
  std::string library_version() const override {
    utsname u{};
    ::uname(&u);
    return std::string(u.sysname) + " " + u.release;
  }
  std::string description() const override { return "kernel TCP sockets (two-sided baseline)"; }
  std::vector<OptionSpec> options() const override {
    return {
        {"address", OptionType::string, "0.0.0.0", "address the responder listens on for data"},
        {"peer_address", OptionType::string, "127.0.0.1",
         "address the initiator connects to (the responder host in a two-host run)"},
        {"nodelay", OptionType::boolean, "true", "TCP_NODELAY: no Nagle batching"},
        {"sndbuf", OptionType::size, "", "SO_SNDBUF (default: the kernel's)"},
        {"rcvbuf", OptionType::size, "", "SO_RCVBUF (default: the kernel's)"},
        {"busy_poll", OptionType::integer, "0", "SO_BUSY_POLL microseconds (needs CAP_NET_ADMIN)"},
    };
  }
  std::string probe() const override { return ""; }
  std::unique_ptr<Context> open(const Options& options) override {
    Settings s;
    s.address = options.string("address");
    s.peer_address = options.string("peer_address");
    s.nodelay = options.boolean("nodelay");
    if (options.has("sndbuf")) s.sndbuf = options.size("sndbuf");
    if (options.has("rcvbuf")) s.rcvbuf = options.size("rcvbuf");
    s.busy_poll = options.integer("busy_poll");
    return std::make_unique<TcpContext>(std::move(s));
  }
};

}  // namespace
}  // namespace uniperf::tcp

UNIPERF_PLUGIN(uniperf::tcp::TcpPlugin)
