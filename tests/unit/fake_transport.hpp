// An in-process fake transport for the engine's policy tests. Both sides of
// a test live in one process (two threads), so a RemoteRegion's address is
// directly usable: writes, reads and atomics are memcpy / plain arithmetic.
//
// It enforces the plugin contract (never more than send_depth outstanding,
// never more than recv_depth receives posted) and counts what the engine
// did, so tests can assert exact numbers: signaled posts, window depth,
// receive-queue level, replenish batches.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::testing {

struct FakeCounters {
  std::uint64_t posts = 0;            ///< post() calls
  std::uint64_t requests = 0;         ///< work requests posted
  std::uint64_t signaled = 0;         ///< with kSignaled
  std::uint64_t inline_requests = 0;  ///< with kInline
  std::uint64_t max_chain = 0;        ///< largest count in one post()
  std::uint64_t max_outstanding = 0;  ///< window depth reached
  std::uint64_t recv_posts = 0;       ///< post_recv() calls
  std::uint64_t receives_posted = 0;
  std::uint64_t max_recv_level = 0;
  std::uint64_t min_recv_level_after_start = UINT64_MAX;  ///< after the first post_recv
  std::vector<std::uint64_t> recv_batches;                ///< counts of post_recv calls, in order
  std::uint64_t progress_calls = 0;
  std::uint64_t waits = 0;
  std::uint64_t flush_calls = 0;  ///< Endpoint::flush() calls
  std::map<Op, std::uint64_t> ops;
  std::set<std::uint64_t> source_offsets;          ///< distinct WorkRequest::local_offset
  std::set<std::uint64_t> receive_offsets;         ///< distinct RecvRequest::offset
  std::map<std::uint32_t, std::uint64_t> lengths;  ///< work requests per WorkRequest::length
  /// Bytes that sends and writes carried which were not zero (the pattern,
  /// unless the send buffers were left untouched).
  std::uint64_t nonzero_payload_bytes = 0;
};

/// Messages in flight between the two fake endpoints of one index.
struct FakeWire {
  struct Message {
    std::vector<std::byte> data;
    std::uint32_t immediate = 0;
    bool has_data = true;  // false: write_imm notification only
  };
  /// A write that lands only when its target calls progress() at or after
  /// `due` (FakeContext::late_writes).
  struct LateWrite {
    std::byte* target = nullptr;
    std::vector<std::byte> data;
    std::chrono::steady_clock::time_point due;
  };
  std::mutex mutex;
  std::deque<Message> to_rank[2];
  std::deque<LateWrite> late_to_rank[2];
};

struct FakeFabric {
  std::mutex mutex;
  std::map<std::uint32_t, std::shared_ptr<FakeWire>> wires;
  std::mutex atomics;  // serialises atomics on target memory
  /// Each side's next wire. Both sides connect their endpoints in the same
  /// order (a test's flows one after the other, in every Context they
  /// open), so the n-th connect of each meets on the n-th wire: a later
  /// test never sees what an earlier one left on its wire, and two flows
  /// in Contexts of their own never share one.
  std::shared_ptr<FakeWire> next_wire(int rank) {
    std::lock_guard lock(mutex);
    auto& w = wires[connects[rank]++];
    if (!w) w = std::make_shared<FakeWire>();
    return w;
  }
  std::uint32_t connects[2] = {0, 0};
};

class FakeMemory final : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  Bytes remote_key() const override { return Bytes{std::byte{0x42}}; }
};

class FakeRemote final : public RemoteRegion {
 public:
  using RemoteRegion::RemoteRegion;
};

class FakeEndpoint final : public Endpoint {
 public:
  FakeEndpoint(std::shared_ptr<FakeWire> wire, FakeFabric& fabric, int rank,
               const EndpointParams& params, FakeCounters& counters, std::mutex& counters_mutex,
               std::uint64_t corrupt_every, bool reverse_atomics, std::uint32_t fail_receives_from,
               std::uint32_t stall_from = 0,
               std::chrono::milliseconds late_writes = std::chrono::milliseconds(0),
               std::size_t wire_capacity = 0, bool queued_tails = false)
      : wire_(std::move(wire)),
        fabric_(fabric),
        rank_(rank),
        params_(params),
        counters_(counters),
        counters_mutex_(counters_mutex),
        corrupt_every_(corrupt_every),
        reverse_atomics_(reverse_atomics),
        fail_receives_from_(fail_receives_from),
        stall_from_(stall_from),
        late_writes_(late_writes),
        wire_capacity_(wire_capacity),
        queued_tails_(queued_tails) {}

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override {
    if (key.size() != 1 || key[0] != std::byte{0x42}) throw TransportError("bad key");
    return std::make_unique<FakeRemote>(address, length);
  }

