// The `tcp` plugin: two-sided messages over kernel TCP sockets, one
// connection per endpoint; the baseline the other transports are compared
// with (what qperf tcp_lat / tcp_bw and sockperf measure). One-sided ops are
// not offered, so the engine SKIPs them with a reason.
//
// Connecting: the responder (rank 1) listens on `address`:`port` and sends
// the port it got over the peer channel; the initiator (rank 0) connects to
// that port on the responder's host as the control connection sees it
// (PeerChannel::peer_host), or on `peer_address` when the config sets one (a
// data network other than the control network).
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <sstream>
#include <uniperf/plugin.hpp>
#include <utility>

#include "tcp_endpoint.hpp"

namespace uniperf::tcp {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// How long the initiator may take to connect and the responder to see it.
constexpr auto kConnectTimeout = 10s;
/// Tags the blobs on the peer channel, so two different plugin versions
/// fail with a message instead of misreading each other.
constexpr std::string_view kProtocol = "uniperf-tcp/1";

std::string errno_text(int error) {
  return std::strerror(error);
}

/// Closes the socket unless ownership was released.
class SocketGuard {
 public:
  explicit SocketGuard(int fd) : fd_(fd) {}
  ~SocketGuard() {
    if (fd_ >= 0) ::close(fd_);
  }
  SocketGuard(const SocketGuard&) = delete;
  SocketGuard& operator=(const SocketGuard&) = delete;
  SocketGuard(SocketGuard&& other) noexcept : fd_(other.release()) {}
  SocketGuard& operator=(SocketGuard&&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head != nullptr) freeaddrinfo(head);
  }
};

struct Settings {
  std::string listen_address;
  int listen_port = 0;
  std::string peer_address;
  bool nodelay = true;
  int sndbuf = 0;  // 0: the kernel's default
  int rcvbuf = 0;
  int busy_poll_us = 0;        // 0: off, or refused at open()
  std::string busy_poll_note;  // why busy_poll is off although asked for
  int effective_sndbuf = 0;    // what the kernel granted, for device()
  int effective_rcvbuf = 0;
};

void set_option(int fd, int level, int name, int value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) {
    throw TransportError(std::string("tcp: cannot set ") + what + " to " + std::to_string(value) +
                         ": " + errno_text(errno));
  }
}

/// Buffer sizes go on before connect/listen: the receive buffer fixes the
/// window scale negotiated in the handshake.
void apply_buffer_sizes(int fd, const Settings& settings) {
  if (settings.sndbuf > 0) set_option(fd, SOL_SOCKET, SO_SNDBUF, settings.sndbuf, "SO_SNDBUF");
  if (settings.rcvbuf > 0) set_option(fd, SOL_SOCKET, SO_RCVBUF, settings.rcvbuf, "SO_RCVBUF");
}

void apply_connected_options(int fd, const Settings& settings) {
  set_option(fd, IPPROTO_TCP, TCP_NODELAY, settings.nodelay ? 1 : 0, "TCP_NODELAY");
  if (settings.busy_poll_us > 0) {
    set_option(fd, SOL_SOCKET, SO_BUSY_POLL, settings.busy_poll_us, "SO_BUSY_POLL");
  }
}

/// Waits until `fd` reports one of `events`; false when the deadline passed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd watched{fd, events, 0};
    const int ready =
        ::poll(&watched, 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) {
      throw TransportError("tcp: poll failed while connecting: " + errno_text(errno));
    }
  }
}

int socket_error(int fd) {
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return errno;
  return error;
}

int bound_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw TransportError("tcp: getsockname failed: " + errno_text(errno));
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

