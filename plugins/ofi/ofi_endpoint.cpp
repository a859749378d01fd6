#include "ofi_endpoint.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>

#include <cstdlib>
#include <cstring>

namespace uniperf::ofi {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kConnectTimeout = 20s;
// How often a wait for a connection event asks whether the engine gave up
// (PeerChannel::cancelled): a provider need not report that its peer died.
constexpr auto kConnectSlice = 100ms;
// How long post() drives progress while the provider keeps answering
// -FI_EAGAIN, or a request refused that way waits in deferred_ with nothing
// leaving, before the endpoint is called broken. The engine never posts
// beyond the queue sizes it asked for, so this only trips on a stuck peer.
constexpr auto kAgainTimeout = 10s;
// How long post() itself retries a refused request before it leaves the
// request in deferred_ and returns to the engine. Spinning keeps a one-way
// stream at full speed (ofi-udp-rxd ran slower when every refusal went back
// at once), but only the engine progresses this side's other endpoints: a
// bound bidirectional stream over two rails receives on one endpoint while
// it sends on another, and two sides spinning on their sends, each waiting
// for the other to progress the endpoint it receives on, never met.
constexpr auto kSpinBeforeDefer = 200us;
constexpr std::size_t kCqBatch = 32;

/// What next_cm_event() returns when the peer spoke on the control
/// channel instead of connecting (a libfabric error code it never returns).
constexpr ssize_t kPeerMovedOn = -FI_ECANCELED;

/// The next connection-management event of `eq`, waited for up to
/// kConnectTimeout in slices; -FI_EAGAIN when none came. Throws once the
/// engine gave up on the test, so a dead peer does not hold the run for
/// the whole timeout. With `until_peer_speaks`, returns kPeerMovedOn once
/// the peer's next control message is waiting: a responder's peer that
/// sends anything before it connected failed to connect.
ssize_t next_cm_event(fid_eq* eq, std::uint32_t& event, fi_eq_cm_entry& entry,
                      const PeerChannel& channel, const char* awaited,
                      bool until_peer_speaks = false) {
  const auto deadline = Clock::now() + kConnectTimeout;
  const auto slice_ms = static_cast<int>(kConnectSlice.count());
  while (true) {
    const ssize_t rc = fi_eq_sread(eq, &event, &entry, sizeof entry, slice_ms, 0);
    if (rc != -FI_EAGAIN) return rc;
    if (channel.cancelled()) {
      throw TransportError(std::string("ofi: stopped waiting for ") + awaited +
                           ": the test was given up (its peer is gone, or the run interrupted)");
    }
    if (until_peer_speaks && channel.peer_has_spoken()) return kPeerMovedOn;
    if (Clock::now() >= deadline) return rc;
  }
}

/// An IPv4 socket address from a numeric host and a port.
sockaddr_in ipv4(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    // The domain is opened for IPv4 (FI_SOCKADDR_IN): the tcp provider
    // refuses an IPv6 endpoint on it.
    throw TransportError(
        "ofi: '" + host + "' is not a numeric IPv4 address" +
        (host.find(':') != std::string::npos
             ? " (msg endpoints connect over IPv4: reach the peer by an IPv4 address, or set "
               "peer_address and address to IPv4 ones)"
             : ""));
  }
  return address;
}

/// A copy of `base` whose source or destination address is `address`.
InfoPtr with_address(const fi_info& base, const sockaddr_in& address, bool destination) {
  InfoPtr info(fi_dupinfo(&base));
  if (!info) throw TransportError("ofi: fi_dupinfo failed");
  auto* copy = static_cast<sockaddr_in*>(std::malloc(sizeof address));  // fi_freeinfo frees it
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, &address, sizeof address);
  void*& slot = destination ? info->dest_addr : info->src_addr;
  std::size_t& length = destination ? info->dest_addrlen : info->src_addrlen;
  std::free(slot);
  slot = copy;
  length = sizeof address;
  info->addr_format = FI_SOCKADDR_IN;
  return info;
}

}  // namespace

