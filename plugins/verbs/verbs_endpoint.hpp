// One queue pair (RC, UC or UD) with its own completion queue, optionally
// its own shared receive queue and completion channel, connected to the
// peer's queue pair of the same EndpointParams::index.
//
// Connecting. By default both sides create their QP, exchange QPN, PSN,
// LID, GID and MTU through the PeerChannel, and drive their own QP through
// INIT, RTR and RTS (UD: an address handle for the peer instead of a
// connection). With `connect: rdma_cm` the rdma_cm handshake carries that
// exchange instead (the responder listens, the initiator resolves and
// connects; only the responder's IP address and port go through the
// PeerChannel) and rdma_init_qp_attr supplies the attributes for the same
// state transitions of the same QP.
//
// Completions. Every request's wr_id is the engine's id; receives carry
// kRecvTag in addition, because the status of a failed completion is all
// that is reliable in it (its opcode is not), and send and receive
// completions share the one CQ. Unsignaled requests are posted without
// IBV_SEND_SIGNALED on a QP created with sq_sig_all = 0: the device skips
// their completions, and its in-order send queue makes a signaled
// completion cover every earlier request, which is the engine's rule.
//
// UD receives. A UD receive starts with the 40-byte GRH. Each receive is
// posted as two scatter entries: the GRH into a small plugin-owned buffer
// (every receive may share it: nobody reads it), the payload into the
// engine's buffer, so the engine sees only the payload and its length.
#pragma once

#include <chrono>
#include <vector>

#include "verbs_context.hpp"

namespace uniperf::verbs {

class CmConnection;  // rdma_cm identifiers of one endpoint (verbs_rdma_cm.cpp)
struct CmConnectionDelete {
  void operator()(CmConnection* connection) const noexcept;
};

/// What one side tells the other to connect (bootstrap method).
struct QpAddress {
  std::uint32_t qpn = 0;
  std::uint32_t psn = 0;
  std::uint16_t lid = 0;
  std::uint8_t kind = 0;  // QpKind
  std::uint8_t mtu = 0;   // ibv_mtu
  std::int32_t gid_index = -1;
  std::uint32_t responder_resources = 0;  // reads/atomics it accepts in flight
  ibv_gid gid{};
};

class VerbsEndpoint final : public Endpoint {
 public:
  VerbsEndpoint(VerbsContext& context, const EndpointParams& params, PeerChannel& channel);
  ~VerbsEndpoint() override;

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override {}
  std::string describe(std::int32_t status) const override;

 private:
  /// The engine's ids never reach bit 63; a receive's wr_id carries it.
  static constexpr std::uint64_t kRecvTag = 1ULL << 63;
  /// The most completions one poll() hands out (the engine asks at most 256).
  static constexpr std::size_t kMaxPoll = 256;
  static constexpr std::uint32_t kGrhBytes = 40;
  /// UD: every queue pair of a test uses this Q_Key (perftest's).
  static constexpr std::uint32_t kQkey = 0x11111111;

  void create_queues(const EndpointParams& params);
  QpAddress local_address() const;
  void connect_bootstrap(PeerChannel& channel);
  void connect_rdma_cm(PeerChannel& channel);

  // State transitions of our own QP; `peer` fills what the bootstrap
  // exchange told us, rdma_cm fills the attributes itself before calling.
  void modify(ibv_qp_attr& attr, int mask, const char* state);
  void to_init();
  void to_rtr(const QpAddress& peer);
  void to_rts(const QpAddress& peer);
  ibv_ah_attr route_to(const QpAddress& peer) const;
  void create_address_handle(const ibv_ah_attr& route, std::uint32_t qpn, std::uint32_t qkey);
  /// Overrides what rdma_init_qp_attr proposed with the config's settings.
  void apply_settings(ibv_qp_attr& attr, int& mask) const;

  Completion convert(const ibv_wc& wc);
  [[noreturn]] void post_failed(int error, const ibv_send_wr* bad);
  void note_error(const ibv_wc& wc);
  void set_moderation(std::uint32_t threshold);

  VerbsContext& context_;
  const Settings& settings_;
  std::uint32_t index_ = 0;  // EndpointParams::index: offsets a fixed cm_port
  std::uint32_t psn_ = 0;
  std::uint32_t initiator_depth_ = 0;  // max_rd_atomic actually set

  // Destroyed in reverse: the rdma_cm ids and the address handle first,
  // then the QP, then what it was created on.
  ChannelPtr channel_;
  CqPtr cq_;
  SrqPtr srq_;
  std::vector<std::byte> grh_;  // UD: where every receive's GRH lands
  MrPtr grh_mr_;
  QpPtr qp_;
  AhPtr ah_;
  std::unique_ptr<CmConnection, CmConnectionDelete> cm_;

  // Hot path: request chains built in place, no allocation per post.
  std::vector<ibv_send_wr> send_wrs_;
  std::vector<ibv_sge> send_sges_;
  std::vector<ibv_recv_wr> recv_wrs_;
  std::vector<ibv_sge> recv_sges_;  // UD: GRH entry, payload entry per receive
  std::uint32_t recv_sge_count_ = 1;
  std::uint32_t grh_bytes_ = 0;           // subtracted from a UD receive's byte_len
  decltype(ibv_send_wr::wr) ud_route_{};  // UD: address handle, QPN, Q_Key of sends
  std::vector<Op> sent_ops_;              // op by id, to name it when it fails
  std::uint64_t sent_mask_ = 0;

  ibv_wc polled_[kMaxPoll];
  // Found by wait()'s re-poll after arming, handed out by the next poll().
  support::CompletionRing<ibv_wc> pending_{kMaxPoll};

  // Event mode.
  bool armed_ = false;
  std::uint32_t unacked_events_ = 0;
  std::uint32_t moderation_ = 1;  // cq_count currently set on the CQ
  bool moderation_works_ = false;

  std::int32_t last_error_ = 0;
  std::string last_error_text_;
};

}  // namespace uniperf::verbs
