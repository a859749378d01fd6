// The `tcp` plugin: two-sided messages over kernel TCP sockets, one
// connection per endpoint; the baseline the other transports are compared
// with (what qperf tcp_lat / tcp_bw and sockperf measure). One-sided ops are
// not offered, so the engine SKIPs them with a reason. This file declares
// and checks the options; tcp_context.cpp connects, tcp_endpoint.cpp moves
// the bytes.
#include <sys/utsname.h>

#include <climits>
#include <uniperf/plugin.hpp>

#include "tcp_context.hpp"

namespace uniperf::tcp {
namespace {

void check_numeric_address(const std::string& address, const char* option) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  AddressList found;
  if (address.empty() || resolve(address, nullptr, hints, found) != 0) {
    throw OptionError(std::string("tcp: option '") + option +
                      "' must be a numeric IPv4 or IPv6 address of this host, got '" + address +
                      "'");
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
        {"address", OptionType::string, "::",
         "numeric IP address the responder listens on for data connections; '::' (every "
         "IPv6 and IPv4 address, or every IPv4 one on a host without IPv6)"},
        {"port",
         OptionType::integer,
         "0",
         "port the responder listens on; 0 = any free port (sent to the initiator)",
         {},
         0,
         65535},
        {"peer_address", OptionType::string, "",
         "address the initiator connects to; unset = the responder's address on the control "
         "connection (set it to run data over another network)"},
        {"bind_address", OptionType::string, "",
         "numeric IP address of this host the initiator's data connections leave from; unset = "
         "the kernel's choice (the control connection's: uniperf run --bind)"},
        {"nodelay", OptionType::boolean, "true", "TCP_NODELAY: send small messages at once"},
        // The kernel doubles a buffer size it is given, in an int.
        {"sndbuf",
         OptionType::size,
         "",
         "SO_SNDBUF in bytes; unset = kernel default",
         {},
         1,
         INT_MAX / 2},
        {"rcvbuf",
         OptionType::size,
         "",
         "SO_RCVBUF in bytes; unset = kernel default",
         {},
         1,
         INT_MAX / 2},
        {"busy_poll",
         OptionType::integer,
         "0",
         "SO_BUSY_POLL in microseconds; 0 = off (refused without CAP_NET_ADMIN: noted in device)",
         {},
         0,
         INT_MAX},
        // How much one receive call reads moves a loopback stream's
        // throughput: while the receiver copies, arriving segments wait in
        // the socket's backlog for it, off the sender's CPU
        // (docs/fidelity.md).
        {"staging",
         OptionType::size,
         std::to_string(kDefaultStagingBytes),
         "bytes one receive call reads into the staging buffer; messages of up to half of it "
         "are copied out of it, larger ones read in place (sockperf's server reads 64 KiB a "
         "call: 64K)",
         {},
         16,
         std::int64_t{64} << 20},
        // sockperf's and qperf's servers sleep inside recv; `recv` matches
        // them, one system call a wakeup instead of poll's two. A loopback
        // stream measured the same either way (docs/fidelity.md).
        {"wait",
         OptionType::string,
         "poll",
         "how a receiver sleeps in event mode (--events): 'poll' = in poll(2) until the socket "
         "is readable, then reads; 'recv' = inside a blocking recv(2) into the staging buffer, "
         "as sockperf's and qperf's servers read",
         {"poll", "recv"}},
    };
  }

  std::string probe() const override { return ""; }

  std::unique_ptr<Context> open(const Options& options) override {
    Settings settings;
    settings.listen_address = options.string("address");
    // Ranges were checked by the loader against options().
    settings.listen_port = static_cast<int>(options.integer("port"));
    settings.peer_address = options.string("peer_address");
    check_numeric_address(settings.listen_address, "address");
    settings.bind_address = options.string("bind_address");
    if (!settings.bind_address.empty())
      check_numeric_address(settings.bind_address, "bind_address");
    settings.nodelay = options.boolean("nodelay");
    settings.sndbuf = options.has("sndbuf") ? static_cast<int>(options.size("sndbuf")) : 0;
    settings.rcvbuf = options.has("rcvbuf") ? static_cast<int>(options.size("rcvbuf")) : 0;
    settings.busy_poll_us = static_cast<int>(options.integer("busy_poll"));
    settings.staging_bytes = static_cast<std::size_t>(options.size("staging"));
    settings.receive_wait =
        options.string("wait") == "recv" ? ReceiveWait::recv : ReceiveWait::poll;
    probe_socket_options(settings);
    return make_context(std::move(settings));
  }
};

}  // namespace
}  // namespace uniperf::tcp

UNIPERF_PLUGIN(uniperf::tcp::TcpPlugin)
