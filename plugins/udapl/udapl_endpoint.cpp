#include "udapl_endpoint.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace uniperf::udapl {
namespace {

/// The connection EVD is looked at once per this many empty polls: cheap
/// enough to leave out of the busy path, often enough to notice a dead
/// peer within milliseconds.
constexpr std::uint32_t kConnectionCheckEvery = 4096;

/// A receive's DTO cookie carries this bit. The DTO EVD is shared by sends
/// and receives, and libdaplofa leaves the event's `operation` field unset
/// (seen on rxe: garbage), so the cookie is what tells a receive from a send.
/// The engine's ids are counters and never reach bit 63.
constexpr std::uint64_t kRecvCookie = 1ULL << 63;

/// Completion::status for an event the DTO EVD should never carry.
constexpr std::int32_t kUnexpectedEvent = -1;

DAT_TIMEOUT to_dat_timeout(std::chrono::microseconds us) {
  const auto limit = static_cast<std::int64_t>(DAT_TIMEOUT_INFINITE) - 1;
  return static_cast<DAT_TIMEOUT>(std::clamp<std::int64_t>(us.count(), 0, limit));
}

std::string event_name(DAT_EVENT_NUMBER number) {
  switch (number) {
    case DAT_CONNECTION_EVENT_ESTABLISHED:
      return "established";
    case DAT_CONNECTION_EVENT_PEER_REJECTED:
      return "rejected by the peer";
    case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
      return "rejected (no listener at that address and conn_qual?)";
    case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
      return "accept failed";
    case DAT_CONNECTION_EVENT_DISCONNECTED:
      return "disconnected";
    case DAT_CONNECTION_EVENT_BROKEN:
      return "connection broken";
    case DAT_CONNECTION_EVENT_TIMED_OUT:
      return "timed out";
    case DAT_CONNECTION_EVENT_UNREACHABLE:
      return "peer unreachable";
    case DAT_CONNECTION_REQUEST_EVENT:
      return "connection request";
    default: {
      char text[32];
      std::snprintf(text, sizeof(text), "event 0x%x", static_cast<unsigned>(number));
      return text;
    }
  }
}

std::size_t sockaddr_length(const sockaddr* address) {
  if (address == nullptr) return 0;
  if (address->sa_family == AF_INET) return sizeof(sockaddr_in);
  if (address->sa_family == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

bool parse_ip(const std::string& text, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof(out));
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    return true;
  }
  return false;
}

bool is_unspecified(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == htonl(INADDR_ANY);
  }
  if (a.ss_family == AF_INET6) {
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
  }
  return true;
}

std::string ip_text(const sockaddr_storage& a) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, text, sizeof(text));
  } else if (a.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, text, sizeof(text));
  }
  return text;
}

/// What the responder tells the initiator: where its PSP listens.
struct ServicePoint {
  std::uint64_t conn_qual = 0;
  sockaddr_storage address{};  // the responder's IA address; family 0 when it has none
};

}  // namespace

DatEndpoint::DatEndpoint(DatContext& context, const EndpointParams& params, PeerChannel& channel)
    : context_(context), index_(params.index) {
  const DAT_IA_ATTR& ia = context.ia_attr();
  const auto& settings = context.settings();
  dto_qlen_ = settings.evd_qlen > 0
                  ? settings.evd_qlen
                  : static_cast<DAT_COUNT>(params.send_depth + params.recv_depth + 16);
  if (ia.max_evd_qlen > 0) dto_qlen_ = std::min(dto_qlen_, ia.max_evd_qlen);
  try {
    // Both sides learn whether the other could create its endpoint (and the
    // responder its PSP) before either waits for a connection: a failure
    // ends both at once, with its reason and its kind (plugin_support).
    const Bytes peer = support::exchange_step(channel, "udapl", [&] {
      check(dat_evd_create(context.ia(), dto_qlen_, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto_evd_),
            "dat_evd_create(DTO, " + std::to_string(dto_qlen_) + ")");
      check(dat_evd_create(context.ia(), 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn_evd_),
            "dat_evd_create(connection)");

      DAT_EP_ATTR attr{};
      attr.service_type = DAT_SERVICE_TYPE_RC;
      attr.max_message_size = ia.max_message_size;
      attr.max_rdma_size = ia.max_rdma_size;
      attr.qos = DAT_QOS_BEST_EFFORT;
      attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
      attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
      attr.max_recv_dtos = static_cast<DAT_COUNT>(std::max<std::uint32_t>(params.recv_depth, 1));
      attr.max_request_dtos = static_cast<DAT_COUNT>(std::max<std::uint32_t>(params.send_depth, 1));
      attr.max_recv_iov = 1;
      attr.max_request_iov = 1;
      // Reads and atomics in flight: the engine's window, within what the IA allows.
      const DAT_COUNT reads =
          static_cast<DAT_COUNT>(std::min<std::uint32_t>(params.send_depth, 16));
      attr.max_rdma_read_in = std::max(1, std::min(reads, ia.max_rdma_read_per_ep_in));
      attr.max_rdma_read_out = std::max(1, std::min(reads, ia.max_rdma_read_per_ep_out));
      attr.max_rdma_read_iov = 1;
      attr.max_rdma_write_iov = 1;
      check(dat_ep_create(context.ia(), context.pz(), dto_evd_, dto_evd_, conn_evd_, &attr, &ep_),
            "dat_ep_create");
      return channel.rank() == 1 ? listen() : Bytes{};
    });
    if (channel.rank() == 1) {
      accept(channel);
    } else {
      connect_to(channel, peer);
    }
    connected_ = true;
  } catch (...) {
    release();
    throw;
  }
}

