// The checker must be able to fail: a deliberately misbehaving transport
// (and deliberately bad engine calls) must each produce the violation the
// conformance suite relies on, and a well-behaved sequence must produce none.
#include "contract_checker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

namespace uniperf::conformance {
namespace {

/// Completes every request it is given, signaled or not, in posting order
/// or reversed: the two ways a careless plugin breaks the contract.
struct Behaviour {
  bool complete_unsignaled = false;
  bool reverse_order = false;
};

class ScriptedEndpoint : public Endpoint {
 public:
  explicit ScriptedEndpoint(const Behaviour& b) : behaviour_(b) {}
  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte>) override {
    return std::make_unique<RemoteRegion>(address, length);
  }
  void post(const WorkRequest* requests, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) {
      if ((requests[i].flags & WorkRequest::kSignaled) || behaviour_.complete_unsignaled) {
        done_.push_back(Completion{requests[i].id, CompletionType::send, 0, 0, 0});
      }
    }
  }
  void post_recv(const RecvRequest*, std::size_t) override {}
  std::size_t poll(Completion* out, std::size_t max) override {
    if (behaviour_.reverse_order) std::reverse(done_.begin(), done_.end());
    std::size_t n = 0;
    while (n < max && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return n;
  }
  bool wait(std::chrono::milliseconds, std::uint32_t) override { return true; }
  void progress() override {}
  std::string describe(std::int32_t) const override { return "scripted"; }

 private:
  Behaviour behaviour_;
  std::deque<Completion> done_;
};

class PlainRegion : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  Bytes remote_key() const override { return {}; }
};

class ScriptedContext : public Context {
 public:
  ScriptedContext(Capabilities caps, Behaviour b) : caps_(caps), behaviour_(b) {}
  Capabilities capabilities() const override { return caps_; }
  std::string device() const override { return "scripted"; }
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<PlainRegion>(address, length);
  }
  std::unique_ptr<Endpoint> connect(const EndpointParams&, PeerChannel&) override {
    return std::make_unique<ScriptedEndpoint>(behaviour_);
  }

 private:
  Capabilities caps_;
  Behaviour behaviour_;
};

class ScriptedPlugin : public Plugin {
 public:
  ScriptedPlugin(Capabilities caps, Behaviour b) : caps_(caps), behaviour_(b) {}
  std::string name() const override { return "scripted"; }
  std::string version() const override { return "0"; }
  std::string library_version() const override { return "none"; }
  std::string description() const override { return "misbehaves on request"; }
  std::vector<OptionSpec> options() const override { return {}; }
  std::string probe() const override { return ""; }
  std::unique_ptr<Context> open(const Options&) override {
    return std::make_unique<ScriptedContext>(caps_, behaviour_);
  }

 private:
  Capabilities caps_;
  Behaviour behaviour_;
};

class NoPeer : public PeerChannel {
 public:
  int rank() const override { return 0; }
  Bytes exchange(std::span<const std::byte>) override { return {}; }
  void barrier() override {}
};

Capabilities send_and_write() {
  Capabilities caps;
  caps.set(Op::send, Support::native);
  caps.set(Op::write, Support::native);
  caps.selective_completion = Support::native;
  caps.max_inline = 16;
  return caps;
}

/// Drives one checked endpoint directly, as the engine would.
struct Harness {
  explicit Harness(Capabilities caps = send_and_write(), Behaviour b = {})
      : inner(caps, b), plugin(inner, log) {
    context = plugin.open(Options{});
    region = context->register_memory(buffer, sizeof buffer);
    EndpointParams params;
    params.send_depth = 4;
    params.max_inline = 16;
    endpoint = context->connect(params, peer);
    remote = endpoint->import_region(0x1000, sizeof buffer, {});
  }
  WorkRequest request(std::uint64_t id, Op op = Op::send, bool signaled = true) {
    WorkRequest wr;
    wr.id = id;
    wr.op = op;
    wr.flags = signaled ? WorkRequest::kSignaled : 0;
    wr.length = 8;
    wr.local = region.get();
    wr.remote = remote.get();
    return wr;
  }
  std::size_t drain() {
    Completion c[16];
    return endpoint->poll(c, 16);
  }
  bool mentions(const std::string& text) const {
    for (const auto& v : log->violations()) {
      if (v.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::shared_ptr<ContractLog> log = std::make_shared<ContractLog>();
  ScriptedPlugin inner;
  CheckedPlugin plugin;
  NoPeer peer;
  std::byte buffer[256] = {};
  std::unique_ptr<Context> context;
  std::unique_ptr<MemoryRegion> region;
  std::unique_ptr<Endpoint> endpoint;
  std::unique_ptr<RemoteRegion> remote;
};

TEST(ContractChecker, AWellBehavedSequenceHasNoViolations) {
  Harness h;
  WorkRequest chain[3] = {h.request(1, Op::send, false), h.request(2, Op::write, false),
                          h.request(3)};
  h.endpoint->post(chain, 3);
  EXPECT_EQ(h.drain(), 1u);
  EXPECT_TRUE(h.log->violations().empty()) << h.log->violations().front();
  EXPECT_TRUE(h.log->was_attempted(Op::write));
  EXPECT_FALSE(h.log->was_attempted(Op::read));
}

TEST(ContractChecker, FlagsAnUnadvertisedOp) {
  Harness h;
  const WorkRequest wr = h.request(1, Op::read);
  h.endpoint->post(&wr, 1);
  EXPECT_TRUE(h.mentions("unadvertised op read"));
}

TEST(ContractChecker, FlagsACompletionForAnUnsignaledRequest) {
  Harness h(send_and_write(), Behaviour{.complete_unsignaled = true});
  WorkRequest chain[2] = {h.request(1, Op::send, false), h.request(2)};
  h.endpoint->post(chain, 2);
  h.drain();
  EXPECT_TRUE(h.mentions("unsignaled request id 1"));
}

TEST(ContractChecker, FlagsCompletionsOutOfPostingOrder) {
  Harness h(send_and_write(), Behaviour{.reverse_order = true});
  WorkRequest chain[2] = {h.request(1), h.request(2)};
  h.endpoint->post(chain, 2);
  h.drain();
  EXPECT_TRUE(h.mentions("send completion for id 1 that is not outstanding"));
}

TEST(ContractChecker, FlagsAnEngineThatExceedsSendDepthOrInlinesTooMuch) {
  Harness h;
  WorkRequest chain[5] = {h.request(1), h.request(2), h.request(3), h.request(4), h.request(5)};
  chain[4].flags |= WorkRequest::kInline;
  chain[4].length = 17;
  h.endpoint->post(chain, 5);
  EXPECT_TRUE(h.mentions("exceeded send_depth 4"));
  EXPECT_TRUE(h.mentions("17 bytes inline"));
}

TEST(ContractChecker, FlagsWaitWithoutCompletionEventsAndSuppressionWithoutSupport) {
  Capabilities caps = send_and_write();
  caps.selective_completion = Support::none;
  Harness h(caps);
  const WorkRequest wr = h.request(1, Op::send, false);
  h.endpoint->post(&wr, 1);
  h.endpoint->wait(std::chrono::milliseconds(0), 1);
  EXPECT_TRUE(h.mentions("without selective_completion"));
  EXPECT_TRUE(h.mentions("wait() without completion_events"));
}

}  // namespace
}  // namespace uniperf::conformance
