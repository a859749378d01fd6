#include "contract_checker.hpp"

#include <unistd.h>

#include <cstdint>
#include <deque>
#include <sstream>
#include <unordered_map>

namespace uniperf::conformance {
namespace {

/// Violations beyond this many are counted, not kept: one broken rule in a
/// loop would otherwise repeat a million times.
constexpr std::size_t kMaxViolationsKept = 64;

bool carries_payload(Op op) {
  return op == Op::send || op == Op::write || op == Op::write_imm;
}

class CheckedRegion : public MemoryRegion {
 public:
  explicit CheckedRegion(std::unique_ptr<MemoryRegion> inner)
      : MemoryRegion(inner->address(), inner->length()), inner_(std::move(inner)) {}
  Bytes remote_key() const override { return inner_->remote_key(); }
  MemoryRegion* inner() const { return inner_.get(); }

 private:
  std::unique_ptr<MemoryRegion> inner_;
};

class CheckedRemote : public RemoteRegion {
 public:
  explicit CheckedRemote(std::unique_ptr<RemoteRegion> inner)
      : RemoteRegion(inner->address(), inner->length()), inner_(std::move(inner)) {}
  RemoteRegion* inner() const { return inner_.get(); }

 private:
  std::unique_ptr<RemoteRegion> inner_;
};

class CheckedEndpoint : public Endpoint {
 public:
  CheckedEndpoint(std::unique_ptr<Endpoint> inner, const Capabilities& caps,
                  const EndpointParams& params, std::shared_ptr<ContractLog> log)
      : inner_(std::move(inner)), caps_(caps), params_(params), log_(std::move(log)) {}

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override {
    auto inner = inner_->import_region(address, length, key);
    if (!inner) {
      log_->violation("import_region returned null");
      throw TransportError("import_region returned null");
    }
    return std::make_unique<CheckedRemote>(std::move(inner));
  }

  void post(const WorkRequest* requests, std::size_t count) override {
    if (count == 0) log_->violation("engine posted an empty chain");
    if (outstanding_.size() + count > params_.send_depth) {
      violation("engine exceeded send_depth " + std::to_string(params_.send_depth) + ": " +
                std::to_string(outstanding_.size()) + " outstanding + " + std::to_string(count) +
                " posted");
    }
    scratch_.assign(requests, requests + count);
    for (auto& wr : scratch_) {
      check_request(wr);
      outstanding_.push_back({wr.id, (wr.flags & WorkRequest::kSignaled) != 0});
      if (wr.local) wr.local = static_cast<CheckedRegion*>(wr.local)->inner();
      if (wr.remote) wr.remote = static_cast<CheckedRemote*>(wr.remote)->inner();
    }
    inner_->post(scratch_.data(), count);
  }

  void post_recv(const RecvRequest* requests, std::size_t count) override {
    if (posted_recvs_.size() + count > params_.recv_depth) {
      violation("engine exceeded recv_depth " + std::to_string(params_.recv_depth) + ": " +
                std::to_string(posted_recvs_.size()) + " posted + " + std::to_string(count));
    }
    recv_scratch_.assign(requests, requests + count);
    for (auto& rr : recv_scratch_) {
      if (rr.local == nullptr) {
        violation("receive without a local region");
        continue;
      }
      if (rr.offset + rr.length > rr.local->length()) {
        violation("receive range " + std::to_string(rr.offset) + "+" + std::to_string(rr.length) +
                  " outside its region of " + std::to_string(rr.local->length()) + " bytes");
      }
      if (!posted_recvs_.emplace(rr.id, rr.length).second) {
        violation("receive id " + std::to_string(rr.id) + " posted twice");
      }
      rr.local = static_cast<CheckedRegion*>(rr.local)->inner();
    }
    inner_->post_recv(recv_scratch_.data(), count);
  }

  std::size_t poll(Completion* out, std::size_t max) override {
    const std::size_t n = inner_->poll(out, max);
    if (n > max) violation("poll returned " + std::to_string(n) + " > max " + std::to_string(max));
    for (std::size_t i = 0; i < n && i < max; ++i) check_completion(out[i]);
    return n;
  }

  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override {
    log_->waited();
    if (!params_.completion_events || caps_.completion_events == Support::none) {
      violation("engine called wait() without completion_events");
    }
    return inner_->wait(timeout, threshold);
  }

