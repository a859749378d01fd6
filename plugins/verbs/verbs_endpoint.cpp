#include "verbs_endpoint.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <bit>
#include <random>

namespace uniperf::verbs {
namespace {

/// Events are acknowledged in batches: ibv_ack_cq_events takes a lock, and
/// only ibv_destroy_cq needs the count to be complete.
constexpr std::uint32_t kAckBatch = 64;
/// CQ moderation (where the device has it): an event after `threshold`
/// completions, or after this long with fewer, so the last completions of
/// a burst do not wait for the engine's 100 ms wait() timeout.
constexpr std::uint32_t kModerationPeriodUs = 100;

/// IBV_WR_* for each Op, indexed by static_cast<size_t>(op).
constexpr ibv_wr_opcode kOpcodes[kOpCount] = {
    IBV_WR_SEND,      IBV_WR_RDMA_WRITE,           IBV_WR_RDMA_WRITE_WITH_IMM,
    IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP};

/// ibv send_flags for each combination of WorkRequest::Flags (3 bits), so a
/// post translates them with one load.
constexpr std::array<unsigned, 8> kSendFlags = [] {
  std::array<unsigned, 8> flags{};
  for (unsigned bits = 0; bits < flags.size(); ++bits) {
    flags[bits] = ((bits & WorkRequest::kSignaled) ? unsigned{IBV_SEND_SIGNALED} : 0u) |
                  ((bits & WorkRequest::kInline) ? unsigned{IBV_SEND_INLINE} : 0u) |
                  ((bits & WorkRequest::kFence) ? unsigned{IBV_SEND_FENCE} : 0u);
  }
  return flags;
}();

ibv_qp_type qp_type(QpKind kind) {
  return kind == QpKind::rc ? IBV_QPT_RC : kind == QpKind::uc ? IBV_QPT_UC : IBV_QPT_UD;
}

}  // namespace

#if !UNIPERF_VERBS_RDMA_CM
// Built without librdmacm: no connection ever holds rdma_cm identifiers.
void CmConnectionDelete::operator()(CmConnection* /*connection*/) const noexcept {}
void VerbsEndpoint::connect_rdma_cm(PeerChannel& /*channel*/) {
  throw Unsupported("verbs: connect: rdma_cm needs librdmacm, which this build lacks");
}
#endif

VerbsEndpoint::VerbsEndpoint(VerbsContext& context, const EndpointParams& params,
                             PeerChannel& channel)
    : context_(context), settings_(context.settings()), index_(params.index) {
  std::exception_ptr failure;
  try {
    create_queues(params);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // The peer is about to wait for our address: tell it why none comes,
    // so both sides end with the same reason (and the same skip or error).
    channel.exchange(support::encode_failure(failure));
    std::rethrow_exception(failure);
  }
  if (settings_.connect == ConnectMethod::rdma_cm) {
    connect_rdma_cm(channel);
  } else {
    connect_bootstrap(channel);
  }
}

VerbsEndpoint::~VerbsEndpoint() {
  // ibv_destroy_cq waits until every event read from the channel is acknowledged.
  if (unacked_events_ != 0) ibv_ack_cq_events(cq_.get(), unacked_events_);
}

void VerbsEndpoint::create_queues(const EndpointParams& params) {
  const ibv_device_attr& device = context_.device_attr().orig_attr;
  const std::string& name = context_.device_name();
  const std::uint32_t send_depth = std::max(params.send_depth, 1u);
  const std::uint32_t recv_depth = std::max(params.recv_depth, 1u);
  const bool ud = settings_.kind == QpKind::ud;
  if (send_depth > static_cast<std::uint32_t>(device.max_qp_wr) ||
      recv_depth >
          static_cast<std::uint32_t>(settings_.srq ? device.max_srq_wr : device.max_qp_wr)) {
    throw Unsupported("verbs: queue depths " + std::to_string(send_depth) + "/" +
                      std::to_string(recv_depth) + " exceed " + name + "'s limit of " +
                      std::to_string(settings_.srq ? device.max_srq_wr : device.max_qp_wr));
  }
  const std::uint32_t cq_entries = send_depth + recv_depth;
  if (cq_entries > static_cast<std::uint32_t>(device.max_cqe)) {
    throw Unsupported("verbs: a completion queue of " + std::to_string(cq_entries) +
                      " entries exceeds " + name + "'s max_cqe " + std::to_string(device.max_cqe));
  }

  if (params.completion_events) {
    channel_.reset(ibv_create_comp_channel(context_.verbs()));
    if (!channel_) throw TransportError(verbs_error("cannot create a completion channel", errno));
    // wait() polls the descriptor itself and then reads every event there
    // is without blocking.
    const int flags = fcntl(channel_->fd, F_GETFL);
    if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      throw TransportError(verbs_error("cannot make the completion channel non-blocking", errno));
    }
  }
  cq_.reset(
      ibv_create_cq(context_.verbs(), static_cast<int>(cq_entries), nullptr, channel_.get(), 0));
  if (!cq_) throw TransportError(verbs_error("cannot create a completion queue", errno));
  moderation_works_ = context_.max_cq_moderation() > 0;

