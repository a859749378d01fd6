// The `ucx` plugin: UCX's UCP layer. Sends are tagged messages (one tag per
// endpoint index, so receives match the endpoint they were posted for);
// write, read and atomics are UCP RMA/AMO on a packed remote key.
//
// UCP has no unsignaled operations: every request completes. The plugin
// hides the completions the engine did not ask for (selective completion is
// `emulated`) and releases a signaled completion only once it and every
// earlier request of its endpoint are done, as the plugin specification asks.
#include <uniperf/plugin.hpp>

#include <ucp/api/ucp.h>

#include <poll.h>

#include <chrono>
#include <cstring>
#include <vector>

namespace uniperf::ucx {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr ucp_tag_t kTagMask = ~ucp_tag_t{0};
constexpr ucp_tag_t kTagBase = 0x756e6970ULL << 32;   // "unip": the endpoint index goes below
constexpr ucp_tag_t kHelloTag = 0x68656c6fULL << 32;  // "helo": wire-up, never matches data

std::string status_text(ucs_status_t status) { return ucs_status_string(status); }

void check(ucs_status_t status, const std::string& what) {
  if (status != UCS_OK) throw TransportError("ucx: " + what + ": " + status_text(status));
}

class UcxContext;

/// A request tracked until completion. Slots live in a ring indexed by the
/// endpoint's request sequence, so callbacks find them without allocation.
struct OpSlot {
  class UcxEndpoint* endpoint = nullptr;
  std::uint64_t id = 0;
  std::uint64_t operand = 0;  // atomics read their operand from here until completion
  std::uint32_t length = 0;
  ucs_status_t status = UCS_OK;
  bool signaled = false;
  bool done = true;
  void* request = nullptr;  // receives: kept to cancel at teardown
  ucp_tag_recv_info_t info{};  // receives completed in place report here
};

class UcxMemory final : public MemoryRegion {
 public:
  /// Registers the engine's memory.
  UcxMemory(ucp_context_h context, void* address, std::size_t length)
      : UcxMemory(context, map(context, address, length, 0)) {}

  /// Lets UCP allocate: on shared-memory transports the peer can then map
  /// the region and a put becomes a direct copy (UCP's rkey_ptr path), as in
  /// ucx_perftest, which measures with UCP-allocated memory too.
  static std::unique_ptr<UcxMemory> allocate(ucp_context_h context, std::size_t length) {
    auto memory = std::unique_ptr<UcxMemory>(
        new UcxMemory(context, map(context, nullptr, length, UCP_MEM_MAP_ALLOCATE)));
    std::memset(memory->address(), 0, memory->length());
    return memory;
  }
  ~UcxMemory() override { ucp_mem_unmap(context_, memh_); }

 private:
  struct Mapped {
    ucp_mem_h memh;
    void* address;
    std::size_t length;
  };

  static Mapped map(ucp_context_h context, void* address, std::size_t length, unsigned flags) {
    ucp_mem_map_params_t params{};
    params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                        UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    params.address = address;
    params.length = length;
    params.flags = flags;
    ucp_mem_h memh = nullptr;
    check(ucp_mem_map(context, &params, &memh), "cannot map memory");
    ucp_mem_attr_t attr{};
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    check(ucp_mem_query(memh, &attr), "cannot query mapped memory");
    return {memh, attr.address, attr.length};
  }

  UcxMemory(ucp_context_h context, Mapped mapped)
      : MemoryRegion(mapped.address, mapped.length), context_(context), memh_(mapped.memh) {}

 public:

  Bytes remote_key() const override {
    void* packed = nullptr;
    std::size_t size = 0;
    check(ucp_rkey_pack(context_, memh_, &packed, &size), "cannot pack the remote key");
    Bytes key(static_cast<std::byte*>(packed), static_cast<std::byte*>(packed) + size);
    ucp_rkey_buffer_release(packed);
    return key;
  }

 private:
  ucp_context_h context_;
  ucp_mem_h memh_ = nullptr;
};

class UcxRemote final : public RemoteRegion {
 public:
  UcxRemote(std::uint64_t address, std::uint64_t length, ucp_rkey_h rkey)
      : RemoteRegion(address, length), rkey_(rkey) {}
  ~UcxRemote() override { ucp_rkey_destroy(rkey_); }
  ucp_rkey_h rkey() const { return rkey_; }

 private:
  ucp_rkey_h rkey_;
};

class UcxEndpoint final : public Endpoint {
 public:
  UcxEndpoint(ucp_worker_h worker, ucp_ep_h ep, const EndpointParams& params)
      : worker_(worker), ep_(ep), tag_(kTagBase | params.index) {
    sends_.resize(params.send_depth + 1);
    receives_.resize(params.recv_depth + 1);
    completions_.resize(params.send_depth + params.recv_depth + 2);
  }

