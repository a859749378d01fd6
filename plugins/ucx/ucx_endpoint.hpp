// One UCP endpoint to the peer's worker, with its own completion ring.
//
// UCP has no unsignaled operations: every request completes, through a
// callback or at once. The endpoint keeps every request in a fixed ring slot
// until it is done and retires slots strictly in posting order, producing a
// Completion only for signaled (or failed) requests. A signaled Completion
// therefore means it and every earlier request of this endpoint are done,
// which is what the plugin specification asks (selective completion is
// `emulated`). Receives retire in posting order too, so a rendezvous message
// that finishes late cannot overtake an earlier one.
//
// Request memory belongs to the slots (UCP_OP_ATTR_FIELD_REQUEST): posting
// makes UCP allocate nothing and a finished request needs no
// ucp_request_free, so the hot path neither allocates nor frees.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ucx_common.hpp"

namespace uniperf::ucx {

/// How this endpoint and the peer's one find each other's messages.
struct ChannelIds {
  std::uint64_t tag_channel = 0;  ///< tag number (receives on ours, sends on the peer's)
  std::uint32_t am_id = 0;        ///< active-message handler id (api = am)
};

class UcxRemoteRegion final : public RemoteRegion {
 public:
  UcxRemoteRegion(std::uint64_t address, std::uint64_t length, ucp_rkey_h rkey)
      : RemoteRegion(address, length), rkey_(rkey) {}
  ~UcxRemoteRegion() override { ucp_rkey_destroy(rkey_); }
  ucp_rkey_h rkey() const { return rkey_; }

 private:
  ucp_rkey_h rkey_;
};

class UcxEndpoint final : public Endpoint {
 public:
  /// Creates the UCP endpoint to the worker at `peer_address`. `local` are
  /// the ids this side receives on, `peer` the ids the peer receives on.
  /// Throws TransportError when the peer's worker cannot be reached.
  UcxEndpoint(WorkerState& state, const ucp_address_t* peer_address, const EndpointParams& params,
              ChannelIds local, ChannelIds peer);
  ~UcxEndpoint() override;
  UcxEndpoint(const UcxEndpoint&) = delete;
  UcxEndpoint& operator=(const UcxEndpoint&) = delete;

  /// Setup path: one small tagged message each way, so that UCP's lazy
  /// wire-up is finished in both directions before the engine times
  /// anything. Throws TransportError when the peer does not answer in time,
  /// or as soon as the engine gave up on the test (`channel.cancelled()`).
  void complete_wireup(std::chrono::milliseconds limit, const PeerChannel& channel);

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override;
  std::string describe(std::int32_t status) const override;
  /// ucp_ep_flush_nbx, started by the first call and progressed by the
  /// next: everything posted on the endpoint is at the peer once it ends.
  bool flush() override;

 private:
  /// One request, from post until retired. Slots never move: UCP callbacks
  /// find them through user_data.
  struct Slot {
    // Not the endpoint: a request that outlives it (see Rings) must still
    // find something valid when UCP finally completes or purges it.
    WorkerState* state = nullptr;
    void* handle = nullptr;       // our request memory, handed to UCP as param.request
    void* in_flight = nullptr;    // what UCP returned while the request runs
    std::byte* buffer = nullptr;  // receives: where the payload goes
    std::uint64_t id = 0;
    std::uint64_t operand = 0;   // atomics: UCP reads the operand from here until done
    std::uint32_t capacity = 0;  // receives: buffer size
    std::uint32_t length = 0;
    ucs_status_t status = UCS_OK;
    bool signaled = false;
    bool done = true;
  };

  /// An active message that arrived before a receive was posted for it.
  struct HeldMessage {
    void* data = nullptr;
    std::size_t length = 0;
    bool rendezvous = false;
  };

  /// Everything UCP may still write to while a request or the endpoint
  /// itself is alive in UCP. Kept in one allocation so that teardown can
  /// leave it behind on purpose when UCP never finished a request or the
  /// close (memory safety over a small leak).
  struct Rings {
    WorkerState* state = nullptr;
    std::unique_ptr<std::byte[]> request_memory;
    // Retired in posting order (plugin_support's Retirement): a signaled
    // send's Completion then covers every earlier send, and a late
    // rendezvous receive cannot overtake an earlier one.
    support::Retirement<Slot> sends;
    support::Retirement<Slot> receives;
    std::uint64_t am_header = 0;    // the peer's channel, sent as every AM's header
    ucs_status_t failure = UCS_OK;  // set by UCP's error handler (peer_errors)
  };

  /// Moves finished requests, in posting order, into the completion ring.
  /// False when the ring filled up before every finished request was moved.
  bool collect();
  /// collect(), handing the first completions to `out` (from out[count],
  /// up to `max`; count grows by those) and the rest to the ring. The
  /// caller empties the ring into `out` first, or fills `out`, so that the
  /// order holds.
  bool collect_into(Completion* out, std::size_t& count, std::size_t max);
  void start(const WorkRequest& request, Slot& slot);
  void finish_start(Slot& slot, ucs_status_ptr_t result);
  void post_tag_recv(Slot& slot);
  /// Hands an active message to the oldest unmatched receive. Returns what
  /// the AM callback must return when it is called from there.
  ucs_status_t deliver(void* data, std::size_t length, bool rendezvous, bool held);
  void hold(const HeldMessage& message);
  void release_backlog();
  /// Points our AM id at this endpoint, or (receiver == nullptr) at a handler
  /// that drops what still arrives for it, so late messages are not logged
  /// as unhandled by UCX.
  void register_am_handler(UcxEndpoint* receiver);
  void discard_unexpected(std::chrono::steady_clock::time_point deadline);
  /// True when UCP finished closing the endpoint.
  bool close_endpoint(std::chrono::steady_clock::time_point deadline);
  bool all_requests_done() const;

  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void on_send_done(void* request, ucs_status_t status, void* user_data);
  static void on_tag_received(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                              void* user_data);
  static void on_am_data_received(void* request, ucs_status_t status, std::size_t length,
                                  void* user_data);
  static ucs_status_t on_active_message(void* arg, const void* header, std::size_t header_length,
                                        void* data, std::size_t length,
                                        const ucp_am_recv_param_t* param);

  WorkerState& state_;
  ucp_worker_h worker_;
  ucp_ep_h ep_ = nullptr;
  TwoSidedApi api_;
  ChannelIds local_;
  ChannelIds peer_;
  ucp_tag_t send_tag_;
  ucp_tag_t recv_tag_;

  std::unique_ptr<Rings> rings_;
  // Active messages: receives below this sequence have a message matched
  // to them (rings_->receives.posted() and .retired() bound it).
  std::uint64_t recv_matched_ = 0;

  support::CompletionRing<Completion> completions_;
  // poll() collects only when a callback ran since it last did, or when a
  // finished request may wait uncollected: one finished in place while
  // posting (no callback follows), or the last collect stopped at a full
  // completion ring.
  std::uint64_t callbacks_collected_ = 0;
  bool collected_all_ = true;

  support::CompletionRing<HeldMessage> backlog_;
  bool message_lost_ = false;

  // The flush flush() started and has not seen end; UCP's own request.
  ucs_status_ptr_t flushing_ = nullptr;
  // The sends posted when the last flush started: none since, nothing to flush.
  std::uint64_t flushed_through_ = 0;
};

}  // namespace uniperf::ucx