  recv_sge_count_ = ud ? 2 : 1;
  if (settings_.srq) {
    ibv_srq_init_attr attr{};
    attr.attr.max_wr = recv_depth;
    attr.attr.max_sge = recv_sge_count_;
    srq_.reset(ibv_create_srq(context_.pd(), &attr));
    if (!srq_) throw TransportError(verbs_error("cannot create a shared receive queue", errno));
  }
  if (ud) {
    grh_.resize(kGrhBytes);
    grh_mr_.reset(ibv_reg_mr(context_.pd(), grh_.data(), grh_.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!grh_mr_) throw TransportError(verbs_error("cannot register the GRH buffer", errno));
    grh_bytes_ = kGrhBytes;
  }

  ibv_qp_init_attr attr{};
  attr.send_cq = attr.recv_cq = cq_.get();
  attr.srq = srq_.get();
  attr.qp_type = qp_type(settings_.kind);
  attr.sq_sig_all = 0;  // only IBV_SEND_SIGNALED requests complete
  attr.cap.max_send_wr = send_depth;
  attr.cap.max_recv_wr = settings_.srq ? 0 : recv_depth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = recv_sge_count_;
  attr.cap.max_inline_data = context_.inline_request();
  qp_.reset(ibv_create_qp(context_.pd(), &attr));
  if (!qp_) {
    throw TransportError(verbs_error("cannot create a " + std::string(to_string(settings_.kind)) +
                                         " queue pair (send " + std::to_string(send_depth) +
                                         ", receive " + std::to_string(recv_depth) + ")",
                                     errno));
  }
  if (attr.cap.max_inline_data < params.max_inline) {
    throw Unsupported("verbs: the queue pair offers " + std::to_string(attr.cap.max_inline_data) +
                      " inline bytes, the test asks " + std::to_string(params.max_inline));
  }
  psn_ = std::random_device{}() & 0xffffff;

  // The hot path's request chains: built once, rewritten in place.
  send_wrs_.assign(send_depth, ibv_send_wr{});
  send_sges_.assign(send_depth, ibv_sge{});
  for (std::size_t i = 0; i < send_wrs_.size(); ++i) {
    send_wrs_[i].sg_list = &send_sges_[i];
    send_wrs_[i].num_sge = 1;
  }
  recv_wrs_.assign(recv_depth, ibv_recv_wr{});
  recv_sges_.assign(std::size_t{recv_depth} * recv_sge_count_, ibv_sge{});
  for (std::size_t i = 0; i < recv_wrs_.size(); ++i) {
    recv_wrs_[i].sg_list = &recv_sges_[i * recv_sge_count_];
    recv_wrs_[i].num_sge = static_cast<int>(recv_sge_count_);
    if (ud) {
      recv_wrs_[i].sg_list[0] =
          ibv_sge{reinterpret_cast<std::uint64_t>(grh_.data()), kGrhBytes, grh_mr_->lkey};
    }
  }
  const std::size_t ops = std::bit_ceil<std::size_t>(send_depth);
  sent_ops_.assign(ops, Op::send);
  sent_mask_ = ops - 1;
}

QpAddress VerbsEndpoint::local_address() const {
  QpAddress a;
  a.qpn = qp_->qp_num;
  a.psn = psn_;
  a.lid = context_.port_attr().lid;
  a.kind = static_cast<std::uint8_t>(settings_.kind);
  a.mtu = static_cast<std::uint8_t>(context_.path_mtu());
  a.gid_index = context_.gid_index();
  a.responder_resources = settings_.kind == QpKind::rc ? context_.responder_resources() : 0;
  a.gid = context_.gid();
  return a;
}

void VerbsEndpoint::connect_bootstrap(PeerChannel& channel) {
  std::exception_ptr failure;
  QpAddress mine;
  try {
    to_init();
    mine = local_address();
  } catch (...) {
    failure = std::current_exception();
  }
  const Bytes answer = channel.exchange(
      failure ? support::encode_failure(failure)
              : support::encode_outcome(support::Outcome::ok, support::to_blob(mine)));
  if (failure) std::rethrow_exception(failure);
  const auto peer = support::from_blob<QpAddress>(support::payload_or_throw(answer, "verbs"),
                                                  "verbs", "queue pair address");
  if (peer.kind != mine.kind) {
    failure = std::make_exception_ptr(
        TransportError(std::string("verbs: this side uses ") + to_string(settings_.kind) +
                       " queue pairs, the peer " + to_string(static_cast<QpKind>(peer.kind))));
  }
  if (!failure) {
    try {
      to_rtr(peer);
      to_rts(peer);
      if (settings_.kind == QpKind::ud) create_address_handle(route_to(peer), peer.qpn, kQkey);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Both sides learn whether the other got its QP ready, so a failure ends
  // both with its reason instead of leaving one to time out.
  support::exchange_outcome(channel, "verbs", failure);
}

void VerbsEndpoint::modify(ibv_qp_attr& attr, int mask, const char* state) {
  if (const int rc = ibv_modify_qp(qp_.get(), &attr, mask); rc != 0) {
    throw TransportError(verbs_error(
        "cannot move the " + std::string(to_string(settings_.kind)) + " queue pair to " + state,
        rc));
  }
}

void VerbsEndpoint::to_init() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<std::uint8_t>(settings_.port);
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (settings_.kind == QpKind::ud) {
    attr.qkey = kQkey;
    mask |= IBV_QP_QKEY;
  } else {
    apply_settings(attr, mask);  // the access flags
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  modify(attr, mask, "INIT");
}

ibv_ah_attr VerbsEndpoint::route_to(const QpAddress& peer) const {
  ibv_ah_attr route{};
  route.dlid = peer.lid;
  route.port_num = static_cast<std::uint8_t>(settings_.port);
  if (context_.gid_index() >= 0) {
    route.is_global = 1;
    route.grh.dgid = peer.gid;
    route.grh.sgid_index = static_cast<std::uint8_t>(context_.gid_index());
    route.grh.hop_limit = 64;
  }
  return route;
}

void VerbsEndpoint::to_rtr(const QpAddress& peer) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  int mask = IBV_QP_STATE;
  if (settings_.kind != QpKind::ud) {
    attr.path_mtu = std::min(context_.path_mtu(), static_cast<ibv_mtu>(peer.mtu));
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.ah_attr = route_to(peer);
    mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    apply_settings(attr, mask);
  }
  modify(attr, mask, "RTR");
}

void VerbsEndpoint::to_rts(const QpAddress& peer) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = psn_;
  int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (settings_.kind == QpKind::rc) {
    // Never more reads/atomics in flight than the peer accepts.
    attr.max_rd_atomic = static_cast<std::uint8_t>(
        std::min({context_.initiator_depth(), peer.responder_resources, 255u}));
    mask |= IBV_QP_MAX_QP_RD_ATOMIC;
  }
  apply_settings(attr, mask);
  modify(attr, mask, "RTS");
}

void VerbsEndpoint::apply_settings(ibv_qp_attr& attr, int& mask) const {
  const bool rc = settings_.kind == QpKind::rc;
  switch (attr.qp_state) {
    case IBV_QPS_INIT:
      attr.qp_access_flags =
          IBV_ACCESS_REMOTE_WRITE |
          (rc ? IBV_ACCESS_REMOTE_READ | (context_.access_flags() & IBV_ACCESS_REMOTE_ATOMIC) : 0);
      break;
    case IBV_QPS_RTR:
      if (settings_.mtu != 0) attr.path_mtu = std::min(attr.path_mtu, context_.path_mtu());
      if (rc) {
        attr.max_dest_rd_atomic =
            static_cast<std::uint8_t>(std::min(context_.responder_resources(), 255u));
        attr.min_rnr_timer = static_cast<std::uint8_t>(settings_.min_rnr_timer);
        mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
      }
      break;
    case IBV_QPS_RTS:
      if (rc) {
        attr.timeout = static_cast<std::uint8_t>(settings_.timeout);
        attr.retry_cnt = static_cast<std::uint8_t>(settings_.retry_cnt);
        attr.rnr_retry = static_cast<std::uint8_t>(settings_.rnr_retry);
        mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
      }
      break;
    default:
      break;
  }
}

void VerbsEndpoint::create_address_handle(const ibv_ah_attr& route, std::uint32_t qpn,
                                          std::uint32_t qkey) {
  ibv_ah_attr copy = route;
  ah_.reset(ibv_create_ah(context_.pd(), &copy));
  if (!ah_)
    throw TransportError(verbs_error("cannot create an address handle for the peer", errno));
  ud_route_.ud.ah = ah_.get();
  ud_route_.ud.remote_qpn = qpn;
  ud_route_.ud.remote_qkey = qkey;
}

std::unique_ptr<RemoteRegion> VerbsEndpoint::import_region(std::uint64_t address,
                                                           std::uint64_t length,
                                                           std::span<const std::byte> key) {
  std::uint32_t rkey = 0;
  if (key.size() != sizeof rkey) throw TransportError("verbs: the peer's memory key is malformed");
  std::memcpy(&rkey, key.data(), sizeof rkey);
  return std::make_unique<VerbsRemote>(address, length, rkey);
}

// ---------------------------------------------------------------------------
// Hot path
// ---------------------------------------------------------------------------

void VerbsEndpoint::post(const WorkRequest* requests, std::size_t count) {
  while (count != 0) {
    const std::size_t n = std::min(count, send_wrs_.size());
    for (std::size_t i = 0; i < n; ++i) {
      const WorkRequest& r = requests[i];
      ibv_send_wr& w = send_wrs_[i];
      const auto* local = static_cast<const VerbsMemory*>(r.local);
      send_sges_[i].addr = local->at(r.local_offset);
      send_sges_[i].length = r.length;
      send_sges_[i].lkey = local->lkey();
      w.wr_id = r.id;
      w.opcode = kOpcodes[static_cast<std::size_t>(r.op)];
      w.send_flags = kSendFlags[r.flags & 7u];
      w.next = i + 1 < n ? &send_wrs_[i + 1] : nullptr;
      sent_ops_[r.id & sent_mask_] = r.op;
      const auto* remote = static_cast<const VerbsRemote*>(r.remote);
      switch (r.op) {
        case Op::send:
          w.wr = ud_route_;  // UD's destination; RC and UC ignore it
          break;
        case Op::write_imm:
          w.imm_data = htonl(r.immediate);
          [[fallthrough]];
        case Op::write:
        case Op::read:
          w.wr.rdma.remote_addr = remote->at(r.remote_offset);
          w.wr.rdma.rkey = remote->rkey();
          break;
        case Op::fetch_add:
        case Op::cswap:
          w.wr.atomic.remote_addr = remote->at(r.remote_offset);
          w.wr.atomic.compare_add = r.compare_add;
          w.wr.atomic.swap = r.swap;
          w.wr.atomic.rkey = remote->rkey();
          break;
      }
    }
    ibv_send_wr* bad = nullptr;
    if (const int rc = ibv_post_send(qp_.get(), send_wrs_.data(), &bad); rc != 0) [[unlikely]] {
      post_failed(rc, bad);
    }
    requests += n;
    count -= n;
  }
}

void VerbsEndpoint::post_failed(int error, const ibv_send_wr* bad) {
  const char* op =
      bad != nullptr ? to_string(sent_ops_[bad->wr_id & sent_mask_]).data() : "a request";
  throw TransportError(verbs_error(std::string("ibv_post_send of ") + op + " failed", error) +
                       (error == ENOMEM ? " (send queue full)" : ""));
}

void VerbsEndpoint::post_recv(const RecvRequest* requests, std::size_t count) {
  const std::uint32_t payload = recv_sge_count_ - 1;  // the engine's entry in each scatter list
  while (count != 0) {
    const std::size_t n = std::min(count, recv_wrs_.size());
    for (std::size_t i = 0; i < n; ++i) {
      const RecvRequest& r = requests[i];
      ibv_recv_wr& w = recv_wrs_[i];
      const auto* local = static_cast<const VerbsMemory*>(r.local);
      w.wr_id = r.id | kRecvTag;
      w.sg_list[payload] = ibv_sge{local->at(r.offset), r.length, local->lkey()};
      w.next = i + 1 < n ? &recv_wrs_[i + 1] : nullptr;
    }
    ibv_recv_wr* bad = nullptr;
    const int rc = srq_ ? ibv_post_srq_recv(srq_.get(), recv_wrs_.data(), &bad)
                        : ibv_post_recv(qp_.get(), recv_wrs_.data(), &bad);
    if (rc != 0) [[unlikely]] {
      throw TransportError(
          verbs_error(srq_ ? "ibv_post_srq_recv failed" : "ibv_post_recv failed", rc) +
          (rc == ENOMEM ? " (receive queue full)" : ""));
    }
    requests += n;
    count -= n;
  }
}

Completion VerbsEndpoint::convert(const ibv_wc& wc) {
  Completion c;
  const bool receive = (wc.wr_id & kRecvTag) != 0;
  c.id = wc.wr_id & ~kRecvTag;
  c.type = receive ? CompletionType::recv : CompletionType::send;
  c.status = static_cast<std::int32_t>(wc.status);
  // Only a send puts bytes into the receive buffer; a write with immediate
  // consumes the receive but its data landed at the write's address.
  c.length = wc.opcode == IBV_WC_RECV ? wc.byte_len - grh_bytes_ : 0;
  c.immediate = (wc.wc_flags & IBV_WC_WITH_IMM) != 0 ? ntohl(wc.imm_data) : 0;
  if (wc.status != IBV_WC_SUCCESS) [[unlikely]] {
    c.length = 0;  // byte_len is undefined in a failed completion
    note_error(wc);
  }
  return c;
}

std::size_t VerbsEndpoint::poll(Completion* out, std::size_t max) {
  std::size_t n = 0;
  if (!pending_.empty()) [[unlikely]] {
    for (; n < max && !pending_.empty(); pending_.pop()) out[n++] = convert(pending_.front());
    if (n == max) return n;
  }
  const int got = ibv_poll_cq(cq_.get(), static_cast<int>(std::min(max - n, kMaxPoll)), polled_);
  if (got < 0) [[unlikely]] {
    throw TransportError("verbs: ibv_poll_cq failed: the completion queue is broken");
  }
  for (int i = 0; i < got; ++i) out[n++] = convert(polled_[i]);
  return n;
}

bool VerbsEndpoint::wait(std::chrono::milliseconds timeout, std::uint32_t threshold) {
  if (!channel_) [[unlikely]] {
    throw TransportError("verbs: wait() on an endpoint opened without completion events");
  }
  if (!pending_.empty()) return true;
  if (moderation_works_ && threshold != moderation_) set_moderation(threshold);
  if (!armed_) {
    if (const int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) {
      throw TransportError(verbs_error("ibv_req_notify_cq failed", rc));
    }
    armed_ = true;
    // A completion that arrived before the CQ was armed raises no event:
    // look once more, or we could sleep with it waiting in the queue.
    const int got = ibv_poll_cq(cq_.get(), static_cast<int>(kMaxPoll), polled_);
    if (got < 0) throw TransportError("verbs: ibv_poll_cq failed: the completion queue is broken");
    // pending_ is empty here and holds kMaxPoll: every push fits.
    for (int i = 0; i < got; ++i) static_cast<void>(pending_.push(polled_[i]));
    if (got > 0) return true;
  }
  pollfd descriptor{channel_->fd, POLLIN, 0};
  if (::poll(&descriptor, 1, static_cast<int>(timeout.count())) <= 0) return false;
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  while (ibv_get_cq_event(channel_.get(), &cq, &cq_context) == 0) {
    ++unacked_events_;
    armed_ = false;  // an event disarms the CQ
  }
  if (unacked_events_ >= kAckBatch) {
    ibv_ack_cq_events(cq_.get(), unacked_events_);
    unacked_events_ = 0;
  }
  return true;
}

void VerbsEndpoint::set_moderation(std::uint32_t threshold) {
  ibv_modify_cq_attr attr{};
  attr.attr_mask = IBV_CQ_ATTR_MODERATE;
  attr.moderate.cq_count =
      static_cast<std::uint16_t>(std::clamp(threshold, 1u, context_.max_cq_moderation()));
  attr.moderate.cq_period =
      static_cast<std::uint16_t>(std::min(kModerationPeriodUs, context_.max_cq_period_us()));
  // A device that lists moderation caps but refuses this CQ wakes per
  // completion instead: allowed by wait()'s contract, so not an error.
  if (ibv_modify_cq(cq_.get(), &attr) != 0) moderation_works_ = false;
  moderation_ = threshold;
}

void VerbsEndpoint::note_error(const ibv_wc& wc) {
  if (last_error_ != 0) return;  // the first failure is the cause; flushes follow it
  last_error_ = static_cast<std::int32_t>(wc.status);
  const bool receive = (wc.wr_id & kRecvTag) != 0;
  const std::string op =
      receive ? "receive" : std::string(to_string(sent_ops_[wc.wr_id & sent_mask_]));
  char vendor[32];
  std::snprintf(vendor, sizeof vendor, "0x%x", wc.vendor_err);
  last_error_text_ = std::string(ibv_wc_status_str(wc.status)) + " on " + op + " (" +
                     to_string(settings_.kind) + " QP " + std::to_string(qp_->qp_num) +
                     ", vendor_err " + vendor + ")";
}

std::string VerbsEndpoint::describe(std::int32_t status) const {
  if (status == last_error_ && !last_error_text_.empty()) return last_error_text_;
  return ibv_wc_status_str(static_cast<ibv_wc_status>(status));
}

}  // namespace uniperf::verbs