  void post(const WorkRequest* requests, std::size_t count) override {
    std::lock_guard counters_lock(counters_mutex_);
    ++counters_.posts;
    counters_.max_chain = std::max<std::uint64_t>(counters_.max_chain, count);
    for (std::size_t i = 0; i < count; ++i) {
      const WorkRequest& wr = requests[i];
      if (stall_from_ != 0 && wr.length >= stall_from_) stalled_ = true;
      ++posted_;
      const std::uint64_t outstanding = posted_ - covered_;
      ++counters_.requests;
      ++counters_.ops[wr.op];
      counters_.source_offsets.insert(wr.local_offset);
      ++counters_.lengths[wr.length];
      if (wr.op == Op::send || wr.op == Op::write) {
        const auto* payload = static_cast<const std::byte*>(wr.local->address()) + wr.local_offset;
        counters_.nonzero_payload_bytes += static_cast<std::uint64_t>(std::count_if(
            payload, payload + wr.length, [](std::byte b) { return b != std::byte{0}; }));
      }
      if (wr.flags & WorkRequest::kInline) ++counters_.inline_requests;
      if (outstanding > params_.send_depth) {
        throw std::logic_error("engine broke the contract: more than send_depth outstanding");
      }
      counters_.max_outstanding = std::max<std::uint64_t>(counters_.max_outstanding, outstanding);
      if (reverse_atomics_ && (wr.op == Op::fetch_add || wr.op == Op::cswap)) {
        deferred_atomics_.push_back(wr);
      } else {
        execute(wr);
      }
      if (wr.flags & WorkRequest::kSignaled) {
        ++counters_.signaled;
        // Once the engine has polled it, this completion covers every
        // request posted up to here.
        const Completion done{wr.id, CompletionType::send, 0, wr.length, 0};
        if (wire_capacity_ != 0) {
          outbox_.push_back({std::nullopt, Outgoing::Done{done, posted_}});
        } else {
          completions_.push_back(done);
          covers_.push_back(posted_);
        }
      }
    }
    flush_outbox();
    // Nothing orders the atomics of one chain: run them last to first.
    for (auto it = deferred_atomics_.rbegin(); it != deferred_atomics_.rend(); ++it) execute(*it);
    deferred_atomics_.clear();
  }

  void post_recv(const RecvRequest* requests, std::size_t count) override {
    std::lock_guard counters_lock(counters_mutex_);
    ++counters_.recv_posts;
    counters_.recv_batches.push_back(count);
    for (std::size_t i = 0; i < count; ++i) {
      receives_.push_back(requests[i]);
      counters_.receive_offsets.insert(requests[i].offset);
    }
    counters_.receives_posted += count;
    if (receives_.size() > params_.recv_depth) {
      throw std::logic_error("engine broke the contract: more than recv_depth receives posted");
    }
    counters_.max_recv_level = std::max<std::uint64_t>(counters_.max_recv_level, receives_.size());
  }

  std::size_t poll(Completion* out, std::size_t max) override {
    if (stalled_) return 0;
    if (poll_every_ > 1 && ++polls_ % poll_every_ != 0) return 0;
    // The queued tails go out only on a call that had nothing to report:
    // a caller that stops once it has its completions leaves them queued.
    if (completions_.empty()) send_tails();
    flush_outbox();
    deliver();
    std::size_t n = 0;
    while (n < max && !completions_.empty()) {
      out[n] = completions_.front();
      completions_.pop_front();
      if (out[n].type == CompletionType::send) {
        covered_ = covers_.front();
        covers_.pop_front();
      }
      ++n;
    }
    return n;
  }

  bool wait(std::chrono::milliseconds, std::uint32_t) override {
    std::lock_guard counters_lock(counters_mutex_);
    ++counters_.waits;
    return true;
  }

  void progress() override {
    {
      std::lock_guard counters_lock(counters_mutex_);
      ++counters_.progress_calls;
    }
    send_tails();
    flush_outbox();
    std::lock_guard lock(wire_->mutex);
    auto& late = wire_->late_to_rank[rank_];
    while (!late.empty() && std::chrono::steady_clock::now() >= late.front().due) {
      std::memcpy(late.front().target, late.front().data.data(), late.front().data.size());
      late.pop_front();
    }
  }