OfiEndpoint::OfiEndpoint(OfiContext& context, const EndpointParams& params, PeerChannel& channel)
    : context_(context), settings_(context.settings()) {
  if (settings_.kind == EndpointKind::rdm) {
    connect_rdm(params, channel);
  } else if (channel.rank() == 1) {
    accept_msg(params, channel);
  } else {
    connect_msg(params, channel);
  }
}

OfiEndpoint::~OfiEndpoint() = default;

void OfiEndpoint::open_common(const EndpointParams& params) {
  const fi_info& info = context_.info();
  selective_native_ = context_.capabilities().selective_completion == Support::native;
  inject_at_return_ = settings_.inject_at_return;

  // Ring sizes: powers of two with room for every request the engine may
  // have outstanding, and the completions of all of them at once.
  send_slots_.reset(std::max(params.send_depth, 2u));
  deferred_.reserve(send_slots_.capacity());  // no allocation on the hot path
  const std::size_t send_slots = send_slots_.capacity();
  recv_slots_.resize(std::max(params.recv_depth, 1u));
  free_recv_.resize(recv_slots_.size());
  for (std::uint32_t i = 0; i < recv_slots_.size(); ++i) {
    recv_slots_[i].index = i;
    free_recv_[i] = static_cast<std::uint32_t>(recv_slots_.size() - 1 - i);
  }
  ready_.reset(send_slots + recv_slots_.size());
  const std::size_t ready = ready_.capacity();

  if (info.tx_attr->size != 0 && params.send_depth > info.tx_attr->size) {
    throw Unsupported("ofi: send_depth " + std::to_string(params.send_depth) +
                      " exceeds the provider's transmit queue of " +
                      std::to_string(info.tx_attr->size));
  }

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.size = ready;
  cq_attr.wait_obj = params.completion_events ? FI_WAIT_FD : FI_WAIT_NONE;
  fid_cq* cq = nullptr;
  if (const int rc = fi_cq_open(context_.domain(), &cq_attr, &cq, nullptr); rc != 0) {
    if (params.completion_events) {
      throw Unsupported(
          fi_error("the provider has no file-descriptor wait object for "
                   "completion: event",
                   rc));
    }
    throw TransportError(fi_error("cannot open a completion queue", rc));
  }
  cq_.reset(cq);
  if (params.completion_events) {
    check(fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_), "cannot get the CQ's wait descriptor");
  }

  // The atomics' operands live in the slots; providers with FI_MR_LOCAL
  // need them registered.
  const std::span<SendSlot> slots = send_slots_.storage();
  operands_mr_ = context_.register_raw(slots.data(), slots.size_bytes());
  operands_desc_ = fi_mr_desc(operands_mr_.get());

  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  fid_eq* eq = nullptr;
  if (settings_.kind == EndpointKind::msg) {
    check(fi_eq_open(context_.fabric(), &eq_attr, &eq, nullptr), "cannot open an event queue");
    eq_.reset(eq);
  }
}

/// Binds the CQ (and memory that must be bound) and enables the endpoint.
void OfiEndpoint::enable() {
  std::uint64_t flags = FI_TRANSMIT | FI_RECV;
  if (selective_native_) flags |= FI_SELECTIVE_COMPLETION;
  check(fi_ep_bind(ep_.get(), &cq_->fid, flags), "cannot bind the completion queue");
  if (eq_) check(fi_ep_bind(ep_.get(), &eq_->fid, 0), "cannot bind the event queue");
  if (av_) check(fi_ep_bind(ep_.get(), &av_->fid, 0), "cannot bind the address vector");
  check(fi_enable(ep_.get()), "cannot enable the endpoint");
  if (context_.endpoint_bound_memory()) {
    // FI_MR_ENDPOINT: a region serves only the endpoint it is bound to.
    std::vector<fid_mr*> regions = {operands_mr_.get()};
    for (OfiMemory* m : context_.take_unbound_memory()) regions.push_back(m->mr());
    for (fid_mr* mr : regions) {
      check(fi_mr_bind(mr, &ep_->fid, 0), "cannot bind memory to the endpoint");
      check(fi_mr_enable(mr), "cannot enable bound memory");
    }
  }
}

