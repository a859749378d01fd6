// The Context of the `tcp` plugin (see tcp_context.hpp): socket options,
// the listen/connect handshake over the peer channel, and the Endpoint it
// hands over.
#include "tcp_context.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <sstream>
#include <utility>

#include "tcp_endpoint.hpp"

namespace uniperf::tcp {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// How long the initiator may take to connect and the responder to see it.
constexpr auto kConnectTimeout = 10s;
/// Tags the hellos on the peer channel, so two different plugin versions
/// fail with a message instead of misreading each other. /2: every step
/// starts with plugin_support's outcome byte.
constexpr std::string_view kProtocol = "uniperf-tcp/2";

void set_option(int fd, int level, int name, int value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) {
    throw TransportError(std::string("tcp: cannot set ") + what + " to " + std::to_string(value) +
                         ": " + support::errno_text());
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
      throw TransportError("tcp: poll failed while connecting: " + support::errno_text());
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
    throw TransportError("tcp: getsockname failed: " + support::errno_text());
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

/// A listening socket on the configured address and port. "::" listens on
/// every address of both families (IPV6_V6ONLY off), so an initiator that
/// reached the control connection over IPv4 or IPv6 reaches this too; on a
/// host without IPv6 it is every IPv4 address.
support::Descriptor listen_on(const Settings& settings) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  AddressList found;
  const std::string port = std::to_string(settings.listen_port);
  const bool any_family = settings.listen_address == "::";
  if (const int rc = resolve(settings.listen_address, port.c_str(), hints, found); rc != 0) {
    throw TransportError("tcp: address '" + settings.listen_address +
                         "' is not a numeric IP address: " + gai_strerror(rc));
  }
  const addrinfo* where = found.get();
  support::Descriptor listener(::socket(where->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0 && any_family && errno == EAFNOSUPPORT) {
    // No IPv6 here (ipv6.disable=1): every IPv4 address instead.
    if (const int rc = resolve("0.0.0.0", port.c_str(), hints, found); rc != 0) {
      throw TransportError(std::string("tcp: cannot resolve 0.0.0.0: ") + gai_strerror(rc));
    }
    where = found.get();
    listener = support::Descriptor(::socket(where->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  }
  if (listener.get() < 0) throw TransportError("tcp: socket failed: " + support::errno_text());
  if (any_family && where->ai_family == AF_INET6) {
    set_option(listener.get(), IPPROTO_IPV6, IPV6_V6ONLY, 0, "IPV6_V6ONLY");
  }
  // A fixed `port` is reused by every endpoint in turn: allow rebinding it
  // while earlier connections linger in TIME_WAIT.
  set_option(listener.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  apply_buffer_sizes(listener.get(), settings);  // inherited by the accepted socket
  if (::bind(listener.get(), where->ai_addr, where->ai_addrlen) != 0 ||
      ::listen(listener.get(), 1) != 0) {
    throw TransportError("tcp: cannot listen on " + settings.listen_address + ":" + port + ": " +
                         support::errno_text());
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
  if (const int rc = resolve(host, port_text.c_str(), hints, found); rc != 0) {
    why = "cannot resolve the peer's address '" + host + "': " + gai_strerror(rc);
    return -1;
  }
  const std::string target = host + ":" + port_text;
  // The source address (bind_address), resolved for each family tried.
  const auto bind_source = [&](int fd, int family) {
    if (settings.bind_address.empty()) return true;
    addrinfo source_hints{};
    source_hints.ai_family = family;
    source_hints.ai_socktype = SOCK_STREAM;
    source_hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    AddressList source;
    if (resolve(settings.bind_address, "0", source_hints, source) != 0) {
      why = "bind_address " + settings.bind_address + " is not of the family of " + target;
      return false;
    }
    if (::bind(fd, source.get()->ai_addr, source.get()->ai_addrlen) != 0) {
      why = "cannot bind to bind_address " + settings.bind_address + ": " + support::errno_text();
      return false;
    }
    return true;
  };
  why = "no address for " + target;
  for (const addrinfo* where = found.get(); where != nullptr; where = where->ai_next) {
    support::Descriptor fd(
        ::socket(where->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
      why = "socket failed: " + support::errno_text();
      continue;
    }
    if (!bind_source(fd.get(), where->ai_family)) continue;
    apply_buffer_sizes(fd.get(), settings);
    if (::connect(fd.get(), where->ai_addr, where->ai_addrlen) != 0 && errno != EINPROGRESS) {
      why = "cannot connect to " + target + ": " + support::errno_text();
      continue;
    }
    if (!wait_for(fd.get(), POLLOUT, deadline)) {
      why = "cannot connect to " + target + ": no answer within " +
            std::to_string(kConnectTimeout.count()) + " s";
      return -1;
    }
    if (const int error = socket_error(fd.get()); error != 0) {
      why = "cannot connect to " + target + ": " + support::errno_text(error);
      continue;
    }
    return fd.release();
  }
  return -1;
}

/// The payload of each side's first step: "uniperf-tcp/2 <index>" from the
/// initiator, "uniperf-tcp/2 <index> <port>" from the responder. (A side
/// that fails says so in the step's outcome, not here.)
std::string make_hello(std::uint32_t index, int port = 0) {
  std::ostringstream text;
  text << kProtocol << ' ' << index;
  if (port > 0) text << ' ' << port;
  return text.str();
}

/// Reads the peer's hello and checks that it speaks this protocol and
/// connects the same endpoint; returns the port it names (0: none).
int check_hello(const Bytes& blob, std::uint32_t index) {
  const std::string text = support::to_text(blob);
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
  int port = 0;
  in >> port;
  return port;
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
    // The endpoint sizes its rings from send_depth and recv_depth, and the
    // kernel socket buffers what the peer has not read: no queue limit.
    caps.max_send_depth = 0;
    caps.max_recv_depth = 0;
    // A send completes when the kernel took it; TcpEndpoint::flush() waits
    // for the peer's acknowledgement.
    caps.delivery_fence = true;
    return caps;
  }

  std::string device() const override {
    std::string text =
        "kernel tcp " +
        (settings_.peer_address.empty() ? std::string("to the control peer")
                                        : "to " + settings_.peer_address) +
        " (listen " +
        (settings_.listen_address.find(':') != std::string::npos
             ? "[" + settings_.listen_address + "]"
             : settings_.listen_address) +
        ":" +
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
    if (settings_.staging_bytes != kDefaultStagingBytes)
      text += ", staging " + std::to_string(settings_.staging_bytes);
    if (settings_.receive_wait == ReceiveWait::recv) text += ", waits in recv";
    return text;
  }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<TcpMemory>(address, length);
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    const int fd =
        channel.rank() == 1 ? accept_peer(params, channel) : connect_peer(params, channel);
    support::Descriptor guard(fd);
    apply_connected_options(fd, settings_);
    auto endpoint =
        std::make_unique<TcpEndpoint>(fd, params, settings_.staging_bytes, settings_.receive_wait);
    guard.release();
    return endpoint;
  }

 private:
  /// Responder: listen, tell the initiator the port, learn whether it could
  /// connect, then accept. Each step ends with both sides' outcome
  /// (plugin_support), so a failure on either side ends both at once with
  /// its reason and its kind.
  int accept_peer(const EndpointParams& params, PeerChannel& channel) const {
    support::Descriptor listener;
    int port = 0;
    // A listen failure (address not on this host, port taken) ends the
    // initiator too, at once and with the reason.
    check_hello(support::exchange_step(channel, "tcp",
                                       [&] {
                                         listener = listen_on(settings_);
                                         port = bound_port(listener.get());
                                         return support::to_bytes(make_hello(params.index, port));
                                       }),
                params.index);
    // A wrong peer_address fails both sides at once, not after a timeout here.
    try {
      support::exchange_outcome(channel, "tcp", nullptr);
    } catch (const TransportError& e) {
      throw TransportError(std::string(e.what()) + " (connecting to this host's port " +
                           std::to_string(port) +
                           "); set peer_address in the initiator's config to an address of "
                           "this host that it can reach");
    }
    const auto deadline = Clock::now() + kConnectTimeout;
    if (!wait_for(listener.get(), POLLIN, deadline)) {
      throw TransportError("tcp: the initiator's connection did not arrive on port " +
                           std::to_string(port) + " within " +
                           std::to_string(kConnectTimeout.count()) + " s");
    }
    const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) throw TransportError("tcp: accept failed: " + support::errno_text());
    return fd;
  }

  /// Initiator: learn the responder's port, connect, report the outcome.
  int connect_peer(const EndpointParams& params, PeerChannel& channel) const {
    const int port = check_hello(
        support::exchange_step(channel, "tcp",
                               [&] { return support::to_bytes(make_hello(params.index)); }),
        params.index);
    support::Descriptor fd;
    std::exception_ptr failure;
    try {
      if (port <= 0 || port > 65535) throw TransportError("tcp: the responder sent no valid port");
      const std::string host =
          settings_.peer_address.empty() ? channel.peer_host() : settings_.peer_address;
      if (host.empty()) {
        throw TransportError(
            "tcp: the control connection does not tell the responder's address; set "
            "peer_address in the initiator's config");
      }
      std::string why;
      fd.reset(connect_to(settings_, host, port, Clock::now() + kConnectTimeout, why));
      if (!fd) throw TransportError("tcp: " + why);
    } catch (...) {
      failure = std::current_exception();
    }
    support::exchange_outcome(channel, "tcp", failure);
    return fd.release();
  }

  Settings settings_;
};

int read_option(int fd, int name) {
  int value = 0;
  socklen_t length = sizeof value;
  ::getsockopt(fd, SOL_SOCKET, name, &value, &length);
  return value;
}

}  // namespace

void probe_socket_options(Settings& settings) {
  support::Descriptor probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (probe.get() < 0)
    throw Unavailable("tcp: cannot create a TCP socket: " + support::errno_text());
  apply_buffer_sizes(probe.get(), settings);
  settings.effective_sndbuf = read_option(probe.get(), SO_SNDBUF);
  settings.effective_rcvbuf = read_option(probe.get(), SO_RCVBUF);
  if (settings.busy_poll_us > 0) {
    const int value = settings.busy_poll_us;
    if (::setsockopt(probe.get(), SOL_SOCKET, SO_BUSY_POLL, &value, sizeof value) != 0) {
      settings.busy_poll_note = "busy_poll " + std::to_string(value) + " us refused (" +
                                support::errno_text() +
                                (errno == EPERM ? ", needs CAP_NET_ADMIN" : "") + "), off";
      settings.busy_poll_us = 0;
    }
  }
}

std::unique_ptr<Context> make_context(Settings settings) {
  return std::make_unique<TcpContext>(std::move(settings));
}

int resolve(const std::string& host, const char* service, const addrinfo& hints,
            AddressList& found) {
  addrinfo* head = nullptr;
  const int rc = getaddrinfo(host.c_str(), service, &hints, &head);
  found.reset(rc == 0 ? head : nullptr);
  return rc;
}

}  // namespace uniperf::tcp