  ~UcxEndpoint() override {
    // Posted receives would outlive the endpoint: cancel them, then close.
    for (auto& slot : receives_) {
      if (!slot.done && slot.request != nullptr) ucp_request_cancel(worker_, slot.request);
    }
    const auto deadline = Clock::now() + 2s;
    while (Clock::now() < deadline && !all_receives_done()) ucp_worker_progress(worker_);
    // A flushing close; both sides close at the same time and progress.
    ucp_request_param_t param{};
    void* request = ucp_ep_close_nbx(ep_, &param);
    if (UCS_PTR_IS_PTR(request)) {
      while (Clock::now() < deadline && ucp_request_check_status(request) == UCS_INPROGRESS) {
        ucp_worker_progress(worker_);
      }
      ucp_request_free(request);
    }
  }

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override {
    ucp_rkey_h rkey = nullptr;
    check(ucp_ep_rkey_unpack(ep_, key.data(), &rkey), "cannot unpack the peer's remote key");
    return std::make_unique<UcxRemote>(address, length, rkey);
  }

  void post(const WorkRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) start(requests[i]);
  }

  void post_recv(const RecvRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {
      const RecvRequest& r = requests[i];
      OpSlot& slot = receives_[recv_posted_++ % receives_.size()];
      slot = OpSlot{this, r.id, 0, 0, UCS_OK, true, false, nullptr};
      ucp_request_param_t param{};
      param.op_attr_mask =
          UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO;
      param.cb.recv = &UcxEndpoint::on_receive;
      param.user_data = &slot;
      param.recv_info.tag_info = &slot.info;
      void* buffer = static_cast<std::byte*>(r.local->address()) + r.offset;
      ucs_status_ptr_t request = ucp_tag_recv_nbx(worker_, buffer, r.length, tag_, kTagMask, &param);
      if (UCS_PTR_IS_ERR(request)) {
        slot.status = UCS_PTR_STATUS(request);
        slot.done = true;
      } else if (request == nullptr) {
        // Matched an unexpected message at once: no callback comes.
        slot.length = static_cast<std::uint32_t>(slot.info.length);
        slot.done = true;
      } else {
        slot.request = request;
      }
    }
  }

  std::size_t poll(Completion* out, std::size_t max) override {
    ucp_worker_progress(worker_);
    retire();
    std::size_t n = 0;
    while (n < max && completion_head_ != completion_tail_) {
      out[n++] = completions_[completion_head_];
      completion_head_ = next_completion(completion_head_);
    }
    return n;
  }

  bool wait(std::chrono::milliseconds timeout, std::uint32_t) override {
    if (ucp_worker_progress(worker_) != 0) return true;
    const ucs_status_t armed = ucp_worker_arm(worker_);
    if (armed == UCS_ERR_BUSY) return true;  // events already pending
    check(armed, "cannot arm the worker for events");
    int fd = -1;
    check(ucp_worker_get_efd(worker_, &fd), "no event descriptor");
    pollfd pfd{fd, POLLIN, 0};
    return ::poll(&pfd, 1, static_cast<int>(timeout.count())) > 0;
  }

  void progress() override { ucp_worker_progress(worker_); }

  std::string describe(std::int32_t status) const override {
    return status_text(static_cast<ucs_status_t>(status));
  }

 private:
  void start(const WorkRequest& wr) {
    OpSlot& slot = sends_[send_posted_++ % sends_.size()];
    slot = OpSlot{this, wr.id, wr.compare_add, wr.length, UCS_OK,
                  (wr.flags & WorkRequest::kSignaled) != 0, false, nullptr};
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &UcxEndpoint::on_send;
    param.user_data = &slot;
    auto* local = static_cast<std::byte*>(wr.local->address()) + wr.local_offset;
    const std::uint64_t remote_address = wr.remote ? wr.remote->address() + wr.remote_offset : 0;
    ucp_rkey_h rkey = wr.remote ? static_cast<UcxRemote*>(wr.remote)->rkey() : nullptr;
    ucs_status_ptr_t request = nullptr;
    switch (wr.op) {
      case Op::send:
        request = ucp_tag_send_nbx(ep_, local, wr.length, tag_, &param);
        break;
      case Op::write:
        request = ucp_put_nbx(ep_, local, wr.length, remote_address, rkey, &param);
        break;
      case Op::read:
        request = ucp_get_nbx(ep_, local, wr.length, remote_address, rkey, &param);
        break;
      case Op::fetch_add:
      case Op::cswap: {
        // The result lands in the local buffer; for cswap it first holds the
        // value to swap in (UCP's conditional-swap contract).
        if (wr.op == Op::cswap) std::memcpy(local, &wr.swap, sizeof wr.swap);
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.datatype = ucp_dt_make_contig(8);
        param.reply_buffer = local;
        request = ucp_atomic_op_nbx(ep_, wr.op == Op::cswap ? UCP_ATOMIC_OP_CSWAP : UCP_ATOMIC_OP_ADD,
                                    &slot.operand, 1, remote_address, rkey, &param);
        break;
      }
      case Op::write_imm:
        slot.status = UCS_ERR_UNSUPPORTED;  // not offered in the capabilities
        break;
    }
    if (UCS_PTR_IS_ERR(request)) {
      slot.status = UCS_PTR_STATUS(request);
      slot.done = true;
    } else if (request == nullptr) {
      slot.done = true;  // completed in place
    }
    retire();
  }