  void progress() override { inner_->progress(); }
  std::string describe(std::int32_t status) const override { return inner_->describe(status); }
  bool flush() override {
    if (!caps_.delivery_fence) log_->violation("engine called flush() without delivery_fence");
    return inner_->flush();
  }

 private:
  struct Posted {
    std::uint64_t id;
    bool signaled;
  };

  void violation(std::string what) { log_->violation(std::move(what)); }

  void check_request(const WorkRequest& wr) {
    log_->attempted(wr.op);
    const auto op = std::string(to_string(wr.op));
    if (caps_.op(wr.op) == Support::none) violation("engine posted unadvertised op " + op);
    if (!(wr.flags & WorkRequest::kSignaled) && caps_.selective_completion == Support::none) {
      violation("engine suppressed a completion without selective_completion");
    }
    if (wr.flags & WorkRequest::kInline) {
      if (!carries_payload(wr.op)) violation("engine posted " + op + " inline");
      if (wr.length > caps_.max_inline || wr.length > params_.max_inline) {
        violation("engine posted " + std::to_string(wr.length) + " bytes inline; max_inline " +
                  std::to_string(caps_.max_inline) + ", endpoint " +
                  std::to_string(params_.max_inline));
      }
    }
    if (caps_.max_message != 0 && wr.length > caps_.max_message) {
      violation("engine posted " + std::to_string(wr.length) + " bytes > max_message " +
                std::to_string(caps_.max_message));
    }
    if (params_.max_message != 0 && wr.length > params_.max_message) {
      violation("engine posted " + std::to_string(wr.length) +
                " bytes > the endpoint's max_message " + std::to_string(params_.max_message));
    }
    if (is_atomic(wr.op) && wr.length != 8)
      violation(op + " of length " + std::to_string(wr.length));
    if (wr.local == nullptr) {
      violation(op + " without a local region");
    } else if (wr.local_offset + wr.length > wr.local->length()) {
      violation(op + " local range outside its region");
    }
    if (wr.op != Op::send) {
      if (wr.remote == nullptr) {
        violation(op + " without a remote region");
      } else if (wr.remote_offset + wr.length > wr.remote->length()) {
        violation(op + " remote range " + std::to_string(wr.remote_offset) + "+" +
                  std::to_string(wr.length) + " outside the peer's region of " +
                  std::to_string(wr.remote->length()) + " bytes");
      }
      if (is_atomic(wr.op) && (wr.remote_offset % 8 != 0)) violation(op + " target unaligned");
    }
  }

  void check_completion(const Completion& c) {
    if (c.status != 0) return;  // the engine turns it into an error record
    if (c.type == CompletionType::recv) {
      auto it = posted_recvs_.find(c.id);
      if (it == posted_recvs_.end()) {
        violation("receive completion for id " + std::to_string(c.id) + " not posted");
        return;
      }
      if (c.length > it->second) {
        violation("receive completion of " + std::to_string(c.length) + " bytes into a " +
                  std::to_string(it->second) + "-byte buffer");
      }
      posted_recvs_.erase(it);
      return;
    }
    std::size_t k = 0;
    while (k < outstanding_.size() && outstanding_[k].id != c.id) ++k;
    if (k == outstanding_.size()) {
      violation("send completion for id " + std::to_string(c.id) +
                " that is not outstanding (never posted, completed twice, or completed after a "
                "later request's completion, which already covered it)");
      return;
    }
    if (!outstanding_[k].signaled) {
      violation("completion for unsignaled request id " + std::to_string(c.id));
    }
    outstanding_.erase(outstanding_.begin(), outstanding_.begin() + static_cast<long>(k) + 1);
  }

  std::unique_ptr<Endpoint> inner_;
  Capabilities caps_;
  EndpointParams params_;
  std::shared_ptr<ContractLog> log_;
  std::deque<Posted> outstanding_;
  std::unordered_map<std::uint64_t, std::uint32_t> posted_recvs_;
  std::vector<WorkRequest> scratch_;
  std::vector<RecvRequest> recv_scratch_;
};

class CheckedContext : public Context {
 public:
  CheckedContext(std::unique_ptr<Context> inner, std::shared_ptr<ContractLog> log)
      : inner_(std::move(inner)), log_(std::move(log)), caps_(inner_->capabilities()) {
    check_declared_capabilities();
  }

