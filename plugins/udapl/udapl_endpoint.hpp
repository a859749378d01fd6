// One DAT endpoint (an RC queue pair underneath) with its own EVDs: one DTO
// EVD shared by requests and receives (one wait object for event mode), a
// connection EVD, and on the responder a CR EVD for its public service point.
//
// Roles: the responder (rank 1) creates a PSP, sends its conn_qual and IA
// address through the PeerChannel and accepts the one connection request
// with dat_cr_accept; the initiator (rank 0) connects with dat_ep_connect.
//
// Completions: every request carries the engine's id as its DTO cookie. An
// unsignaled request is posted with DAT_COMPLETION_SUPPRESS_FLAG and produces
// no event; RC completes requests in order, so a signaled request's event
// covers every earlier one, as the engine requires.
#pragma once

#include "udapl_common.hpp"

namespace uniperf::udapl {

class DatEndpoint final : public Endpoint {
 public:
  DatEndpoint(DatContext& context, const EndpointParams& params, PeerChannel& channel);
  ~DatEndpoint() override;

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override {}
  std::string describe(std::int32_t status) const override;

 private:
  /// Responder: creates the PSP; returns where it listens, for the initiator.
  Bytes listen();
  /// Responder: accepts the one connection request.
  void accept(const PeerChannel& channel);
  /// Initiator: connects to the PSP `blob` (listen()'s answer) names.
  void connect_to(PeerChannel& channel, const Bytes& blob);
  /// Waits (with kConnectTimeout) for one event on `evd`; throws unless it is `wanted`.
  DAT_EVENT expect_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER wanted, const char* what,
                         const PeerChannel& channel);
  void post_one(const WorkRequest& wr);
  [[noreturn]] void post_failed(const WorkRequest& wr, DAT_RETURN rc);
  /// Throws when the connection EVD says the peer is gone.
  void check_connection();
  void release();

  DatContext& context_;
  std::uint32_t index_ = 0;  // EndpointParams::index: added to a fixed port
  DAT_COUNT dto_qlen_ = 0;
  DAT_EVD_HANDLE dto_evd_ = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE conn_evd_ = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE cr_evd_ = DAT_HANDLE_NULL;
  DAT_PSP_HANDLE psp_ = DAT_HANDLE_NULL;
  DAT_EP_HANDLE ep_ = DAT_HANDLE_NULL;
  bool connected_ = false;

  // One event dat_evd_wait dequeued for the next poll() to hand out.
  DAT_EVENT pending_{};
  bool has_pending_ = false;
  std::uint32_t idle_polls_ = 0;
};

}  // namespace uniperf::udapl