  std::string describe(std::int32_t status) const override {
    return "fake status " + std::to_string(status);
  }

  /// Non-zero: every Nth message this side sends is lost.
  void lose_every(std::uint64_t n) { lose_every_ = n; }
  void flush_delay(std::chrono::milliseconds delay) { flush_delay_ = delay; }
  void poll_every(std::uint32_t n) { poll_every_ = n; }

  /// Not delivered until flush_delay after the first call since the last
  /// post (a transport whose completions come before the peer has the data).
  bool flush() override {
    std::lock_guard counters_lock(counters_mutex_);
    ++counters_.flush_calls;
    const auto now = std::chrono::steady_clock::now();
    if (flush_started_posted_ != posted_ ||
        flush_started_ == std::chrono::steady_clock::time_point{}) {
      flush_started_ = now;
      flush_started_posted_ = posted_;
    }
    return now - flush_started_ >= flush_delay_;
  }

 private:
  void execute(const WorkRequest& wr) {
    auto* local = static_cast<std::byte*>(wr.local->address()) + wr.local_offset;
    std::byte* remote =
        wr.remote ? reinterpret_cast<std::byte*>(wr.remote->address()) + wr.remote_offset : nullptr;
    switch (wr.op) {
      case Op::send:
        if (queued_tails_) {
          tails_.push_back(
              {nullptr, std::vector<std::byte>(local, local + wr.length), wr.immediate});
        } else if (wire_capacity_ != 0) {
          outbox_.push_back({FakeWire::Message{std::vector<std::byte>(local, local + wr.length),
                                               wr.immediate, true},
                             std::nullopt});
        } else {
          push({std::vector<std::byte>(local, local + wr.length), wr.immediate, true});
        }
        break;
      case Op::write:
        if (queued_tails_) {
          tails_.push_back({remote, std::vector<std::byte>(local, local + wr.length), 0});
        } else if (late_writes_.count() > 0) {
          // Completed here, placed when the target progresses after a while.
          std::lock_guard lock(wire_->mutex);
          wire_->late_to_rank[1 - rank_].push_back(
              {remote, std::vector<std::byte>(local, local + wr.length),
               std::chrono::steady_clock::now() + late_writes_});
        } else {
          land(remote, local, wr.length);
        }
        break;
      case Op::write_imm:
        land(remote, local, wr.length);
        push({{}, wr.immediate, false});
        break;
      case Op::read:
        std::memcpy(local, remote, wr.length);
        break;
      case Op::fetch_add: {
        std::lock_guard lock(fabric_.atomics);
        std::uint64_t old;
        std::memcpy(&old, remote, 8);
        const std::uint64_t updated = old + wr.compare_add;
        std::memcpy(remote, &updated, 8);
        std::memcpy(local, &old, 8);
        break;
      }
      case Op::cswap: {
        std::lock_guard lock(fabric_.atomics);
        std::uint64_t old;
        std::memcpy(&old, remote, 8);
        if (old == wr.compare_add) std::memcpy(remote, &wr.swap, 8);
        std::memcpy(local, &old, 8);
        break;
      }
    }
  }

  /// A write into the peer's memory as a NIC lands it for a poller: the
  /// payload (corrupted if asked), then its last byte with release order.
  /// The engine watches that byte with acquire loads while this thread
  /// writes, so a plain memcpy of it was a data race (ThreadSanitizer).
  void land(std::byte* remote, const std::byte* local, std::uint32_t length) {
    if (length == 0) return;
    std::memcpy(remote, local, length - 1);
    maybe_corrupt(remote, length);
    std::atomic_ref<std::byte>(remote[length - 1])
        .store(local[length - 1], std::memory_order_release);
  }

  void maybe_corrupt(std::byte* data, std::uint32_t length) {
    if (corrupt_every_ != 0 && length > 1 && ++writes_ % corrupt_every_ == 0)
      data[0] ^= std::byte{0xff};
  }

  void push(FakeWire::Message message) {
    // An unreliable transport's loss: the message completes on the sender
    // and never arrives.
    if (lose_every_ != 0 && ++pushed_ % lose_every_ == 0) return;
    if (!message.data.empty())
      maybe_corrupt(message.data.data(), static_cast<std::uint32_t>(message.data.size()));
    std::lock_guard lock(wire_->mutex);
    wire_->to_rank[1 - rank_].push_back(std::move(message));
  }