void OfiEndpoint::connect_rdm(const EndpointParams& params, PeerChannel& channel) {
  const Bytes peer = support::exchange_step(channel, "ofi", [&] {
    open_common(params);
    return open_rdm();
  });
  std::exception_ptr failure;
  try {
    if (peer.empty()) throw TransportError("ofi: the peer sent no endpoint address");
    const int inserted = fi_av_insert(av_.get(), peer.data(), 1, &peer_, 0, nullptr);
    if (inserted != 1) {
      throw TransportError("ofi: cannot insert the peer's address into the address vector");
    }
  } catch (...) {
    failure = std::current_exception();
  }
  support::exchange_outcome(channel, "ofi", failure);
}

/// Opens the rdm endpoint and returns its address for the peer.
Bytes OfiEndpoint::open_rdm() {
  fi_av_attr av_attr{};
  av_attr.type = context_.info().domain_attr->av_type != FI_AV_UNSPEC
                     ? context_.info().domain_attr->av_type
                     : FI_AV_MAP;
  fid_av* av = nullptr;
  check(fi_av_open(context_.domain(), &av_attr, &av, nullptr), "cannot open an address vector");
  av_.reset(av);
  fid_ep* ep = nullptr;
  check(fi_endpoint(context_.domain(), const_cast<fi_info*>(&context_.info()), &ep, nullptr),
        "cannot create the endpoint");
  ep_.reset(ep);
  enable();

  std::size_t length = 0;
  fi_getname(&ep_->fid, nullptr, &length);  // asks for the size
  Bytes name(length);
  check(fi_getname(&ep_->fid, name.data(), &length), "cannot read the endpoint's address");
  name.resize(length);
  return name;
}

