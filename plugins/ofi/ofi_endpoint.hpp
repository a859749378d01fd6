// One libfabric endpoint with its own completion queue: a connected msg
// endpoint (passive endpoint, fi_connect / fi_accept through an event queue)
// or an rdm endpoint addressed through an address vector.
//
// Completions. Every posted request owns a slot in a ring whose first
// member is the fi_context2 handed to libfabric, so a CQ entry leads back to
// its slot. Requests are retired from the ring in posting order; a signaled
// one produces a Completion. Where the provider completes transmits in order
// (comp_order FI_ORDER_STRICT) unsignaled requests are posted without
// FI_COMPLETION and a completion marks every earlier slot done (native
// selective completion); otherwise every request asks for a completion and
// the ring hides the unsignaled ones (emulated), which keeps the engine's
// rule that a signaled completion covers every earlier request. Inline
// requests go out with FI_INJECT and still ask for their completion.
#pragma once

#include <chrono>
#include <vector>

#include "ofi_context.hpp"

namespace uniperf::ofi {

class OfiRemote final : public RemoteRegion {
 public:
  OfiRemote(std::uint64_t address, std::uint64_t length, std::uint64_t key, bool virtual_address)
      : RemoteRegion(address, length), key_(key), base_(virtual_address ? address : 0) {}
  std::uint64_t key() const { return key_; }
  /// The target address libfabric wants: virtual, or an offset into the region.
  std::uint64_t target(std::uint64_t offset) const { return base_ + offset; }

 private:
  std::uint64_t key_;
  std::uint64_t base_;
};

class OfiEndpoint final : public Endpoint {
 public:
  OfiEndpoint(OfiContext& context, const EndpointParams& params, PeerChannel& channel);
  ~OfiEndpoint() override;

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override;
  std::string describe(std::int32_t status) const override;

 private:
  struct SendSlot {
    fi_context2 context;  // first: a CQ entry's op_context points here
    std::uint64_t id = 0;
    std::int32_t status = 0;
    bool signaled = false;
    bool done = true;
    std::uint64_t operand[2] = {};  // atomics: addend / swap, compare
  };
  struct RecvSlot {
    fi_context2 context;
    std::uint64_t id = 0;
    std::uint32_t index = 0;  // in recv_slots_, to return it to the free list
  };

  void open_common(const EndpointParams& params);
  // Each connects in steps that end with both sides' outcome (see
  // plugin_support.hpp), open_common() included: both sides fail alike.
  void connect_rdm(const EndpointParams& params, PeerChannel& channel);
  void accept_msg(const EndpointParams& params, PeerChannel& channel);
  void connect_msg(const EndpointParams& params, PeerChannel& channel);
  Bytes open_rdm();
  void wait_connected(const char* side, const PeerChannel& channel);
  void enable();

  /// What submit() does when the provider says -FI_EAGAIN.
  enum class Refused {
    spin,       ///< drive progress and retry for a moment (kSpinBeforeDefer), unless a
                ///< receive awaits the engine
    give_back,  ///< return false at once (retrying deferred_ from poll())
  };
  /// Posts one request; false when it was refused and is to wait in deferred_.
  bool submit(const WorkRequest& wr, std::uint64_t flags, SendSlot& slot, Refused refused);
  /// A request the provider refused for now, kept in posting order and
  /// posted again from poll(), progress(), wait() and the next post().
  struct Deferred {
    WorkRequest wr;
    std::uint64_t flags = 0;
    SendSlot* slot = nullptr;
  };
  /// Posts what was deferred, in order, until the provider refuses again.
  /// Throws when nothing has left for kAgainTimeout (a stuck peer).
  void post_deferred();
  /// Reads the CQ into the slot rings (no Completion is handed out here).
  void drain();
  void on_entry(const fi_cq_data_entry& entry);
  void on_error(const fi_cq_err_entry& error);
  /// Retires done send slots in posting order into the completion ring.
  void collect();
  /// The ring holds every request's completion at once (open_common), so
  /// it cannot be full here.
  void push(const Completion& c) { static_cast<void>(ready_.push(c)); }

  OfiContext& context_;
  const Settings& settings_;
  bool selective_native_ = false;
  bool inject_at_return_ = false;  // Settings::inject_at_return
  fi_addr_t peer_ = FI_ADDR_UNSPEC;

  // Destroyed in reverse: the endpoint first, then what it is bound to.
  FiPtr<fid_eq> eq_;
  FiPtr<fid_av> av_;
  FiPtr<fid_cq> cq_;
  FiPtr<fid_pep> listener_;
  // Slots stay put for the endpoint's life: libfabric hands their
  // fi_context2 back, and the NIC reads their atomic operands.
  support::Retirement<SendSlot> send_slots_;
  FiPtr<fid_mr> operands_mr_;  // the slots' atomic operands, for FI_MR_LOCAL providers
  void* operands_desc_ = nullptr;
  FiPtr<fid_ep> ep_;
  int wait_fd_ = -1;

  // Sends the provider refused with -FI_EAGAIN (its queue, or the peer's
  // unexpected-message room, is full) while a receive awaited the engine
  // wait here instead of spinning inside post(): a bidirectional stream's
  // peer can only make room once this side returns to the engine, which
  // re-posts its receives. At most send_depth.
  std::vector<Deferred> deferred_;
  std::chrono::steady_clock::time_point deferred_since_{};  // the last time one left
  // A receive completion sits in ready_, not yet handed to the engine: the
  // engine may have receives to re-post that the peer is waiting for.
  bool receives_unseen_ = false;

  std::vector<RecvSlot> recv_slots_;
  std::vector<std::uint32_t> free_recv_;  // a stack of free recv slot indices

  support::CompletionRing<Completion> ready_;  // completions waiting for poll()
  std::int32_t last_error_ = 0;  // prov_errno of the last failed operation, for describe()
  std::string last_error_text_;
};

}  // namespace uniperf::ofi