  static void on_send(void* request, ucs_status_t status, void* user_data) {
    auto* slot = static_cast<OpSlot*>(user_data);
    slot->status = status;
    slot->done = true;
    ucp_request_free(request);
  }

  static void on_receive(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                         void* user_data) {
    auto* slot = static_cast<OpSlot*>(user_data);
    slot->status = status;
    slot->length = status == UCS_OK ? static_cast<std::uint32_t>(info->length) : 0;
    slot->done = true;
    slot->request = nullptr;
    ucp_request_free(request);
  }

  /// Releases finished requests in posting order.
  void retire() {
    while (send_retired_ < send_posted_) {
      OpSlot& slot = sends_[send_retired_ % sends_.size()];
      if (!slot.done) break;
      if (slot.signaled || slot.status != UCS_OK) {
        push(Completion{slot.id, CompletionType::send, slot.status, slot.length, 0});
      }
      ++send_retired_;
    }
    while (recv_retired_ < recv_posted_) {
      OpSlot& slot = receives_[recv_retired_ % receives_.size()];
      if (!slot.done) break;
      if (slot.status != UCS_ERR_CANCELED) {
        push(Completion{slot.id, CompletionType::recv, slot.status, slot.length, 0});
      }
      ++recv_retired_;
    }
  }

  void push(const Completion& c) {
    completions_[completion_tail_] = c;
    completion_tail_ = next_completion(completion_tail_);
  }
  std::size_t next_completion(std::size_t i) const { return i + 1 == completions_.size() ? 0 : i + 1; }
  bool all_receives_done() const {
    for (const auto& slot : receives_) {
      if (!slot.done) return false;
    }
    return true;
  }

  ucp_worker_h worker_;
  ucp_ep_h ep_;
  ucp_tag_t tag_;
  std::vector<OpSlot> sends_;
  std::vector<OpSlot> receives_;
  std::vector<Completion> completions_;
  std::uint64_t send_posted_ = 0, send_retired_ = 0;
  std::uint64_t recv_posted_ = 0, recv_retired_ = 0;
  std::size_t completion_head_ = 0, completion_tail_ = 0;
};

struct Settings {
  std::string transports;
  std::string devices;
  std::string rndv_threshold;
};

