// The `template` plugin: the one to copy when you add a transport.
//
// It is a real, working transport, kept small on purpose: "loopback" moves
// bytes between the two sides of ONE process (the conformance suite runs
// both sides of every config in one process, on two threads). Two-sided
// sends are copied straight into the receive the peer posted; writes and
// reads are a memcpy to or from the peer's buffer, which lives in the same
// address space. Every file a real plugin has is here in miniature:
//
//   Plugin    name, versions, declared options, probe(), open()
//   Context   capabilities() as data, register_memory(), connect()
//   Endpoint  post, post_recv, poll, wait, progress, import_region, describe
//
// Read framework/include/uniperf/plugin.hpp first: it is the contract, and
// the comments below only point at the parts of it each piece keeps. The
// scaffolding (rings, in-order retirement, the connect-time outcome
// exchange, blobs) comes from the optional <uniperf/plugin_support.hpp>.
//
// To start a new plugin: copy this directory to plugins/<name>/, rename the
// file and the CMake target, make name() return <name> (the loader refuses a
// plugin whose name() is not its file's stem), replace the Link with your
// transport's objects, and declare in capabilities() exactly what works.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>

namespace uniperf::loopback {
namespace {

/// Completion::status values this plugin produces (describe() names them).
constexpr std::int32_t kStatusTruncated = 1;

// ---------------------------------------------------------------------------
// The "wire": what a hardware transport has in its NIC and driver.
// ---------------------------------------------------------------------------

/// A single-producer single-consumer queue between the two sides' threads.
/// (plugin_support's CompletionRing is for one thread; this one publishes
/// with release/acquire so the consumer sees what the producer wrote.)
template <class T>
class SpscQueue {
 public:
  explicit SpscQueue(std::size_t capacity) : slots_(std::bit_ceil(capacity)) {}