/// A listening socket on the configured address and port.
SocketGuard listen_on(const Settings& settings) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  AddressList found;
  const std::string port = std::to_string(settings.listen_port);
  if (const int rc =
          getaddrinfo(settings.listen_address.c_str(), port.c_str(), &hints, &found.head);
      rc != 0) {
    throw TransportError("tcp: address '" + settings.listen_address +
                         "' is not a numeric IP address: " + gai_strerror(rc));
  }
  const addrinfo& where = *found.head;
  SocketGuard listener(::socket(where.ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) throw TransportError("tcp: socket failed: " + errno_text(errno));
  // A fixed `port` is reused by every endpoint in turn: allow rebinding it
  // while earlier connections linger in TIME_WAIT.
  set_option(listener.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  apply_buffer_sizes(listener.get(), settings);  // inherited by the accepted socket
  if (::bind(listener.get(), where.ai_addr, where.ai_addrlen) != 0 ||
      ::listen(listener.get(), 1) != 0) {
    throw TransportError("tcp: cannot listen on " + settings.listen_address + ":" + port + ": " +
                         errno_text(errno));
  }
  return listener;
}

/// Connects to the peer within the deadline, trying every address the
/// name resolves to. Returns the socket, or -1 with `why` filled.
int connect_to(const Settings& settings, const std::string& host, int port,
               Clock::time_point deadline, std::string& why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  AddressList found;
  const std::string port_text = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found.head); rc != 0) {
    why = "cannot resolve the peer's address '" + host + "': " + gai_strerror(rc);
    return -1;
  }
  const std::string target = host + ":" + port_text;
  why = "no address for " + target;
  for (const addrinfo* where = found.head; where != nullptr; where = where->ai_next) {
    SocketGuard fd(::socket(where->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
      why = "socket failed: " + errno_text(errno);
      continue;
    }
    apply_buffer_sizes(fd.get(), settings);
    if (::connect(fd.get(), where->ai_addr, where->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = "cannot connect to " + target + ": " + errno_text(errno);
      continue;
    }
    if (!wait_for(fd.get(), POLLOUT, deadline)) {
      why = "cannot connect to " + target + ": no answer within " +
            std::to_string(kConnectTimeout.count()) + " s";
      return -1;
    }
    if (const int error = socket_error(fd.get()); error != 0) {
      why = "cannot connect to " + target + ": " + errno_text(error);
      continue;
    }
    return fd.release();
  }
  return -1;
}

Bytes to_bytes(const std::string& text) {
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return Bytes(first, first + text.size());
}

std::string to_text(const Bytes& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

/// The first blob each side sends: "uniperf-tcp/1 <index>" from the
/// initiator; "uniperf-tcp/1 <index> <port>" from the responder, or
/// "uniperf-tcp/1 <index> 0 <why>" when it cannot listen.
struct Hello {
  int port = 0;
  std::string failure;
};

std::string make_hello(std::uint32_t index, int port = 0, const std::string& failure = "") {
  std::ostringstream text;
  text << kProtocol << ' ' << index;
  if (port > 0) text << ' ' << port;
  if (!failure.empty()) text << " 0 " << failure;
  return text.str();
}

/// Reads the peer's hello and checks that it speaks this protocol and
/// connects the same endpoint.
Hello check_hello(const Bytes& blob, std::uint32_t index) {
  const std::string text = to_text(blob);
  std::istringstream in(text);
  std::string protocol;
  std::uint32_t their_index = 0;
  in >> protocol >> their_index;
  if (protocol != kProtocol || !in) {
    throw TransportError("tcp: the peer's tcp plugin speaks another protocol ('" +
                         text.substr(0, 40) + "', expected '" + std::string(kProtocol) + "')");
  }
  if (their_index != index) {
    throw TransportError("tcp: the peer connects endpoint " + std::to_string(their_index) +
                         " while this side connects endpoint " + std::to_string(index));
  }
  Hello hello;
  if (in >> hello.port && hello.port == 0) {
    std::getline(in >> std::ws, hello.failure);
  }
  return hello;
}

class TcpMemory final : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  // Nothing to register with a kernel socket, and no one-sided ops to key.
  Bytes remote_key() const override { return {}; }
};

class TcpContext final : public Context {
 public:
  explicit TcpContext(Settings settings) : settings_(std::move(settings)) {}

  Capabilities capabilities() const override {
    Capabilities caps;
    caps.set(Op::send, Support::native);
    // write, write_imm, read and the atomics stay Support::none.
    caps.selective_completion = Support::emulated;  // unsignaled sends are just not reported
    caps.completion_events = Support::native;       // poll(2) on the socket
    caps.post_list = Support::emulated;
    caps.max_inline = 0;
    caps.max_message = 0;  // any uint32 length
    caps.target_progress = false;
    caps.ordered_write_visibility = false;
    caps.thread_safe_endpoints = true;  // each endpoint owns its socket; nothing shared
    return caps;
  }

  std::string device() const override {
    std::string text =
        "kernel tcp " +
        (settings_.peer_address.empty() ? std::string("to the control peer")
                                        : "to " + settings_.peer_address) +
        " (listen " + settings_.listen_address + ":" +
        (settings_.listen_port == 0 ? std::string("any") : std::to_string(settings_.listen_port)) +
        ")";
    text += settings_.nodelay ? ", nodelay" : ", Nagle";
    if (settings_.sndbuf > 0) {
      text += ", sndbuf " + std::to_string(settings_.sndbuf) + " (kernel " +
              std::to_string(settings_.effective_sndbuf) + ")";
    }
    if (settings_.rcvbuf > 0) {
      text += ", rcvbuf " + std::to_string(settings_.rcvbuf) + " (kernel " +
              std::to_string(settings_.effective_rcvbuf) + ")";
    }
    if (settings_.busy_poll_us > 0)
      text += ", busy_poll " + std::to_string(settings_.busy_poll_us) + " us";
    if (!settings_.busy_poll_note.empty()) text += ", " + settings_.busy_poll_note;
    return text;
  }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<TcpMemory>(address, length);
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    const int fd =
        channel.rank() == 1 ? accept_peer(params, channel) : connect_peer(params, channel);
    SocketGuard guard(fd);
    apply_connected_options(fd, settings_);
    auto endpoint = std::make_unique<TcpEndpoint>(fd, params);
    guard.release();
    return endpoint;
  }

 private:
  /// Responder: listen, tell the initiator the port, learn whether it could
  /// connect (so a wrong peer_address fails both sides at once, not after a
  /// timeout here), then accept.
  int accept_peer(const EndpointParams& params, PeerChannel& channel) const {
    // A listen failure (address not on this host, port taken) still goes
    // through the hello, so the initiator fails at once with the reason.
    std::optional<SocketGuard> listener;
    int port = 0;
    std::string failure;
    try {
      listener.emplace(listen_on(settings_));
      port = bound_port(listener->get());
    } catch (const TransportError& e) {
      failure = e.what();
    }
    check_hello(channel.exchange(to_bytes(make_hello(params.index, port, failure))), params.index);
    if (!failure.empty()) throw TransportError(failure);

    const std::string outcome = to_text(channel.exchange({}));
    if (!outcome.empty()) {
      throw TransportError("tcp: the initiator could not connect to this host's port " +
                           std::to_string(port) + " (" + outcome +
                           "); set peer_address in the initiator's config to an address of "
                           "this host that it can reach");
    }
    const auto deadline = Clock::now() + kConnectTimeout;
    if (!wait_for(listener->get(), POLLIN, deadline)) {
      throw TransportError("tcp: the initiator's connection did not arrive on port " +
                           std::to_string(port) + " within " +
                           std::to_string(kConnectTimeout.count()) + " s");
    }
    const int fd = ::accept4(listener->get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) throw TransportError("tcp: accept failed: " + errno_text(errno));
    return fd;
  }

  /// Initiator: learn the responder's port, connect, report the outcome.
  int connect_peer(const EndpointParams& params, PeerChannel& channel) const {
    const Hello hello =
        check_hello(channel.exchange(to_bytes(make_hello(params.index))), params.index);
    if (!hello.failure.empty()) {
      std::string_view why = hello.failure;
      if (why.starts_with("tcp: ")) why.remove_prefix(5);
      throw TransportError("tcp: the responder failed: " + std::string(why));
    }
    const int port = hello.port;
    if (port <= 0 || port > 65535) {
      channel.exchange(to_bytes("no valid port from the responder"));
      throw TransportError("tcp: the responder sent no valid port");
    }
    const std::string host =
        settings_.peer_address.empty() ? channel.peer_host() : settings_.peer_address;
    if (host.empty()) {
      channel.exchange(to_bytes("no peer address"));
      throw TransportError(
          "tcp: the control connection does not tell the responder's address; set "
          "peer_address in the initiator's config");
    }
    std::string why;
    const int fd = connect_to(settings_, host, port, Clock::now() + kConnectTimeout, why);
    SocketGuard guard(fd);
    channel.exchange(fd >= 0 ? Bytes{} : to_bytes(why));
    if (fd < 0) throw TransportError("tcp: " + why);
    return guard.release();
  }

  Settings settings_;
};

