// The Context of the `tcp` plugin: socket options and the connection of
// one endpoint. The responder (rank 1) listens on `address`:`port` and sends
// the port it got over the peer channel; the initiator (rank 0) connects to
// that port on the responder's host as the control connection sees it
// (PeerChannel::peer_host), or on `peer_address` when the config sets one (a
// data network other than the control network).
#pragma once

#include <netdb.h>

#include <cstddef>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>

#include "tcp_endpoint.hpp"

namespace uniperf::tcp {

struct Settings {
  std::string listen_address;
  int listen_port = 0;
  std::string peer_address;
  std::string bind_address;  // "": the kernel chooses the initiator's source address
  bool nodelay = true;
  int sndbuf = 0;  // 0: the kernel's default
  int rcvbuf = 0;
  int busy_poll_us = 0;        // 0: off, or refused at open()
  std::string busy_poll_note;  // why busy_poll is off although asked for
  int effective_sndbuf = 0;    // what the kernel granted, for device()
  int effective_rcvbuf = 0;
  std::size_t staging_bytes = kDefaultStagingBytes;  // bytes one receive call reads
  ReceiveWait receive_wait = ReceiveWait::poll;      // how an event-driven receiver sleeps
};

/// getaddrinfo's list, freed with its owner.
using AddressList = support::Handle<addrinfo*, &freeaddrinfo>;

/// getaddrinfo into `found`; returns getaddrinfo's code (0: found).
int resolve(const std::string& host, const char* service, const addrinfo& hints,
            AddressList& found);

/// Tries the socket options on a scratch socket, so device() can say what
/// the kernel granted and a refused busy_poll is noted instead of failing
/// every connect. Throws Unavailable when there are no TCP sockets.
void probe_socket_options(Settings& settings);

std::unique_ptr<Context> make_context(Settings settings);

}  // namespace uniperf::tcp
