// `connect: rdma_cm`: the rdma_cm handshake connects the endpoint's own RC
// queue pair. The QP is created on the plugin's device context like every
// other (not with rdma_create_qp, which needs librdmacm's own context), so
// the handshake runs without a QP attached to the identifier: each side
// moves its QP through INIT, RTR and RTS with the attributes
// rdma_init_qp_attr returns, overridden by the config's settings, and the
// initiator completes the handshake with rdma_establish.
//
// Only the responder's IP address and port go through the PeerChannel.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>

#include "verbs_endpoint.hpp"

namespace uniperf::verbs {

class CmConnection {
 public:
  CmConnection() {
    channel = rdma_create_event_channel();
    if (channel == nullptr) {
      throw TransportError(verbs_error("cannot create an rdma_cm event channel", errno));
    }
    // next_event() polls the descriptor with a deadline, then reads.
    const int flags = fcntl(channel->fd, F_GETFL);
    if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      throw TransportError(verbs_error("cannot make the rdma_cm channel non-blocking", errno));
    }
  }
  ~CmConnection() {
    // Every event was acknowledged as it was read, so destroying the
    // identifiers does not block.
    if (id != nullptr) rdma_destroy_id(id);
    if (listener != nullptr) rdma_destroy_id(listener);
    rdma_destroy_event_channel(channel);
  }
  CmConnection(const CmConnection&) = delete;
  CmConnection& operator=(const CmConnection&) = delete;

  rdma_event_channel* channel = nullptr;
  rdma_cm_id* listener = nullptr;  // responder: the listening identifier
  rdma_cm_id* id = nullptr;        // the connection's identifier
};

void CmConnectionDelete::operator()(CmConnection* connection) const noexcept {
  delete connection;
}

namespace {

using Clock = std::chrono::steady_clock;

/// One rdma_cm event, acknowledged when this goes out of scope.
struct Event {
  rdma_cm_event* event = nullptr;
  ~Event() {
    if (event != nullptr) rdma_ack_cm_event(event);
  }
};

/// Waits for the next event until `deadline`; throws unless it is `wanted`.
void expect(CmConnection& cm, rdma_cm_event_type wanted, Event& out, Clock::time_point deadline) {
  for (;;) {
    if (rdma_get_cm_event(cm.channel, &out.event) == 0) break;
    if (errno != EAGAIN) {
      throw TransportError(verbs_error("rdma_get_cm_event failed", errno));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd descriptor{cm.channel->fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&descriptor, 1, static_cast<int>(left.count())) == 0) {
      throw TransportError(std::string("verbs: rdma_cm: no ") + rdma_event_str(wanted) +
                           " within " + std::to_string(kConnectTimeout.count()) + " s");
    }
  }
  if (out.event->event != wanted) {
    throw TransportError(std::string("verbs: rdma_cm: expected ") + rdma_event_str(wanted) +
                         ", got " + rdma_event_str(out.event->event) + " (status " +
                         std::to_string(out.event->status) + ")");
  }
}

sockaddr_in ipv4(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    throw TransportError("verbs: rdma_cm: '" + host + "' is not a numeric IPv4 address");
  }
  return address;
}

void check_device(const rdma_cm_id* id, const std::string& ours, const std::string& where) {
  if (id->verbs == nullptr) return;  // bound to no device yet (a wildcard listener)
  const std::string theirs = ibv_get_device_name(id->verbs->device);
  if (theirs != ours) {
    throw TransportError("verbs: rdma_cm: " + where + " belongs to device " + theirs +
                         ", not the configured " + ours);
  }
}

}  // namespace