/// Responder: listen on a passive endpoint, tell the initiator the port,
/// accept its connection request. Each step ends with both sides' outcome
/// (plugin_support), so a failure on either side ends both at once, with its
/// reason and its kind: an Unsupported here SKIPs the initiator too.
void OfiEndpoint::accept_msg(const EndpointParams& params, PeerChannel& channel) {
  support::exchange_step(channel, "ofi", [&] {
    open_common(params);
    const auto info = with_address(
        context_.info(),
        ipv4(settings_.address.empty() ? "0.0.0.0" : settings_.address, settings_.port), false);
    fid_pep* pep = nullptr;
    check(fi_passive_ep(context_.fabric(), info.get(), &pep, nullptr),
          "cannot create a passive endpoint");
    listener_.reset(pep);
    check(fi_pep_bind(listener_.get(), &eq_->fid, 0), "cannot bind the passive endpoint");
    check(fi_listen(listener_.get()), "cannot listen");
    sockaddr_in bound{};
    std::size_t length = sizeof bound;
    check(fi_getname(&listener_->fid, &bound, &length), "cannot read the listening address");
    return support::to_blob(std::uint16_t{ntohs(bound.sin_port)});
  });
  std::exception_ptr failure;
  bool peer_moved_on = false;
  try {
    fi_eq_cm_entry entry{};
    std::uint32_t event = 0;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(kConnectTimeout);
    const ssize_t rc =
        next_cm_event(eq_.get(), event, entry, channel, "a connection request", true);
    if (rc == kPeerMovedOn) {
      // The initiator failed before it connected (fi_connect refused at
      // once, a bad address): its outcome, read below, says why.
      peer_moved_on = true;
    } else if (rc < 0 || event != FI_CONNREQ) {
      throw TransportError(rc == -FI_EAGAIN ? "ofi: no connection request within " +
                                                  std::to_string(ms.count()) + " ms"
                                            : fi_error("waiting for a connection request", rc));
    } else {
      InfoPtr request(entry.info);
      fid_ep* ep = nullptr;
      check(fi_endpoint(context_.domain(), request.get(), &ep, nullptr),
            "cannot create the endpoint for the connection request");
      ep_.reset(ep);
      enable();
      check(fi_accept(ep_.get(), nullptr, 0), "cannot accept the connection");
      wait_connected("responder", channel);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  listener_.reset();
  // The peer's failure is thrown here, in its words.
  support::exchange_outcome(channel, "ofi", failure);
  if (peer_moved_on)
    throw TransportError("ofi: the initiator spoke before it connected, and said it succeeded");
}

/// Initiator: connect to the responder's port on its host.
void OfiEndpoint::connect_msg(const EndpointParams& params, PeerChannel& channel) {
  const Bytes answer = support::exchange_step(channel, "ofi", [&] {
    open_common(params);
    return Bytes{};
  });
  const auto port = support::from_blob<std::uint16_t>(answer, "ofi", "listening port");
  const std::string host =
      settings_.peer_address.empty() ? channel.peer_host() : settings_.peer_address;
  std::exception_ptr failure;
  try {
    if (host.empty()) {
      throw TransportError(
          "ofi: the control connection does not tell the responder's address; set "
          "peer_address in the initiator's config");
    }
    const sockaddr_in target = ipv4(host, port);
    const auto info = with_address(context_.info(), target, true);
    fid_ep* ep = nullptr;
    check(fi_endpoint(context_.domain(), info.get(), &ep, nullptr), "cannot create the endpoint");
    ep_.reset(ep);
    enable();
    check(fi_connect(ep_.get(), &target, nullptr, 0),
          "cannot connect to " + host + ":" + std::to_string(port));
    wait_connected("initiator", channel);
  } catch (...) {
    failure = std::current_exception();
  }
  support::exchange_outcome(channel, "ofi", failure);
}

void OfiEndpoint::wait_connected(const char* side, const PeerChannel& channel) {
  fi_eq_cm_entry entry{};
  std::uint32_t event = 0;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(kConnectTimeout);
  const ssize_t rc = next_cm_event(eq_.get(), event, entry, channel, "the connection");
  if (rc == -FI_EAVAIL) {
    fi_eq_err_entry error{};
    fi_eq_readerr(eq_.get(), &error, 0);
    throw TransportError(std::string("ofi: the ") + side +
                         "'s connection failed: " + fi_strerror(error.err));
  }
  if (rc < 0 || event != FI_CONNECTED) {
    throw TransportError(
        std::string("ofi: the ") + side + " saw no connection within " +
        std::to_string(ms.count()) + " ms" +
        (rc < 0 && rc != -FI_EAGAIN ? " (" + fi_error("fi_eq_sread", rc) + ")" : ""));
  }
}

std::unique_ptr<RemoteRegion> OfiEndpoint::import_region(std::uint64_t address,
                                                         std::uint64_t length,
                                                         std::span<const std::byte> key) {
  const auto value = support::from_blob<std::uint64_t>(key, "ofi", "memory key");
  return std::make_unique<OfiRemote>(address, length, value, context_.virtual_addressing());
}

// ---------------------------------------------------------------------------
// Hot path
// ---------------------------------------------------------------------------

void OfiEndpoint::post(const WorkRequest* requests, std::size_t count) {
  if (!deferred_.empty()) [[unlikely]]
    post_deferred();
  for (std::size_t i = 0; i < count; ++i) {
    const WorkRequest& wr = requests[i];
    if (send_slots_.full()) [[unlikely]] {
      drain();
      collect();
      if (send_slots_.full()) {
        throw TransportError("ofi: more requests outstanding than send_depth allows");
      }
    }
    SendSlot& slot = send_slots_.post(wr.id, (wr.flags & WorkRequest::kSignaled) != 0);
    std::uint64_t flags = i + 1 < count ? FI_MORE : 0;
    if (wr.flags & WorkRequest::kFence) flags |= FI_FENCE;
    if (slot.signaled || !selective_native_) flags |= FI_COMPLETION;
    if (wr.flags & WorkRequest::kInline) flags |= FI_INJECT;
    // Behind a deferred request, or given back by submit(): it waits, in order.
    if (!deferred_.empty() || !submit(wr, flags, slot, Refused::spin)) [[unlikely]] {
      if (deferred_.empty()) deferred_since_ = Clock::now();
      deferred_.push_back(Deferred{wr, flags & ~std::uint64_t{FI_MORE}, &slot});
    }
  }
}

void OfiEndpoint::post_deferred() {
  std::size_t sent = 0;
  while (sent < deferred_.size() && submit(deferred_[sent].wr, deferred_[sent].flags,
                                           *deferred_[sent].slot, Refused::give_back)) {
    ++sent;
  }
  const auto now = Clock::now();
  if (sent != 0) {
    deferred_.erase(deferred_.begin(), deferred_.begin() + static_cast<std::ptrdiff_t>(sent));
    deferred_since_ = now;
  } else if (!deferred_.empty() && now - deferred_since_ > kAgainTimeout) {
    throw TransportError("ofi: the provider refused " +
                         std::string(to_string(deferred_.front().wr.op)) + " with -FI_EAGAIN for " +
                         std::to_string(kAgainTimeout.count()) + " s (is the peer alive?)");
  }
}

bool OfiEndpoint::submit(const WorkRequest& wr, std::uint64_t flags, SendSlot& slot,
                         Refused refused) {
  auto* local = static_cast<OfiMemory*>(wr.local);
  auto* remote = static_cast<const OfiRemote*>(wr.remote);
  void* desc = local->desc();
  iovec iov{local->at(wr.local_offset), wr.length};
  Clock::time_point give_up{};
  // fi_inject and its kin take no flags: a fenced request keeps the
  // message call (FI_MORE is only a hint and may go).
  const bool inject = inject_at_return_ && (flags & FI_INJECT) != 0 && (flags & FI_FENCE) == 0;
  for (;;) {
    ssize_t rc = 0;
    switch (wr.op) {
      case Op::send: {
        if (inject) {
          rc = fi_inject(ep_.get(), iov.iov_base, iov.iov_len, peer_);
          break;
        }
        const fi_msg msg{&iov, &desc, 1, peer_, &slot.context, 0};
        rc = fi_sendmsg(ep_.get(), &msg, flags);
        break;
      }
      case Op::write:
      case Op::write_imm: {
        if (inject) {
          rc = wr.op == Op::write_imm
                   ? fi_inject_writedata(ep_.get(), iov.iov_base, iov.iov_len, wr.immediate, peer_,
                                         remote->target(wr.remote_offset), remote->key())
                   : fi_inject_write(ep_.get(), iov.iov_base, iov.iov_len, peer_,
                                     remote->target(wr.remote_offset), remote->key());
          break;
        }
        const fi_rma_iov rma{remote->target(wr.remote_offset), wr.length, remote->key()};
        const fi_msg_rma msg{&iov, &desc, 1, peer_, &rma, 1, &slot.context, wr.immediate};
        rc = fi_writemsg(ep_.get(), &msg,
                         wr.op == Op::write_imm ? flags | FI_REMOTE_CQ_DATA : flags);
        break;
      }
      case Op::read: {
        const fi_rma_iov rma{remote->target(wr.remote_offset), wr.length, remote->key()};
        const fi_msg_rma msg{&iov, &desc, 1, peer_, &rma, 1, &slot.context, 0};
        rc = fi_readmsg(ep_.get(), &msg, flags);
        break;
      }
      case Op::fetch_add:
      case Op::cswap: {
        const bool swap = wr.op == Op::cswap;
        slot.operand[0] = swap ? wr.swap : wr.compare_add;
        slot.operand[1] = wr.compare_add;
        fi_ioc operand{&slot.operand[0], 1};
        fi_ioc compare{&slot.operand[1], 1};
        fi_ioc result{local->at(wr.local_offset), 1};
        void* operand_desc = operands_desc_;
        const fi_rma_ioc target{remote->target(wr.remote_offset), 1, remote->key()};
        const fi_msg_atomic msg{&operand,
                                &operand_desc,
                                1,
                                peer_,
                                &target,
                                1,
                                FI_UINT64,
                                swap ? FI_CSWAP : FI_SUM,
                                &slot.context,
                                0};
        rc = swap ? fi_compare_atomicmsg(ep_.get(), &msg, &compare, &operand_desc, 1, &result,
                                         &desc, 1, flags)
                  : fi_fetch_atomicmsg(ep_.get(), &msg, &result, &desc, 1, flags);
        break;
      }
    }
    if (rc == 0) [[likely]] {
      // An inject reports nothing: its buffer is free now, so it is done
      // (a signaled one's Completion comes from the next poll's collect()).
      if (inject) slot.done = true;
      return true;
    }
    if (rc != -FI_EAGAIN) throw TransportError(fi_error(std::string(to_string(wr.op)), rc));
    if (refused == Refused::give_back) return false;
    // The provider needs progress (or its queue is momentarily full): read
    // the CQ into the rings, which is also what progresses it, and retry.
    drain();
    // A receive the engine has not seen yet means the engine may owe the
    // peer a re-posted receive, and the peer may be refusing this very
    // send until it gets one (ofi-shm: a bidirectional stream whose window
    // outruns its posted receives). Spinning here would deadlock both
    // sides, so the request waits in deferred_ while the engine polls.
    // Without one, spinning is what keeps a one-way stream at full speed
    // (ofi-udp-rxd ran slower when every refusal went back to the engine).
    if (receives_unseen_) return false;
    // Past a short spin it waits in deferred_ too, which post_deferred()
    // gives kAgainTimeout before it calls the peer stuck.
    const auto now = Clock::now();
    if (give_up == Clock::time_point{}) {
      give_up = now + kSpinBeforeDefer;
    } else if (now > give_up) {
      return false;
    }
  }
}

void OfiEndpoint::post_recv(const RecvRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const RecvRequest& r = requests[i];
    if (free_recv_.empty()) [[unlikely]] {
      throw TransportError("ofi: more receives posted than recv_depth allows");
    }
    RecvSlot& slot = recv_slots_[free_recv_.back()];
    free_recv_.pop_back();
    slot.id = r.id;
    auto* local = static_cast<OfiMemory*>(r.local);
    void* desc = local->desc();
    iovec iov{local->at(r.offset), r.length};
    const fi_msg msg{&iov, &desc, 1, FI_ADDR_UNSPEC, &slot.context, 0};
    Clock::time_point give_up{};
    for (;;) {
      const ssize_t rc = fi_recvmsg(ep_.get(), &msg, FI_COMPLETION | (i + 1 < count ? FI_MORE : 0));
      if (rc == 0) [[likely]]
        break;
      if (rc != -FI_EAGAIN) throw TransportError(fi_error("recv", rc));
      drain();
      const auto now = Clock::now();
      if (give_up == Clock::time_point{}) {
        give_up = now + kAgainTimeout;
      } else if (now > give_up) {
        throw TransportError("ofi: the provider refused receives with -FI_EAGAIN");
      }
    }
  }
}

void OfiEndpoint::drain() {
  fi_cq_data_entry entries[kCqBatch];
  for (;;) {
    const ssize_t n = fi_cq_read(cq_.get(), entries, kCqBatch);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) on_entry(entries[i]);
      if (static_cast<std::size_t>(n) < kCqBatch) return;
      continue;
    }
    if (n == -FI_EAGAIN) return;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error{};
      if (fi_cq_readerr(cq_.get(), &error, 0) == 1) on_error(error);
      continue;
    }
    throw TransportError(fi_error("fi_cq_read", n));
  }
}

