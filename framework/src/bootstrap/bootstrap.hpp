// Out-of-band control path between the two uniperf processes
// (docs/architecture.md, "The control conversation"):
// ordered messages with deadlines. The engine, the session handshake and the
// plugins' connection blobs all travel here, never on the measured transport.
//
// Every wait has a deadline and throws BootstrapError when it passes or the
// peer is gone, so a dead peer ends the run with a message, not a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <uniperf/plugin.hpp>
#include <utility>

namespace uniperf::bootstrap {

using namespace std::chrono_literals;

struct BootstrapError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A host name that does not resolve: trying again will not help.
struct UnknownHost : BootstrapError {
  using BootstrapError::BootstrapError;
};

/// A local address to connect from that this host cannot use (not one of
/// its addresses, or of the other family than the peer's): trying again
/// will not help either.
struct CannotBind : BootstrapError {
  using BootstrapError::BootstrapError;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  /// 0: the initiator (measures and reports); 1: the responder.
  virtual int rank() const = 0;
  /// Queues one message for the peer.
  virtual void send(std::span<const std::byte> message) = 0;
  /// The next message from the peer; throws BootstrapError on timeout or
  /// when the peer is gone.
  virtual Bytes receive(std::chrono::milliseconds timeout) = 0;
  /// True when a message can be received without waiting (polled by the
  /// passive side of a test between bursts of transport progress).
  virtual bool message_ready() = 0;
  /// A descriptor that reports POLLRDHUP/POLLHUP when the peer is gone, for
  /// the watchdog; -1 when there is none (in-process).
  virtual int liveness_fd() const { return -1; }
  /// Out of band: one byte the peer's take_interrupt() sees at once, even
  /// while it reads no in-band message (a side in a timed loop does not), so
  /// a side whose test failed can stop its peer's loop without waiting for
  /// the peer's deadline. TCP urgent data: a later one replaces an unread
  /// one, and an in-band read past it drops it, so send anything the peer
  /// must know in band first.
  virtual void interrupt_peer(std::uint8_t /*tag*/) {}
  /// The last interrupt from the peer, once; nullopt when none came. Safe to
  /// call from another thread than the in-band calls (the watchdog's).
  virtual std::optional<std::uint8_t> take_interrupt() { return std::nullopt; }
  /// The peer's numeric IP address ("127.0.0.1" in-process); "" if unknown.
  virtual std::string peer_host() const { return ""; }
  /// This end's numeric IP address: the one the peer reached, so the one to
  /// announce to it and its neighbours ("127.0.0.1" in-process); "" if unknown.
  virtual std::string local_host() const { return ""; }

  /// Opens the heartbeat connection beside the control connection (both
  /// sides call it at the same point of the conversation, after the
  /// handshake): a second small TCP connection that only the watchdogs'
  /// threads read and write, so a peer that stops answering (SIGSTOP, a hung
  /// host whose kernel still acknowledges) is noticed without a byte more on
  /// the framed control stream. The side that accepted the control
  /// connection listens on an ephemeral port of the same address and names
  /// it in band with a one-time token; the other connects and sends the
  /// token back. Throws BootstrapError. In-process: nothing to open.
  virtual void open_heartbeat(std::chrono::milliseconds /*timeout*/) {}
  /// The heartbeat connection's descriptor; -1 when there is none.
  virtual int heartbeat_fd() const { return -1; }
  /// Ends the control connection from this side, from any thread: every
  /// wait on it, now or later, throws BootstrapError(`why`) (the watchdog's
  /// answer to a peer that stopped answering: the run then ends as with a
  /// lost peer).
  virtual void sever(const std::string& /*why*/) {}

  void send_text(const std::string& text) { send(std::as_bytes(std::span(text))); }
  std::string receive_text(std::chrono::milliseconds timeout);

  /// Symmetric exchange: both sides send, then both receive.
  Bytes exchange(std::span<const std::byte> mine, std::chrono::milliseconds timeout);
  void barrier(std::chrono::milliseconds timeout);

  /// Deadline used by PeerChannel and the engine for setup steps.
  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 private:
  std::chrono::milliseconds timeout_ = 30s;
};

/// The largest control message either side sends or accepts. The biggest
/// today is the handshake with both sides' provenance (a few KiB); the limit
/// bounds what a stranger on the control port can make a listener allocate.
inline constexpr std::size_t kMaxFrameBytes = std::size_t{1} << 20;

/// Two connected in-process ends (rank 0 and rank 1), for tests that run
/// both sides in two threads of one process.
std::pair<std::unique_ptr<Bootstrap>, std::unique_ptr<Bootstrap>> make_in_process_pair();

/// TCP: the listening side and the connecting side. Which side listens is
/// independent of rank, so a local pair can have the parent listen while the
/// child is the responder.
class TcpListener {
 public:
  /// Binds host:port (port 0 = ephemeral). Throws BootstrapError.
  TcpListener(const std::string& host, std::uint16_t port);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  std::uint16_t port() const { return port_; }
  /// Waits for one peer; throws BootstrapError on timeout. With
  /// `heartbeat_here` the peer's heartbeat connection (open_heartbeat) comes
  /// to this same port, so a server behind a firewall needs one port open;
  /// the listener must then outlive the handshake.
  std::unique_ptr<Bootstrap> accept(int rank, std::chrono::milliseconds timeout,
                                    bool heartbeat_here = false);
  /// As accept(), but null on timeout: a server that also watches a stop
  /// flag waits in slices.
  std::unique_ptr<Bootstrap> try_accept(int rank, std::chrono::milliseconds timeout,
                                        bool heartbeat_here = false);

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// "HOST:PORT" (the last colon splits, so HOST may hold colons) as its two
/// parts; throws BootstrapError for anything else.
std::pair<std::string, std::uint16_t> split_host_port(const std::string& address);

/// Connects to host:port, retrying until the deadline (the peer may still
/// be starting). Throws UnknownHost at once for a name that does not
/// resolve, BootstrapError once the deadline passed. With `bind_address`
/// (a numeric address of this host) the connection, and the heartbeat
/// connection beside it, leave from that address; CannotBind at once when
/// they cannot.
std::unique_ptr<Bootstrap> tcp_connect(const std::string& host, std::uint16_t port, int rank,
                                       std::chrono::milliseconds timeout,
                                       const std::string& bind_address = {});

/// The PeerChannel a plugin sees during Context::connect().
class BootstrapPeerChannel final : public PeerChannel {
 public:
  /// `cancel`: the flag that says the engine gave up on the test (the
  /// session watchdog's abort flag); none: never cancelled.
  explicit BootstrapPeerChannel(Bootstrap& bootstrap, const std::atomic<bool>* cancel = nullptr)
      : bootstrap_(bootstrap), cancel_(cancel) {}
  int rank() const override { return bootstrap_.rank(); }
  Bytes exchange(std::span<const std::byte> mine) override;
  void barrier() override;
  std::string peer_host() const override { return bootstrap_.peer_host(); }
  bool cancelled() const override {
    return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed);
  }
  bool peer_has_spoken() const override;

 private:
  Bootstrap& bootstrap_;
  const std::atomic<bool>* cancel_;
};

}  // namespace uniperf::bootstrap