void VerbsEndpoint::connect_rdma_cm(PeerChannel& channel) {
  const std::string& device = context_.device_name();
  const auto deadline = Clock::now() + kConnectTimeout;
  std::exception_ptr failure;

  // Each side moves its QP into `state` with what the CM proposes, adjusted
  // by the config (access flags, MTU, timers, reads in flight).
  auto transition = [&](ibv_qp_state state, std::uint32_t peer_responder_resources) {
    ibv_qp_attr attr{};
    attr.qp_state = state;
    int mask = 0;
    if (rdma_init_qp_attr(cm_->id, &attr, &mask) != 0) {
      throw TransportError(
          verbs_error(std::string("rdma_init_qp_attr for ") + state_name(state), errno));
    }
    apply_settings(attr, mask);
    if (state == IBV_QPS_RTS) {
      attr.max_rd_atomic = static_cast<std::uint8_t>(
          std::min({context_.initiator_depth(), peer_responder_resources, 255u}));
      mask |= IBV_QP_MAX_QP_RD_ATOMIC;
    }
    modify(attr, mask, state_name(state));
  };
  rdma_conn_param param{};
  param.responder_resources =
      static_cast<std::uint8_t>(std::min(context_.responder_resources(), 255u));
  param.initiator_depth = static_cast<std::uint8_t>(std::min(context_.initiator_depth(), 255u));
  param.retry_count = static_cast<std::uint8_t>(settings_.retry_cnt);
  param.rnr_retry_count = static_cast<std::uint8_t>(settings_.rnr_retry);
  param.flow_control = 1;
  param.qp_num = qp_->qp_num;

  if (channel.rank() == 1) {
    // Responder: listen where the initiator can reach this device, tell it
    // where, accept its request.
    std::string host;
    int port = 0;
    try {
      cm_.reset(new CmConnection);
      host = !settings_.cm_address.empty() ? settings_.cm_address : context_.gid_ipv4();
      const int wanted_port =
          settings_.cm_port > 0 ? settings_.cm_port + static_cast<int>(index_) : 0;
      sockaddr_in address = ipv4(host.empty() ? "0.0.0.0" : host, wanted_port);
      if (rdma_create_id(cm_->channel, &cm_->listener, nullptr, RDMA_PS_TCP) != 0) {
        throw TransportError(verbs_error("rdma_create_id failed", errno));
      }
      if (rdma_bind_addr(cm_->listener, reinterpret_cast<sockaddr*>(&address)) != 0) {
        throw TransportError(verbs_error("rdma_bind_addr " + (host.empty() ? "0.0.0.0" : host) +
                                             ":" + std::to_string(wanted_port),
                                         errno));
      }
      check_device(cm_->listener, device, "address " + host);
      if (rdma_listen(cm_->listener, 1) != 0) {
        throw TransportError(verbs_error("rdma_listen failed", errno));
      }
      port = ntohs(rdma_get_src_port(cm_->listener));
    } catch (...) {
      failure = std::current_exception();
    }
    const Bytes reply = channel.exchange(
        failure ? support::encode_failure(failure)
                : support::encode_outcome(support::Outcome::ok,
                                          support::to_bytes(host + " " + std::to_string(port))));
    if (failure) std::rethrow_exception(failure);
    support::payload_or_throw(reply, "verbs");
    try {
      std::uint32_t peer_responder_resources = 0;
      {
        Event request;
        expect(*cm_, RDMA_CM_EVENT_CONNECT_REQUEST, request, deadline);
        cm_->id = request.event->id;
        peer_responder_resources = request.event->param.conn.responder_resources;
        // Answer no more reads than the initiator will issue.
        param.responder_resources =
            std::min(param.responder_resources, request.event->param.conn.initiator_depth);
      }
      try {
        check_device(cm_->id, device, "the connection request");
        transition(IBV_QPS_INIT, peer_responder_resources);
        transition(IBV_QPS_RTR, peer_responder_resources);
        transition(IBV_QPS_RTS, peer_responder_resources);
        if (rdma_accept(cm_->id, &param) != 0) {
          throw TransportError(verbs_error("rdma_accept failed", errno));
        }
      } catch (...) {
        rdma_reject(cm_->id, nullptr, 0);  // the initiator hears it at once
        throw;
      }
      Event established;
      expect(*cm_, RDMA_CM_EVENT_ESTABLISHED, established, deadline);
    } catch (...) {
      failure = std::current_exception();
    }
  } else {
    const Bytes reply = channel.exchange(support::encode_outcome(support::Outcome::ok, {}));
    const std::string where = support::to_text(support::payload_or_throw(reply, "verbs"));
    try {
      cm_.reset(new CmConnection);
      const auto space = where.find(' ');
      std::string host = where.substr(0, space);
      const int port =
          std::atoi(where.c_str() + (space == std::string::npos ? where.size() : space + 1));
      if (host.empty()) host = channel.peer_host();
      if (host.empty()) {
        throw TransportError(
            "verbs: rdma_cm: the responder's GID has no IPv4 address and the control connection "
            "does not tell it either; set cm_address in the responder's config");
      }
      sockaddr_in target = ipv4(host, port);
      if (rdma_create_id(cm_->channel, &cm_->id, nullptr, RDMA_PS_TCP) != 0) {
        throw TransportError(verbs_error("rdma_create_id failed", errno));
      }
      const int resolve_ms = 5000;
      if (rdma_resolve_addr(cm_->id, nullptr, reinterpret_cast<sockaddr*>(&target), resolve_ms) !=
          0) {
        throw TransportError(verbs_error("rdma_resolve_addr " + host, errno));
      }
      {
        Event resolved;
        expect(*cm_, RDMA_CM_EVENT_ADDR_RESOLVED, resolved, deadline);
      }
      check_device(cm_->id, device, "the route to " + host);
      if (rdma_resolve_route(cm_->id, resolve_ms) != 0) {
        throw TransportError(verbs_error("rdma_resolve_route to " + host, errno));
      }
      {
        Event routed;
        expect(*cm_, RDMA_CM_EVENT_ROUTE_RESOLVED, routed, deadline);
      }
      transition(IBV_QPS_INIT, 0);
      if (rdma_connect(cm_->id, &param) != 0) {
        throw TransportError(
            verbs_error("rdma_connect to " + host + ":" + std::to_string(port), errno));
      }
      std::uint32_t peer_responder_resources = 0;
      {
        // Without a QP on the identifier the CM hands the response to us
        // instead of moving a QP to RTS and sending the RTU itself.
        Event response;
        expect(*cm_, RDMA_CM_EVENT_CONNECT_RESPONSE, response, deadline);
        peer_responder_resources = response.event->param.conn.responder_resources;
      }
      transition(IBV_QPS_RTR, peer_responder_resources);
      transition(IBV_QPS_RTS, peer_responder_resources);
      if (rdma_establish(cm_->id) != 0) {
        throw TransportError(verbs_error("rdma_establish failed", errno));
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  support::exchange_outcome(channel, "verbs", failure);
}

}  // namespace uniperf::verbs