int checked_int(const Options& options, const std::string& name, std::int64_t low,
                std::int64_t high) {
  const std::int64_t value = options.integer(name);
  if (value < low || value > high) {
    throw OptionError("tcp: option '" + name + "' must be between " + std::to_string(low) +
                      " and " + std::to_string(high) + ", got " + std::to_string(value));
  }
  return static_cast<int>(value);
}

int checked_buffer_size(const Options& options, const std::string& name) {
  if (!options.has(name)) return 0;
  const std::uint64_t value = options.size(name);
  // The kernel doubles the value it is given, in an int.
  if (value == 0 || value > INT_MAX / 2) {
    throw OptionError("tcp: option '" + name + "' must be between 1 and " +
                      std::to_string(INT_MAX / 2) + " bytes, got " + std::to_string(value));
  }
  return static_cast<int>(value);
}

void check_numeric_address(const std::string& address) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  AddressList found;
  if (address.empty() || getaddrinfo(address.c_str(), nullptr, &hints, &found.head) != 0) {
    throw OptionError(
        "tcp: option 'address' must be a numeric IPv4 or IPv6 address of this "
        "host, got '" +
        address + "'");
  }
}

int read_option(int fd, int name) {
  int value = 0;
  socklen_t length = sizeof value;
  ::getsockopt(fd, SOL_SOCKET, name, &value, &length);
  return value;
}