void OfiEndpoint::on_entry(const fi_cq_data_entry& entry) {
  if (entry.flags & FI_RECV) {
    auto* slot = static_cast<RecvSlot*>(entry.op_context);
    push(Completion{slot->id, CompletionType::recv, 0, static_cast<std::uint32_t>(entry.len),
                    static_cast<std::uint32_t>(entry.data)});
    free_recv_.push_back(slot->index);
    receives_unseen_ = true;
    return;
  }
  auto* slot = static_cast<SendSlot*>(entry.op_context);
  if (slot == nullptr) return;  // a remote-write event without a request of ours
  slot->done = true;
  if (selective_native_) {
    // In-order transmit completions: everything posted before it is done.
    send_slots_.done_through(*slot);
  }
}

void OfiEndpoint::on_error(const fi_cq_err_entry& error) {
  last_error_ = error.err;
  char text[256] = {};
  const char* provider_text =
      fi_cq_strerror(cq_.get(), error.prov_errno, error.err_data, text, sizeof text);
  last_error_text_ = provider_text != nullptr ? provider_text : "";
  const std::int32_t status = error.err != 0 ? error.err : FI_EOTHER;
  if (error.flags & FI_RECV) {
    auto* slot = static_cast<RecvSlot*>(error.op_context);
    if (slot == nullptr) throw TransportError(fi_error("receive failed", status));
    push(Completion{slot->id, CompletionType::recv, status, 0, 0});
    free_recv_.push_back(slot->index);
    receives_unseen_ = true;
    return;
  }
  auto* slot = static_cast<SendSlot*>(error.op_context);
  if (slot == nullptr) throw TransportError(fi_error("operation failed", status));
  slot->status = status;
  slot->done = true;
}