  bool push(const T& value) {
    const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_acquire) == slots_.size()) return false;
    slots_[tail & (slots_.size() - 1)] = value;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  /// The oldest element, or nullptr; pop() it once used.
  const T* front() const {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return nullptr;
    return &slots_[head & (slots_.size() - 1)];
  }
  void pop() { head_.store(head_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

 private:
  std::vector<T> slots_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

/// A receive the target posted, as the sender sees it.
struct PostedReceive {
  std::uint64_t id = 0;
  std::byte* buffer = nullptr;
  std::uint32_t capacity = 0;
};

/// A message that landed in a posted receive, as the target learns it.
struct Arrival {
  std::uint64_t id = 0;  // the receive's id
  std::uint32_t length = 0;
  std::int32_t status = 0;
};

/// One direction of a connection: the target publishes its receives, the
/// sender consumes them in order and reports what it put in each.
struct Direction {
  explicit Direction(std::size_t depth) : receives(depth), arrivals(depth) {}
  SpscQueue<PostedReceive> receives;  // target -> sender
  SpscQueue<Arrival> arrivals;        // sender -> target
};

/// The connection both endpoints share: direction[r] carries what rank r sends.
struct Link {
  explicit Link(std::size_t depth) : direction{Direction(depth), Direction(depth)} {}
  Direction direction[2];
};

/// Where the responder leaves a Link for the initiator to pick up by token:
/// the "address" a real transport would send (a QPN, a worker address).
class Rendezvous {
 public:
  static Rendezvous& instance() {
    static Rendezvous rendezvous;
    return rendezvous;
  }
  std::uint64_t publish(std::shared_ptr<Link> link) {
    const std::lock_guard lock(mutex_);
    links_[++last_token_] = std::move(link);
    return last_token_;
  }
  std::shared_ptr<Link> take(std::uint64_t token) {
    const std::lock_guard lock(mutex_);
    auto it = links_.find(token);
    if (it == links_.end()) return nullptr;
    auto link = std::move(it->second);
    links_.erase(it);
    return link;
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<Link>> links_;
  std::uint64_t last_token_ = 0;
};

// ---------------------------------------------------------------------------
// Memory: nothing to register; the peer's buffer is addressed directly.
// ---------------------------------------------------------------------------

class LoopbackMemory final : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  // A real transport returns its rkey here; the engine ships it with the
  // address to the peer's import_region().
  Bytes remote_key() const override { return {}; }
};

// ---------------------------------------------------------------------------
// Endpoint: the hot path (plugin.hpp "Hot-path rules": no allocation, no
// logging, no blocking outside wait(), failures through Completion::status).
// ---------------------------------------------------------------------------

class LoopbackEndpoint final : public Endpoint {
 public:
  LoopbackEndpoint(std::shared_ptr<Link> link, int rank, const EndpointParams& params)
      : link_(std::move(link)),
        out_(link_->direction[rank]),
        in_(link_->direction[1 - rank]),
        // Everything is sized here, on the setup path, from the depths the
        // engine promises never to exceed.
        sends_(params.send_depth),
        waiting_(params.send_depth),
        completions_(std::size_t{params.send_depth} + params.recv_depth) {}

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> /*key*/) override {
    return std::make_unique<RemoteRegion>(address, length);
  }

  void post(const WorkRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {  // post_list: emulated, a loop
      const WorkRequest& wr = requests[i];
      if (sends_.full()) [[unlikely]] {
        throw TransportError("template: more requests outstanding than send_depth allows");
      }
      // Every request takes a slot in posting order, signaled or not: the
      // retirement then reports only signaled (or failed) ones, and only
      // after every earlier one finished (plugin.hpp "Unsignaled posts").
      Slot& slot = sends_.post(wr.id, (wr.flags & WorkRequest::kSignaled) != 0);
      std::byte* local = static_cast<std::byte*>(wr.local->address()) + wr.local_offset;
      switch (wr.op) {
        case Op::write:
          std::memcpy(remote(wr), local, wr.length);
          slot.done = true;
          break;
        case Op::read:
          std::memcpy(local, remote(wr), wr.length);
          slot.done = true;
          break;
        case Op::send:
          // Delivered into the peer's oldest posted receive; when it has
          // none yet, the send waits (the receiver-not-ready case) and the
          // next poll() retries. Its buffer stays the engine's until then.
          waiting_.push_slot() = Waiting{&slot, local, wr.length};
          break;
        default:
          // capabilities() declares no other op, so the engine never posts
          // one; fail the request rather than guess.
          slot.status = kStatusUnsupportedOp;
          slot.done = true;
          break;
      }
    }
    deliver();
  }

  void post_recv(const RecvRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {
      const RecvRequest& r = requests[i];
      const PostedReceive posted{r.id, static_cast<std::byte*>(r.local->address()) + r.offset,
                                 r.length};
      if (!in_.receives.push(posted)) [[unlikely]] {
        throw TransportError("template: more receives posted than recv_depth allows");
      }
    }
  }

  std::size_t poll(Completion* out, std::size_t max) override {
    deliver();
    // Receives: the peer filled them in the order they were posted.
    while (!completions_.full()) {
      const Arrival* arrival = in_.arrivals.front();
      if (arrival == nullptr) break;
      completions_.push_slot() =
          Completion{arrival->id, CompletionType::recv, arrival->status, arrival->length, 0};
      in_.arrivals.pop();
    }
    sends_.retire([this](const Slot& slot) {
      return completions_.push(Completion{slot.id, CompletionType::send, slot.status, 0, 0});
    });
    return completions_.pop_into(out, max);
  }

  bool wait(std::chrono::milliseconds /*timeout*/, std::uint32_t /*threshold*/) override {
    // completion_events is Support::none, so the engine never calls this.
    throw TransportError("template: wait() without completion events");
  }

  void progress() override {
    // target_progress is false: one-sided ops land without the target.
    // Pending sends still move, which keeps a peer that only progresses
    // from stalling our sends.
    deliver();
  }

  std::string describe(std::int32_t status) const override {
    switch (status) {
      case kStatusTruncated:
        return "message longer than the posted receive (truncated)";
      case kStatusUnsupportedOp:
        return "operation not offered by the template plugin";
      default:
        return "status " + std::to_string(status);
    }
  }

 private:
  static constexpr std::int32_t kStatusUnsupportedOp = 2;

  /// What Retirement needs per request (id, signaled, done, status).
  struct Slot {
    std::uint64_t id = 0;
    std::int32_t status = 0;
    bool signaled = false;
    bool done = true;
  };
  /// A send whose payload has not been delivered yet.
  struct Waiting {
    Slot* slot = nullptr;
    const std::byte* payload = nullptr;
    std::uint32_t length = 0;
  };

  static std::byte* remote(const WorkRequest& wr) {
    return reinterpret_cast<std::byte*>(wr.remote->address() + wr.remote_offset);
  }

  /// Copies waiting sends, oldest first, into the peer's posted receives.
  void deliver() {
    while (!waiting_.empty()) {
      const PostedReceive* receive = out_.receives.front();
      if (receive == nullptr) return;  // the peer has not posted one yet
      Waiting& send = waiting_.front();
      const std::uint32_t copied = std::min(send.length, receive->capacity);
      std::memcpy(receive->buffer, send.payload, copied);
      const std::int32_t status = copied < send.length ? kStatusTruncated : 0;
      const std::uint64_t id = receive->id;
      // The receive leaves its queue before its arrival is published: the
      // peer re-posts as soon as it polls the arrival, and the other order
      // let that re-post find the queue still full ("more receives posted
      // than recv_depth allows", about once in 15 conformance runs).
      out_.receives.pop();
      // Cannot fail: posted-but-undelivered receives plus unpolled arrivals
      // never exceed the depth both queues have.
      static_cast<void>(out_.arrivals.push(Arrival{id, copied, status}));
      send.slot->status = status;
      send.slot->done = true;
      waiting_.pop();
    }
  }

  std::shared_ptr<Link> link_;  // keeps both directions alive while either side lives
  Direction& out_;
  Direction& in_;
  support::Retirement<Slot> sends_;
  support::CompletionRing<Waiting> waiting_;
  support::CompletionRing<Completion> completions_;
};

// ---------------------------------------------------------------------------
// Context: capabilities as data, memory, connect.
// ---------------------------------------------------------------------------

/// What each side says in the first connect step.
struct Hello {
  std::int64_t pid = 0;
  std::uint32_t send_depth = 0;
  std::uint32_t recv_depth = 0;
};

class LoopbackContext final : public Context {
 public:
  explicit LoopbackContext(std::size_t max_message) : max_message_(max_message) {}

  Capabilities capabilities() const override {
    // Declare exactly what works: the engine SKIPs the rest with a reason
    // naming the missing capability, and conformance checks both ways.
    Capabilities caps;
    caps.set(Op::send, Support::native);
    caps.set(Op::write, Support::native);
    caps.set(Op::read, Support::native);
    // write_imm, fetch_add, cswap: Support::none.
    caps.selective_completion = Support::emulated;  // Retirement hides unsignaled ones
    caps.completion_events = Support::none;         // no wait object to sleep on
    caps.post_list = Support::emulated;             // post() loops
    caps.max_inline = 0;
    caps.max_message = max_message_;
    caps.target_progress = false;
    caps.ordered_write_visibility = false;  // memcpy promises no byte order
    caps.thread_safe_endpoints = true;      // endpoints share nothing but the Rendezvous
    // Queue limits: the largest send_depth / recv_depth connect() can honour.
    // The engine SKIPs a test that needs more (naming window or rx_depth)
    // instead of handing connect() a depth the transport must refuse. This
    // loopback sizes its rings from the params, so it has none (0); a real
    // transport reports its queue sizes (fi_info tx_attr/rx_attr->size,
    // max_qp_wr, ...), never a guess.
    caps.max_send_depth = 0;
    caps.max_recv_depth = 0;
    // A request completes once its bytes are in the peer's memory, so the
    // default Endpoint::flush() (true at once) is the truth. A transport
    // whose completions come earlier (a buffered copy, a socket) overrides
    // flush() to ask it, or leaves this false: stream_end: delivered is
    // then SKIPPED.
    caps.delivery_fence = true;
    return caps;
  }

  std::string device() const override { return "in-process loopback"; }

  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<LoopbackMemory>(address, length);
  }

  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    // Step 1: both sides say who they are. exchange_step() ends BOTH sides
    // with the same kind of error when either side's step throws: an
    // Unsupported on one side is an Unsupported (a SKIP) on the other.
    const Hello mine{::getpid(), params.send_depth, params.recv_depth};
    const auto peer = support::from_blob<Hello>(
        support::exchange_step(channel, "template", [&] { return support::to_blob(mine); }),
        "template", "hello");
    // Both sides see the same pids, so both throw the same Unsupported.
    if (peer.pid != mine.pid) {
      throw Unsupported(
          "template: the loopback transport joins two sides of one process (the conformance "
          "suite); these sides run in two processes");
    }
    // Step 2: the responder creates the link and sends its token; the
    // initiator picks it up. A real transport sends its addresses here.
    const std::size_t depth =
        std::max({mine.send_depth, mine.recv_depth, peer.send_depth, peer.recv_depth, 1u});
    std::shared_ptr<Link> link;
    const Bytes answer = support::exchange_step(channel, "template", [&] {
      if (channel.rank() == 0) return Bytes{};
      link = std::make_shared<Link>(depth);
      return support::to_blob(Rendezvous::instance().publish(link));
    });
    if (channel.rank() == 0) {
      link = Rendezvous::instance().take(
          support::from_blob<std::uint64_t>(answer, "template", "link token"));
    }
    // Step 3: the initiator says whether it found the link, so that a
    // failure ends both sides alike instead of leaving one to time out.
    support::exchange_outcome(
        channel, "template",
        link ? std::exception_ptr()
             : std::make_exception_ptr(TransportError("template: the responder's link is gone")));
    return std::make_unique<LoopbackEndpoint>(std::move(link), channel.rank(), params);
  }