  /// Sends and writes queued by post() (queued_tails), in post order: a
  /// send goes onto the wire, a write lands in the peer's memory.
  void send_tails() {
    while (!tails_.empty()) {
      Tail& tail = tails_.front();
      if (tail.target == nullptr) {
        push({std::move(tail.data), tail.immediate, true});
      } else {
        land(tail.target, tail.data.data(), static_cast<std::uint32_t>(tail.data.size()));
      }
      tails_.pop_front();
    }
  }

  /// A bounded wire: sends leave, and their completions surface, in post
  /// order, while the wire toward the peer holds fewer than wire_capacity_
  /// messages; the peer takes them off only in its poll() with receives
  /// posted, as a socket's bytes leave the kernel only when its reader reads.
  void flush_outbox() {
    while (!outbox_.empty()) {
      Outgoing& next = outbox_.front();
      if (next.message) {
        {
          // Only this endpoint adds to the wire: room seen here stays.
          std::lock_guard lock(wire_->mutex);
          if (wire_->to_rank[1 - rank_].size() >= wire_capacity_) return;
        }
        push(std::move(*next.message));
      }
      if (next.done) {
        completions_.push_back(next.done->completion);
        covers_.push_back(next.done->covers);
      }
      outbox_.pop_front();
    }
  }

  // The wire's lock is let go before the counters' is taken: post() takes
  // the counters' lock, then the wire's (push), and one order everywhere
  // is what keeps a shared Context from deadlocking (ThreadSanitizer
  // reported the two orders as a lock-order inversion).
  void deliver() {
    std::uint64_t lowest_level = std::numeric_limits<std::uint64_t>::max();
    {
      std::lock_guard lock(wire_->mutex);
      deliver_locked(lowest_level);
    }
    if (lowest_level != std::numeric_limits<std::uint64_t>::max()) {
      std::lock_guard counters_lock(counters_mutex_);
      counters_.min_recv_level_after_start =
          std::min<std::uint64_t>(counters_.min_recv_level_after_start, lowest_level);
    }
  }

  /// Matches arrived messages to posted receives; `lowest_level` is the
  /// fewest receives left posted while a message landed (plus it).
  void deliver_locked(std::uint64_t& lowest_level) {
    auto& incoming = wire_->to_rank[rank_];
    while (!incoming.empty() && !receives_.empty()) {
      const FakeWire::Message& m = incoming.front();
      const RecvRequest r = receives_.front();
      receives_.pop_front();
      if (m.data.size() > r.length) throw TransportError("fake: message larger than the receive");
      if (m.has_data) {
        std::memcpy(static_cast<std::byte*>(r.local->address()) + r.offset, m.data.data(),
                    m.data.size());
      }
      const bool fails = fail_receives_from_ != 0 && m.data.size() >= fail_receives_from_;
      completions_.push_back(Completion{r.id, CompletionType::recv, fails ? 5 : 0,
                                        static_cast<std::uint32_t>(m.has_data ? m.data.size() : 0),
                                        m.immediate});
      incoming.pop_front();
      lowest_level = std::min<std::uint64_t>(lowest_level, receives_.size() + 1);
    }
  }

  std::shared_ptr<FakeWire> wire_;
  FakeFabric& fabric_;
  int rank_;
  EndpointParams params_;
  FakeCounters& counters_;
  std::mutex& counters_mutex_;
  std::uint64_t corrupt_every_;
  bool reverse_atomics_;
  std::uint32_t fail_receives_from_;
  std::uint64_t lose_every_ = 0;
  std::uint64_t pushed_ = 0;
  std::chrono::milliseconds flush_delay_{0};
  std::uint32_t poll_every_ = 1;
  std::uint64_t polls_ = 0;
  std::chrono::steady_clock::time_point flush_started_{};
  std::uint64_t flush_started_posted_ = 0;
  std::uint32_t stall_from_;
  std::chrono::milliseconds late_writes_;
  bool stalled_ = false;  // a post of stall_from_ bytes or more: no completion ever again
  std::vector<WorkRequest> deferred_atomics_;
  std::uint64_t writes_ = 0;
  std::uint64_t posted_ = 0;
  std::uint64_t covered_ = 0;
  std::deque<std::uint64_t> covers_;
  std::deque<RecvRequest> receives_;
  std::deque<Completion> completions_;
  /// With a bounded wire: what waits for room, a message or a signaled
  /// request's completion (kept in order behind the messages before it).
  struct Outgoing {
    struct Done {
      Completion completion;
      std::uint64_t covers;
    };
    std::optional<FakeWire::Message> message;
    std::optional<Done> done;
  };
  std::size_t wire_capacity_;
  std::deque<Outgoing> outbox_;
  /// A send's message or a write's payload (target: where it lands; null
  /// for a send) that post() completed but left to this side's next call.
  struct Tail {
    std::byte* target = nullptr;
    std::vector<std::byte> data;
    std::uint32_t immediate = 0;
  };
  bool queued_tails_;
  std::deque<Tail> tails_;
};