void OfiEndpoint::collect() {
  // Signaled or failed sends, in posting order (plugin.hpp "Unsignaled
  // posts"); ready_ has room for all of them.
  send_slots_.retire([this](const SendSlot& slot) {
    push(Completion{slot.id, CompletionType::send, slot.status, 0, 0});
    return true;
  });
}

std::size_t OfiEndpoint::poll(Completion* out, std::size_t max) {
  drain();
  if (!deferred_.empty()) [[unlikely]]
    post_deferred();
  collect();
  const std::size_t n = ready_.pop_into(out, max);
  if (ready_.empty()) receives_unseen_ = false;
  return n;
}

bool OfiEndpoint::wait(std::chrono::milliseconds timeout, std::uint32_t /*threshold*/) {
  if (wait_fd_ < 0) [[unlikely]]
    throw TransportError("ofi: wait() on an endpoint opened without completion events");
  if (!ready_.empty()) return true;
  if (!deferred_.empty()) {
    // Nothing signals when the provider has room again: try now, and let
    // the engine poll.
    drain();
    post_deferred();
    return true;
  }
  // fi_trywait says whether sleeping on the descriptor is safe now, i.e.
  // no completion is already queued where the descriptor would not signal.
  fid* fids[] = {&cq_->fid};
  if (fi_trywait(context_.fabric(), fids, 1) != FI_SUCCESS) return true;
  pollfd descriptor{wait_fd_, POLLIN, 0};
  return ::poll(&descriptor, 1, static_cast<int>(timeout.count())) > 0;
}

void OfiEndpoint::progress() {
  // Manual-progress providers move data (incoming one-sided operations too)
  // only inside CQ calls; a zero-count read progresses without consuming.
  fi_cq_read(cq_.get(), nullptr, 0);
  if (!deferred_.empty()) [[unlikely]]
    post_deferred();
}

std::string OfiEndpoint::describe(std::int32_t status) const {
  std::string text = fi_strerror(status);
  if (status == last_error_ && !last_error_text_.empty()) text += " (" + last_error_text_ + ")";
  return text;
}

}  // namespace uniperf::ofi