 private:
  std::size_t max_message_;
};

// ---------------------------------------------------------------------------
// Plugin: what the loader sees.
// ---------------------------------------------------------------------------

class TemplatePlugin final : public Plugin {
 public:
  // Must equal the file stem: libuniperf-template.so.
  std::string name() const override { return "template"; }
  std::string version() const override { return "0.1.0"; }
  std::string library_version() const override { return "none (in-process loopback)"; }
  std::string description() const override {
    return "in-process loopback: the plugin to copy (plugins/template); conformance only";
  }

  std::vector<OptionSpec> options() const override {
    // Declared options are validated by the loader (type, choices, range)
    // with file:line before open() sees them.
    return {
        {"max_message",
         OptionType::size,
         "1M",
         "largest message the transport accepts",
         {},
         1,
         std::int64_t{1} << 30},
    };
  }

  // Cheap: nothing to find. A real plugin checks that its library or device
  // is there and returns the reason when not.
  std::string probe() const override { return ""; }

  std::unique_ptr<Context> open(const Options& options) override {
    return std::make_unique<LoopbackContext>(options.size("max_message"));
  }
};

}  // namespace
}  // namespace uniperf::loopback

// The exported entry: ABI version and type-size fingerprint, checked by the
// loader before it calls anything here.
UNIPERF_PLUGIN(uniperf::loopback::TemplatePlugin)
