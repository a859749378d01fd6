// The engine's own cost per operation: the real timed loops (TestRunner,
// both sides, in one process over an in-process control channel) driving a
// transport that completes every request the moment it is posted. What is
// left is what uniperf adds on top of any transport: the loop's counters,
// the request rewriting, the completion handling, the virtual calls.
//
//   build/bin/uniperf_engine_cost                 (tests/fidelity/engine_cost.sh pins it)
//
// Each benchmark reports the engine's own figure from the record it would
// write (bandwidth.seconds over messages: first post to last completion),
// not google-benchmark's wall time around a whole run, which holds the
// phase's set-up and control messages:
//   stream   ns per streamed write, by post_list and signal_every (window 64)
//   pingpong ns per round trip of the latency loop (a read, one at a time;
//            two clock reads per iteration, as every latency sample has)
//   poll     ns per empty poll: the round trip again with 16 empty polls
//            before each completion, less the round trip, over 16
#include <benchmark/benchmark.h>

#include <atomic>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"

namespace uniperf::benchmarks {
namespace {

using engine::SizeOutcome;
using engine::TestRunner;
using model::FlowSpec;
using model::Pattern;
using model::TestSpec;

class InstantMemory final : public MemoryRegion {
 public:
  using MemoryRegion::MemoryRegion;
  Bytes remote_key() const override { return {}; }
};

class InstantRemote final : public RemoteRegion {
 public:
  using RemoteRegion::RemoteRegion;
};

/// Completes a signaled request at once (an unsignaled one is covered by
/// the next signaled one, as RC ordering has it), after `empty_polls`
/// polls that find nothing.
class InstantEndpoint final : public Endpoint {
 public:
  InstantEndpoint(std::uint32_t send_depth, std::uint32_t empty_polls)
      : ready_(send_depth + 1), empty_polls_(empty_polls) {}

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte>) override {
    return std::make_unique<InstantRemote>(address, length);
  }
  void post(const WorkRequest* requests, std::size_t count) override {
    for (std::size_t k = 0; k < count; ++k) {
      if (requests[k].flags & WorkRequest::kSignaled) {
        ready_[tail_] = {.id = requests[k].id, .type = CompletionType::send};
        tail_ = tail_ + 1 == ready_.size() ? 0 : tail_ + 1;
      }
    }
  }
  void post_recv(const RecvRequest*, std::size_t) override {}
  std::size_t poll(Completion* out, std::size_t max) override {
    if (head_ == tail_) return 0;
    if (polls_left_ > 0) {
      --polls_left_;
      return 0;
    }
    polls_left_ = empty_polls_;
    std::size_t n = 0;
    for (; n < max && head_ != tail_; ++n) {
      out[n] = ready_[head_];
      head_ = head_ + 1 == ready_.size() ? 0 : head_ + 1;
    }
    return n;
  }
  bool wait(std::chrono::milliseconds, std::uint32_t) override { return true; }
  void progress() override {}
  std::string describe(std::int32_t status) const override {
    return "status " + std::to_string(status);
  }

 private:
  std::vector<Completion> ready_;  ///< a ring: at most send_depth outstanding
  std::size_t head_ = 0, tail_ = 0;
  const std::uint32_t empty_polls_;
  std::uint32_t polls_left_ = 0;
};

class InstantContext final : public Context {
 public:
  explicit InstantContext(std::uint32_t empty_polls) : empty_polls_(empty_polls) {}
  Capabilities capabilities() const override {
    Capabilities caps;
    caps.set(Op::write, Support::native);
    caps.set(Op::read, Support::native);
    caps.selective_completion = Support::native;
    caps.post_list = Support::native;
    return caps;
  }
  std::string device() const override { return "instant"; }
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    return std::make_unique<InstantMemory>(address, length);
  }
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel&) override {
    return std::make_unique<InstantEndpoint>(params.send_depth, empty_polls_);
  }

 private:
  std::uint32_t empty_polls_;
};

/// Both sides of one test, set up once; run() measures one size on both.
class Pair {
 public:
  Pair(const TestSpec& test, std::uint32_t empty_polls)
      : initiator_(empty_polls), responder_(empty_polls) {
    auto [control0, control1] = bootstrap::make_in_process_pair();
    control0_ = std::move(control0);
    control1_ = std::move(control1);
    const Capabilities caps = initiator_.capabilities();
    std::exception_ptr failed;
    std::thread peer([&] {
      try {
        served_ = std::make_unique<TestRunner>(responder_, *control1_,
                                               engine::plan_flow(test, 0, caps), abort_);
        served_->setup();
      } catch (...) {
        failed = std::current_exception();
      }
    });
    measuring_ = std::make_unique<TestRunner>(initiator_, *control0_,
                                              engine::plan_flow(test, 0, caps), abort_);
    measuring_->setup();
    peer.join();
    if (failed) std::rethrow_exception(failed);
  }

  SizeOutcome run(std::uint64_t size) {
    std::exception_ptr failed;
    std::thread peer([&] {
      try {
        served_->run(size);
      } catch (...) {
        failed = std::current_exception();
      }
    });
    SizeOutcome measured = measuring_->run(size);
    peer.join();
    if (failed) std::rethrow_exception(failed);
    return measured;
  }

 private:
  InstantContext initiator_, responder_;
  std::unique_ptr<bootstrap::Bootstrap> control0_, control1_;
  std::atomic<bool> abort_{false};
  std::unique_ptr<TestRunner> measuring_, served_;
};

TestSpec one_flow(Op op, Pattern pattern, std::uint64_t iterations) {
  TestSpec test;
  test.name = "engine_cost";
  test.sizes = {8};
  test.duration.iterations = iterations;
  test.duration.warmup_iterations = 1000;
  FlowSpec flow;
  flow.op = op;
  flow.pattern = pattern;
  flow.validate = false;
  test.flows = {flow};
  return test;
}

/// Runs `test` over the instant transport and reports the engine's own
/// nanoseconds per message as `counter`.
void measure(benchmark::State& state, const TestSpec& test, std::uint32_t empty_polls,
             const char* counter) {
  Pair pair(test, empty_polls);
  double seconds = 0, messages = 0;
  for (auto _ : state) {
    const SizeOutcome out = pair.run(8);
    seconds += out.seconds;
    messages += static_cast<double>(out.messages);
    state.SetIterationTime(out.seconds);
  }
  state.counters[counter] = seconds * 1e9 / messages;
  state.SetItemsProcessed(static_cast<std::int64_t>(messages));
}

void stream(benchmark::State& state) {
  TestSpec test = one_flow(Op::write, Pattern::bandwidth, 2'000'000);
  FlowSpec& flow = test.flows.front();
  flow.window = 64;
  flow.post_list = static_cast<std::uint32_t>(state.range(0));
  flow.signal_every = static_cast<std::uint32_t>(state.range(1));
  measure(state, test, 0, "ns_per_post");
}
BENCHMARK(stream)
    ->ArgNames({"post_list", "signal_every"})
    ->Args({1, 1})
    ->Args({1, 32})  // the default: half the window
    ->Args({1, 64})
    ->Args({16, 16})
    ->Args({16, 64})
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void pingpong(benchmark::State& state) {
  measure(state, one_flow(Op::read, Pattern::latency, 1'000'000),
          static_cast<std::uint32_t>(state.range(0)), "ns_per_round_trip");
}
BENCHMARK(pingpong)
    ->ArgName("empty_polls")
    ->Arg(0)
    ->Arg(16)
    ->Iterations(5)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uniperf::benchmarks

BENCHMARK_MAIN();