/// Tries the socket options on a scratch socket, so device() can say what
/// the kernel granted and a refused busy_poll is noted instead of failing
/// every connect.
void probe_socket_options(Settings& settings) {
  SocketGuard probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (probe.get() < 0) throw Unavailable("tcp: cannot create a TCP socket: " + errno_text(errno));
  apply_buffer_sizes(probe.get(), settings);
  settings.effective_sndbuf = read_option(probe.get(), SO_SNDBUF);
  settings.effective_rcvbuf = read_option(probe.get(), SO_RCVBUF);
  if (settings.busy_poll_us > 0) {
    const int value = settings.busy_poll_us;
    if (::setsockopt(probe.get(), SOL_SOCKET, SO_BUSY_POLL, &value, sizeof value) != 0) {
      settings.busy_poll_note = "busy_poll " + std::to_string(value) + " us refused (" +
                                errno_text(errno) +
                                (errno == EPERM ? ", needs CAP_NET_ADMIN" : "") + "), off";
      settings.busy_poll_us = 0;
    }
  }
}

class TcpPlugin final : public Plugin {
 public:
  std::string name() const override { return "tcp"; }
  std::string version() const override { return "0.1.0"; }

  std::string library_version() const override {
    utsname system{};
    if (::uname(&system) != 0) return "Linux (uname failed)";
    return std::string(system.sysname) + " " + system.release;
  }

  std::string description() const override {
    return "kernel TCP sockets, two-sided send/recv only (the qperf tcp_lat/tcp_bw baseline)";
  }

  std::vector<OptionSpec> options() const override {
    return {
        {"address", OptionType::string, "0.0.0.0",
         "numeric IP address the responder listens on for data connections"},
        {"port", OptionType::integer, "0",
         "port the responder listens on; 0 = any free port (sent to the initiator)"},
        {"peer_address", OptionType::string, "",
         "address the initiator connects to; unset = the responder's address on the control "
         "connection (set it to run data over another network)"},
        {"nodelay", OptionType::boolean, "true", "TCP_NODELAY: send small messages at once"},
        {"sndbuf", OptionType::size, "", "SO_SNDBUF in bytes; unset = kernel default"},
        {"rcvbuf", OptionType::size, "", "SO_RCVBUF in bytes; unset = kernel default"},
        {"busy_poll", OptionType::integer, "0",
         "SO_BUSY_POLL in microseconds; 0 = off (refused without CAP_NET_ADMIN: noted in device)"},
    };
  }

  std::string probe() const override { return ""; }

  std::unique_ptr<Context> open(const Options& options) override {
    Settings settings;
    settings.listen_address = options.string("address");
    settings.listen_port = checked_int(options, "port", 0, 65535);
    settings.peer_address = options.string("peer_address");
    check_numeric_address(settings.listen_address);
    settings.nodelay = options.boolean("nodelay");
    settings.sndbuf = checked_buffer_size(options, "sndbuf");
    settings.rcvbuf = checked_buffer_size(options, "rcvbuf");
    settings.busy_poll_us = checked_int(options, "busy_poll", 0, INT_MAX);
    probe_socket_options(settings);
    return std::make_unique<TcpContext>(std::move(settings));
  }
};

}  // namespace
}  // namespace uniperf::tcp

UNIPERF_PLUGIN(uniperf::tcp::TcpPlugin)