  Capabilities capabilities() const override {
    const Capabilities now = inner_->capabilities();
    if (!same(now, caps_)) log_->violation("capabilities changed during the context's life");
    return now;
  }
  std::string device() const override { return inner_->device(); }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    auto inner = inner_->register_memory(address, length);
    if (!inner) throw TransportError("register_memory returned null");
    if (inner->address() != address || inner->length() != length) {
      log_->violation("register_memory returned a region of another address or length");
    }
    return std::make_unique<CheckedRegion>(std::move(inner));
  }

  std::unique_ptr<MemoryRegion> allocate_memory(std::size_t length) override {
    auto inner = inner_->allocate_memory(length);
    if (!inner) return nullptr;  // the documented "engine allocates" answer
    if (inner->length() < length) log_->violation("allocate_memory returned a short region");
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    if (reinterpret_cast<std::uintptr_t>(inner->address()) % page != 0)
      log_->violation("allocate_memory returned a region that is not page aligned");
    return std::make_unique<CheckedRegion>(std::move(inner));
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    // The engine asks for no deeper queue than the plugin declared.
    if (caps_.max_send_depth != 0 && params.send_depth > caps_.max_send_depth) {
      log_->violation("engine asked for send_depth " + std::to_string(params.send_depth) +
                      " > max_send_depth " + std::to_string(caps_.max_send_depth));
    }
    if (caps_.max_recv_depth != 0 && params.recv_depth > caps_.max_recv_depth) {
      log_->violation("engine asked for recv_depth " + std::to_string(params.recv_depth) +
                      " > max_recv_depth " + std::to_string(caps_.max_recv_depth));
    }
    auto inner = inner_->connect(params, channel);
    if (!inner) throw TransportError("connect returned null");
    return std::make_unique<CheckedEndpoint>(std::move(inner), caps_, params, log_);
  }

 private:
  static bool same(const Capabilities& a, const Capabilities& b) {
    for (std::size_t i = 0; i < kOpCount; ++i) {
      if (a.ops[i] != b.ops[i]) return false;
    }
    return a.selective_completion == b.selective_completion &&
           a.completion_events == b.completion_events && a.post_list == b.post_list &&
           a.max_inline == b.max_inline && a.max_message == b.max_message &&
           a.target_progress == b.target_progress &&
           a.ordered_write_visibility == b.ordered_write_visibility &&
           a.thread_safe_endpoints == b.thread_safe_endpoints &&
           a.max_send_depth == b.max_send_depth && a.max_recv_depth == b.max_recv_depth;
  }

  // Declarations that contradict each other are bugs before any traffic.
  void check_declared_capabilities() {
    if (caps_.post_list == Support::none) {
      log_->violation("post_list is none, but the engine may always pass a chain (emulate it)");
    }
    if (caps_.ordered_write_visibility && caps_.op(Op::write) == Support::none) {
      log_->violation("ordered_write_visibility declared without write");
    }
    if (caps_.max_message != 0 && caps_.max_inline > caps_.max_message) {
      log_->violation("max_inline above max_message");
    }
  }

  std::unique_ptr<Context> inner_;
  std::shared_ptr<ContractLog> log_;
  Capabilities caps_;
};

}  // namespace

void ContractLog::violation(std::string what) {
  std::lock_guard lock(mutex_);
  if (violations_.size() < kMaxViolationsKept) {
    violations_.push_back(std::move(what));
  } else if (violations_.size() == kMaxViolationsKept) {
    violations_.push_back("... and more");
  }
}

std::vector<std::string> ContractLog::violations() const {
  std::lock_guard lock(mutex_);
  return violations_;
}

void ContractLog::reset() {
  std::lock_guard lock(mutex_);
  violations_.clear();
  for (auto& a : attempted_) a = false;
  waits_ = false;
}

CheckedPlugin::CheckedPlugin(Plugin& inner, std::shared_ptr<ContractLog> log)
    : inner_(inner), log_(std::move(log)), open_mutex_(std::make_shared<std::mutex>()) {}

std::unique_ptr<Context> CheckedPlugin::open(const Options& options) {
  std::lock_guard lock(*open_mutex_);
  auto inner = inner_.open(options);
  if (!inner) throw TransportError("open returned null");
  return std::make_unique<CheckedContext>(std::move(inner), log_);
}

}  // namespace uniperf::conformance