DatEndpoint::~DatEndpoint() {
  release();
}

void DatEndpoint::release() {
  if (ep_ != DAT_HANDLE_NULL) {
    if (connected_) dat_ep_disconnect(ep_, DAT_CLOSE_ABRUPT_FLAG);
    dat_ep_free(ep_);
    ep_ = DAT_HANDLE_NULL;
  }
  if (psp_ != DAT_HANDLE_NULL) dat_psp_free(psp_);
  psp_ = DAT_HANDLE_NULL;
  for (DAT_EVD_HANDLE* evd : {&cr_evd_, &conn_evd_, &dto_evd_}) {
    if (*evd != DAT_HANDLE_NULL) dat_evd_free(*evd);
    *evd = DAT_HANDLE_NULL;
  }
}

DAT_EVENT DatEndpoint::expect_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER wanted, const char* what,
                                    const PeerChannel& channel) {
  DAT_EVENT event{};
  DAT_COUNT more = 0;
  // In slices, asking between them whether the engine gave up on the test
  // (its peer gone): the provider need not report a dead peer's connection.
  const auto deadline = std::chrono::steady_clock::now() + kConnectTimeout;
  DAT_RETURN rc = DAT_SUCCESS;
  while (true) {
    rc = dat_evd_wait(evd, to_dat_timeout(kConnectSlice), 1, &event, &more);
    if (DAT_GET_TYPE(rc) != DAT_TIMEOUT_EXPIRED) break;
    if (channel.cancelled()) {
      throw TransportError("udapl: stopped waiting for the " + std::string(what) +
                           ": the test was given up (its peer is gone, or the run interrupted)");
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  if (DAT_GET_TYPE(rc) == DAT_TIMEOUT_EXPIRED) {
    throw TransportError("udapl: no " + std::string(what) + " within " +
                         std::to_string(kConnectTimeout.count()) + " s (peer gone or unreachable)");
  }
  check(rc, std::string("dat_evd_wait for ") + what);
  if (event.event_number != wanted) {
    throw TransportError("udapl: waiting for " + std::string(what) + ": " +
                         event_name(event.event_number));
  }
  return event;
}

Bytes DatEndpoint::listen() {
  const auto& settings = context_.settings();
  check(dat_evd_create(context_.ia(), 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd_),
        "dat_evd_create(CR)");
  ServicePoint mine;
  if (settings.port > 0) {
    mine.conn_qual = static_cast<DAT_CONN_QUAL>(settings.port) + index_;
    check(dat_psp_create(context_.ia(), mine.conn_qual, cr_evd_, DAT_PSP_CONSUMER_FLAG, &psp_),
          "dat_psp_create(conn_qual " + std::to_string(mine.conn_qual) + ")");
  } else {
    DAT_CONN_QUAL any = 0;
    check(dat_psp_create_any(context_.ia(), &any, cr_evd_, DAT_PSP_CONSUMER_FLAG, &psp_),
          "dat_psp_create_any");
    mine.conn_qual = any;
  }
  const auto* ia_address = reinterpret_cast<const sockaddr*>(context_.ia_attr().ia_address_ptr);
  if (const std::size_t n = sockaddr_length(ia_address); n > 0) {
    std::memcpy(&mine.address, ia_address, n);
  }
  // The PSP exists before the initiator learns its conn_qual.
  return support::to_blob(mine);
}

void DatEndpoint::accept(const PeerChannel& channel) {
  const DAT_EVENT request =
      expect_event(cr_evd_, DAT_CONNECTION_REQUEST_EVENT, "connection request", channel);
  const DAT_CR_HANDLE cr = request.event_data.cr_arrival_event_data.cr_handle;
  check(dat_cr_accept(cr, ep_, 0, nullptr), "dat_cr_accept");
  expect_event(conn_evd_, DAT_CONNECTION_EVENT_ESTABLISHED, "established connection", channel);
  dat_psp_free(psp_);
  psp_ = DAT_HANDLE_NULL;
}

void DatEndpoint::connect_to(PeerChannel& channel, const Bytes& blob) {
  const auto& settings = context_.settings();
  const auto peer = support::from_blob<ServicePoint>(blob, "udapl", "service point");

  sockaddr_storage target{};
  std::string source;
  if (!settings.peer_address.empty()) {
    if (!parse_ip(settings.peer_address, target)) {
      throw OptionError("udapl: option 'peer_address' is not a numeric IP: " +
                        settings.peer_address);
    }
    source = "peer_address";
  } else if (!is_unspecified(peer.address)) {
    target = peer.address;
    source = "the responder's IA address";
  } else if (parse_ip(channel.peer_host(), target)) {
    source = "the control connection's peer";
  } else {
    throw TransportError(
        "udapl: no address to connect to: set peer_address (the responder's IA reports none)");
  }
  const DAT_RETURN rc = dat_ep_connect(ep_, reinterpret_cast<DAT_IA_ADDRESS_PTR>(&target),
                                       peer.conn_qual, to_dat_timeout(kConnectTimeout), 0, nullptr,
                                       DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG);
  const std::string where =
      ip_text(target) + " conn_qual " + std::to_string(peer.conn_qual) + " (" + source + ")";
  check(rc, "dat_ep_connect to " + where);
  try {
    expect_event(conn_evd_, DAT_CONNECTION_EVENT_ESTABLISHED, "established connection", channel);
  } catch (const TransportError& e) {
    throw TransportError(std::string(e.what()) + " to " + where);
  }
}

std::unique_ptr<RemoteRegion> DatEndpoint::import_region(std::uint64_t address,
                                                         std::uint64_t length,
                                                         std::span<const std::byte> key) {
  const auto context = support::from_blob<DAT_RMR_CONTEXT>(key, "udapl", "remote key");
  return std::make_unique<DatRemote>(address, length, context);
}

void DatEndpoint::post(const WorkRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) post_one(requests[i]);
}

void DatEndpoint::post_one(const WorkRequest& wr) {
  const auto* local = static_cast<const DatMemory*>(wr.local);
  DAT_LMR_TRIPLET iov{local->at(wr.local_offset), wr.length, local->lmr_context()};
  DAT_DTO_COOKIE cookie;
  cookie.as_64 = wr.id;
  auto flags = static_cast<DAT_COMPLETION_FLAGS>((wr.flags & WorkRequest::kSignaled) != 0
                                                     ? DAT_COMPLETION_DEFAULT_FLAG
                                                     : DAT_COMPLETION_SUPPRESS_FLAG);
  if ((wr.flags & WorkRequest::kFence) != 0) {
    flags = static_cast<DAT_COMPLETION_FLAGS>(flags | DAT_COMPLETION_BARRIER_FENCE_FLAG);
  }
  DAT_RMR_TRIPLET target{};
  if (wr.remote != nullptr) {
    const auto* remote = static_cast<const DatRemote*>(wr.remote);
    target = {remote->address() + wr.remote_offset, wr.length, remote->context()};
  }
  DAT_RETURN rc = DAT_SUCCESS;
  switch (wr.op) {
    case Op::send:
      rc = dat_ep_post_send(ep_, 1, &iov, cookie, flags);
      break;
    case Op::write:
      rc = dat_ep_post_rdma_write(ep_, 1, &iov, cookie, &target, flags);
      break;
    case Op::read:
      rc = dat_ep_post_rdma_read(ep_, 1, &iov, cookie, &target, flags);
      break;
    case Op::write_imm:
      rc = dat_ib_post_rdma_write_immed(ep_, 1, &iov, cookie, &target, wr.immediate, flags);
      break;
    case Op::fetch_add:
      rc = dat_ib_post_fetch_and_add(ep_, wr.compare_add, &iov, cookie, &target, flags);
      break;
    case Op::cswap:
      rc = dat_ib_post_cmp_and_swap(ep_, wr.compare_add, wr.swap, &iov, cookie, &target, flags);
      break;
  }
  if (rc != DAT_SUCCESS) post_failed(wr, rc);
}

void DatEndpoint::post_failed(const WorkRequest& wr, DAT_RETURN rc) {
  throw TransportError(dat_error("posting " + std::string(to_string(wr.op)), rc));
}

void DatEndpoint::post_recv(const RecvRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const RecvRequest& r = requests[i];
    const auto* local = static_cast<const DatMemory*>(r.local);
    DAT_LMR_TRIPLET iov{local->at(r.offset), r.length, local->lmr_context()};
    DAT_DTO_COOKIE cookie;
    cookie.as_64 = r.id | kRecvCookie;
    const DAT_RETURN rc = dat_ep_post_recv(ep_, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
    if (rc != DAT_SUCCESS) throw TransportError(dat_error("dat_ep_post_recv", rc));
  }
}

std::size_t DatEndpoint::poll(Completion* out, std::size_t max) {
  std::size_t n = 0;
  DAT_EVENT event;
  while (n < max) {
    if (has_pending_) {
      event = pending_;
      has_pending_ = false;
    } else if (dat_evd_dequeue(dto_evd_, &event) != DAT_SUCCESS) {
      break;  // DAT_QUEUE_EMPTY
    }
    const DAT_DTO_COMPLETION_EVENT_DATA& dto = event.event_data.dto_completion_event_data;
    Completion& c = out[n++];
    c.id = dto.user_cookie.as_64 & ~kRecvCookie;
    c.status = static_cast<std::int32_t>(dto.status);
    c.length = static_cast<std::uint32_t>(dto.transfered_length);
    c.immediate = 0;
    c.type =
        (dto.user_cookie.as_64 & kRecvCookie) != 0 ? CompletionType::recv : CompletionType::send;
    if (event.event_number == static_cast<DAT_EVENT_NUMBER>(DAT_IB_DTO_EVENT)) {
      // Extended DTOs: atomics and write_imm complete here; a write_imm's
      // receive brings its immediate data.
      DAT_IB_EXTENSION_EVENT_DATA extension;
      std::memcpy(&extension, event.event_extension_data, sizeof(extension));
      if (extension.type == DAT_IB_RDMA_WRITE_IMMED_DATA) {
        // The write's bytes went to the RDMA target, none into the receive
        // buffer (DAPL reports the write's length here).
        c.length = 0;
        c.immediate = extension.val.immed.data;
      } else if (extension.type == DAT_IB_RECV_IMMED_DATA) {
        c.immediate = extension.val.immed.data;
      }
    } else if (event.event_number != DAT_DTO_COMPLETION_EVENT) {
      c.status = kUnexpectedEvent;
    }
  }
  if (n == 0 && ++idle_polls_ >= kConnectionCheckEvery) {
    idle_polls_ = 0;
    check_connection();
  }
  return n;
}

void DatEndpoint::check_connection() {
  DAT_EVENT event;
  if (dat_evd_dequeue(conn_evd_, &event) != DAT_SUCCESS) return;
  if (event.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
      event.event_number == DAT_CONNECTION_EVENT_BROKEN) {
    throw TransportError("udapl: the peer's connection ended: " + event_name(event.event_number));
  }
}

bool DatEndpoint::wait(std::chrono::milliseconds timeout, std::uint32_t threshold) {
  if (has_pending_) return true;
  // DAT wakes the waiter once `threshold` events are queued: the engine's
  // cq_moderation, within the EVD's length.
  const auto wanted = static_cast<DAT_COUNT>(
      std::clamp<std::uint32_t>(threshold, 1, static_cast<std::uint32_t>(dto_qlen_)));
  DAT_COUNT more = 0;
  const DAT_RETURN rc = dat_evd_wait(dto_evd_, to_dat_timeout(timeout), wanted, &pending_, &more);
  has_pending_ = rc == DAT_SUCCESS;
  return has_pending_;
}

std::string DatEndpoint::describe(std::int32_t status) const {
  static const char* const names[] = {"success",
                                      "flushed",
                                      "local length error",
                                      "local endpoint error",
                                      "local protection",
                                      "bad response",
                                      "remote access error",
                                      "remote responder error",
                                      "transport error",
                                      "receiver not ready",
                                      "partial packet",
                                      "RMR operation failed",
                                      "local memory error"};
  if (status == kUnexpectedEvent) return "udapl: an unexpected event on the DTO EVD";
  if (status >= 0 && static_cast<std::size_t>(status) < std::size(names)) {
    return std::string("udapl: DTO ") + names[status];
  }
  return "udapl: DTO status " + std::to_string(status);
}

}  // namespace uniperf::udapl