class FakeContext final : public Context {
 public:
  FakeContext(FakeFabric& fabric, Capabilities caps) : fabric_(fabric), caps_(caps) {}

  Capabilities capabilities() const override { return caps_; }
  std::string device() const override { return "fake"; }
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<FakeMemory>(address, length);
  }
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override {
    last_params = params;
    const std::string hello = "fake-endpoint-" + std::to_string(params.index);
    const Bytes reply = channel.exchange(std::as_bytes(std::span(hello)));
    if (std::string(reinterpret_cast<const char*>(reply.data()), reply.size()) != hello) {
      throw TransportError("fake: peer connected another endpoint");
    }
    auto endpoint = std::make_unique<FakeEndpoint>(
        fabric_.next_wire(channel.rank()), fabric_, channel.rank(), params, counters,
        counters_mutex, corrupt_every, reverse_atomics, fail_receives_from, stall_from, late_writes,
        wire_capacity(params.index), queued_tails);
    endpoint->lose_every(lose_every);
    endpoint->flush_delay(flush_delay);
    endpoint->poll_every(poll_every);
    return endpoint;
  }

  FakeCounters counters;
  std::mutex counters_mutex;
  EndpointParams last_params;
  std::uint64_t corrupt_every = 0;  ///< corrupt the first byte of every Nth payload
  bool reverse_atomics = false;     ///< execute the atomics of each post() last to first
  /// Non-zero: every receive of at least this many bytes completes with an
  /// error status (a transport failing on one side only).
  std::uint32_t fail_receives_from = 0;
  /// Non-zero: every Nth message each side sends is lost (give the context
  /// capabilities with reliable_delivery false, as a UD transport would).
  std::uint64_t lose_every = 0;
  /// Non-zero: once a request of at least this many bytes is posted, the
  /// endpoint's poll() never returns a completion again (a stalled
  /// transport: no error, nothing at all).
  std::uint32_t stall_from = 0;
  /// Non-zero: a write completes at once and lands only when the target
  /// calls progress() this long after (a socket transport whose target
  /// places writes in its progress).
  std::chrono::milliseconds late_writes{0};
  /// A send or write completes in post() with its bytes still queued on
  /// this side, which sends them only in a later poll() that finds no
  /// completion to report, or in progress() (UCX over tcp: a buffered send
  /// or a software put completes once its last fragment is copied into the
  /// socket's queue, and the rest leaves only while the sender progresses).
  bool queued_tails = false;
  /// Endpoint::flush() says delivered only this long after it was first
  /// called since the last post.
  std::chrono::milliseconds flush_delay{0};
  /// Only every Nth poll() looks for completions (a slower transport, whose
  /// window stays full longer).
  std::uint32_t poll_every = 1;
  /// Per endpoint index: the messages its wire toward the peer holds (0 or
  /// absent: unbounded). A send completes once it is on the wire, and the
  /// peer takes messages off only while it polls that endpoint (the tcp
  /// plugin over a socket whose buffers are full).
  std::map<std::uint32_t, std::size_t> bounded_wires;
  std::size_t wire_capacity(std::uint32_t endpoint) const {
    const auto found = bounded_wires.find(endpoint);
    return found == bounded_wires.end() ? 0 : found->second;
  }

  static Capabilities everything() {
    Capabilities caps;
    for (std::size_t i = 0; i < kOpCount; ++i) caps.ops[i] = Support::native;
    caps.selective_completion = Support::native;
    caps.completion_events = Support::native;
    caps.post_list = Support::native;
    caps.max_inline = 64;
    caps.ordered_write_visibility = true;
    caps.delivery_fence = true;
    return caps;
  }

 private:
  FakeFabric& fabric_;
  Capabilities caps_;
};

}  // namespace uniperf::testing