class UcxContext final : public Context {
 public:
  explicit UcxContext(const Settings& settings) : settings_(settings) {
    ucp_config_t* config = nullptr;
    if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) throw Unavailable("ucx: cannot read the UCX configuration");
    auto modify = [&](const char* name, const std::string& value) {
      if (value.empty()) return;
      const ucs_status_t status = ucp_config_modify(config, name, value.c_str());
      if (status != UCS_OK) {
        ucp_config_release(config);
        throw OptionError(std::string("ucx: ") + name + "=" + value + ": " + status_text(status));
      }
    };
    modify("TLS", settings.transports);
    modify("NET_DEVICES", settings.devices);
    modify("RNDV_THRESH", settings.rndv_threshold);

    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
    const ucs_status_t status = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (status != UCS_OK) throw Unavailable("ucx: ucp_init failed: " + status_text(status));

    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (const ucs_status_t s = ucp_worker_create(context_, &worker_params, &worker_); s != UCS_OK) {
      ucp_cleanup(context_);
      throw Unavailable("ucx: cannot create a worker: " + status_text(s));
    }
  }

  ~UcxContext() override {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
  }

  Capabilities capabilities() const override {
    Capabilities caps;
    for (Op op : {Op::send, Op::write, Op::read, Op::fetch_add, Op::cswap}) caps.set(op, Support::native);
    caps.selective_completion = Support::emulated;
    caps.completion_events = Support::native;
    caps.post_list = Support::emulated;
    // UCP chooses short/eager/rendezvous itself; there is no inline knob.
    caps.max_inline = 0;
    // Software transports (shm, tcp) move one-sided data only while the
    // target's worker progresses.
    caps.target_progress = true;
    // A put is copied front to back, so the last byte lands last; this is
    // what ucx_perftest's own put latency relies on.
    caps.ordered_write_visibility = true;
    caps.thread_safe_endpoints = false;  // one single-threaded worker
    return caps;
  }

  void hello(ucp_ep_h ep, std::uint32_t index) {
    const ucp_tag_t tag = kHelloTag | index;
    std::uint64_t mine = index, theirs = ~std::uint64_t{0};
    ucp_request_param_t param{};
    void* receive = ucp_tag_recv_nbx(worker_, &theirs, sizeof theirs, tag, kTagMask, &param);
    void* send = ucp_tag_send_nbx(ep, &mine, sizeof mine, tag, &param);
    if (UCS_PTR_IS_ERR(receive)) check(UCS_PTR_STATUS(receive), "wire-up receive failed");
    if (UCS_PTR_IS_ERR(send)) check(UCS_PTR_STATUS(send), "wire-up send failed");
    const auto deadline = Clock::now() + 10s;
    auto pending = [](void* request) {
      return UCS_PTR_IS_PTR(request) && ucp_request_check_status(request) == UCS_INPROGRESS;
    };
    while (pending(receive) || pending(send)) {
      ucp_worker_progress(worker_);
      if (Clock::now() > deadline) throw TransportError("ucx: wire-up with the peer did not finish in 10 s");
    }
    if (UCS_PTR_IS_PTR(receive)) ucp_request_free(receive);
    if (UCS_PTR_IS_PTR(send)) ucp_request_free(send);
    if (theirs != index) throw TransportError("ucx: the peer connected another endpoint");
  }

  std::string device() const override {
    return "UCX_TLS=" + (settings_.transports.empty() ? std::string("default") : settings_.transports) +
           (settings_.devices.empty() ? "" : " NET_DEVICES=" + settings_.devices);
  }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<UcxMemory>(context_, address, length);
  }

  std::unique_ptr<MemoryRegion> allocate_memory(std::size_t length) override {
    return UcxMemory::allocate(context_, length);
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    check(ucp_worker_get_address(worker_, &address, &length), "cannot get the worker address");
    const Bytes mine(reinterpret_cast<std::byte*>(address), reinterpret_cast<std::byte*>(address) + length);
    ucp_worker_release_address(worker_, address);
    const Bytes theirs = channel.exchange(mine);

    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address = reinterpret_cast<const ucp_address_t*>(theirs.data());
    ucp_ep_h ep = nullptr;
    check(ucp_ep_create(worker_, &ep_params, &ep), "cannot create an endpoint to the peer");
    auto endpoint = std::make_unique<UcxEndpoint>(worker_, ep, params);

    // Complete the wire-up in both directions before the engine times
    // anything: each side sends a hello over the new endpoint and progresses
    // until the peer's hello arrived. Both sides progress at once, so neither
    // waits on a worker that is blocked elsewhere.
    hello(ep, params.index);
    channel.barrier();
    return endpoint;
  }

 private:
  Settings settings_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
};

class UcxPlugin final : public Plugin {
 public:
  std::string name() const override { return "ucx"; }
  std::string version() const override { return "0.1.0"; }
  std::string library_version() const override { return std::string("UCX ") + ucp_get_version_string(); }
  std::string description() const override { return "UCX UCP: tagged send/recv, put, get, atomics"; }
  std::vector<OptionSpec> options() const override {
    return {
        {"transports", OptionType::string, "", "UCX_TLS: e.g. posix,self | tcp,self | rc_verbs,ud_verbs"},
        {"devices", OptionType::string, "", "UCX_NET_DEVICES: e.g. rxe0:1, lo"},
        {"rndv_threshold", OptionType::string, "", "UCX_RNDV_THRESH: eager/rendezvous switch, e.g. 8K"},
        {"api", OptionType::string, "tag", "two-sided API for op send: tag"},
    };
  }
  std::string probe() const override {
    try {
      UcxContext probe_context{Settings{}};
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  std::unique_ptr<Context> open(const Options& options) override {
    if (options.string("api") != "tag") {
      throw OptionError("ucx: api '" + options.string("api") + "' is not supported (tag only)");
    }
    Settings s{options.string("transports"), options.string("devices"), options.string("rndv_threshold")};
    return std::make_unique<UcxContext>(s);
  }
};

}  // namespace
}  // namespace uniperf::ucx

UNIPERF_PLUGIN(uniperf::ucx::UcxPlugin)
