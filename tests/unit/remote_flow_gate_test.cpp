// Flows in process pairs of their own start and stop together through rank
// 0's coordinator (session/remote_flow_gate.hpp): here its members are
// threads of one process, over real loopback connections, so the
// conversation is the one a job has.
#include "session/remote_flow_gate.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "engine/errors.hpp"

namespace uniperf::session {
namespace {

using engine::kNever;
using model::Role;
using model::StopRule;
using namespace std::chrono_literals;

constexpr auto kConnect = 10s;
/// Far longer than any message takes on a loaded machine: these tests wait
/// for something that must happen, and fail only if it never does.
constexpr auto kSurely = 20s;

std::unique_ptr<RemoteFlowGate> member(const FlowGateCoordinator& coordinator, GateSide side,
                                       std::size_t flow) {
  return std::make_unique<RemoteFlowGate>(coordinator.address(), side, flow, kConnect);
}

/// Waits (bounded) until `stop`'s time is no longer "never".
bool stopped_within(const engine::StopTime& stop, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (stop.load() == kNever) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// Every member's gather at once, each on its own thread as its process
/// would (one alone would wait for the others): returns when all opened.
void gather_all(const std::vector<std::unique_ptr<RemoteFlowGate>>& members,
                const std::atomic<bool>& abort) {
  std::vector<std::jthread> threads;
  for (std::size_t k = 1; k < members.size(); ++k)
    threads.emplace_back([&, k] { members[k]->gather(abort); });
  members.front()->gather(abort);
}

TEST(RemoteFlowGate, APhaseOpensWhenEveryFlowOfItsSideArrived) {
  FlowGateCoordinator coordinator("127.0.0.1", "127.0.0.1", {Role::measured, Role::measured},
                                  StopRule::all_done);
  auto first = member(coordinator, GateSide::initiator, 0);
  auto second = member(coordinator, GateSide::initiator, 1);
  auto responder = member(coordinator, GateSide::responder, 0);
  std::atomic<bool> abort{false};
  auto gathered = std::async(std::launch::async, [&] { first->gather(abort); });
  // Alone at the gate, it waits: neither the other initiator nor a
  // responder (whose side gathers on its own) has come.
  auto responder_gathered = std::async(std::launch::async, [&] { responder->gather(abort); });
  EXPECT_EQ(gathered.wait_for(300ms), std::future_status::timeout);
  second->gather(abort);  // the last of its side: opens the phase for both
  ASSERT_EQ(gathered.wait_for(kSurely), std::future_status::ready);
  gathered.get();
  EXPECT_EQ(responder_gathered.wait_for(0ms), std::future_status::timeout);
  abort = true;  // the responder's pair would fail: its wait ends
  EXPECT_THROW(responder_gathered.get(), engine::Aborted);
}

TEST(RemoteFlowGate, FirstDoneStopsTheOtherFlowsOfItsSide) {
  FlowGateCoordinator coordinator(
      "127.0.0.1", "127.0.0.1", {Role::measured, Role::measured, Role::load}, StopRule::first_done);
  std::vector<std::unique_ptr<RemoteFlowGate>> initiators;
  for (std::size_t k = 0; k < 3; ++k)
    initiators.push_back(member(coordinator, GateSide::initiator, k));
  std::atomic<bool> abort{false};
  gather_all(initiators, abort);
  for (const auto& m : initiators) EXPECT_EQ(m->stop_of(0).load(), kNever);
  initiators[1]->done(0);
  EXPECT_TRUE(stopped_within(initiators[0]->stop_of(0), kSurely));
  EXPECT_TRUE(stopped_within(initiators[2]->stop_of(0), kSurely));
  EXPECT_EQ(initiators[1]->stop_of(0).load(), kNever);  // its own loop has ended
  // The next phase starts over: no stop of the last one carries into it.
  gather_all(initiators, abort);
  for (const auto& m : initiators) EXPECT_EQ(m->stop_of(0).load(), kNever);
}

TEST(RemoteFlowGate, AllDoneStopsTheLoadsWhenTheLastMeasuredFlowIsDone) {
  FlowGateCoordinator coordinator("127.0.0.1", "127.0.0.1",
                                  {Role::measured, Role::load, Role::measured}, StopRule::all_done);
  std::vector<std::unique_ptr<RemoteFlowGate>> initiators;
  for (std::size_t k = 0; k < 3; ++k)
    initiators.push_back(member(coordinator, GateSide::initiator, k));
  std::atomic<bool> abort{false};
  gather_all(initiators, abort);
  initiators[0]->done(0);
  initiators[2]->done(0);  // the last measured flow: the load stops
  EXPECT_TRUE(stopped_within(initiators[1]->stop_of(0), kSurely));
  // Measured flows are never stopped by all_done: they run their own length.
  EXPECT_EQ(initiators[0]->stop_of(0).load(), kNever);
  EXPECT_EQ(initiators[2]->stop_of(0).load(), kNever);
}

TEST(RemoteFlowGate, AFlowWhosePairLeftDoesNotHoldTheOthers) {
  FlowGateCoordinator coordinator("127.0.0.1", "127.0.0.1", {Role::measured, Role::measured},
                                  StopRule::all_done);
  auto staying = member(coordinator, GateSide::initiator, 0);
  auto leaving = member(coordinator, GateSide::initiator, 1);
  std::atomic<bool> abort{false};
  auto gathered = std::async(std::launch::async, [&] { staying->gather(abort); });
  std::this_thread::sleep_for(100ms);
  leaving.reset();  // its pair's session ended (a flow it could not run)
  ASSERT_EQ(gathered.wait_for(kSurely), std::future_status::ready);
  try {
    gathered.get();
    ADD_FAILURE() << "the gather opened without the flow that left";
  } catch (const engine::Aborted& e) {
    EXPECT_NE(std::string(e.what()).find(kAnotherFlowFailed), std::string::npos) << e.what();
  }
  // And any later gather of that side is refused at once.
  EXPECT_THROW(staying->gather(abort), engine::Aborted);
}

TEST(RemoteFlowGate, AMemberWithoutItsCoordinatorFailsItsGather) {
  auto coordinator = std::make_unique<FlowGateCoordinator>(
      "127.0.0.1", "127.0.0.1", std::vector<Role>{Role::measured, Role::measured},
      StopRule::all_done);
  auto alone = member(*coordinator, GateSide::initiator, 0);
  coordinator.reset();  // rank 0's end is gone
  std::atomic<bool> abort{false};
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(alone->gather(abort), engine::Aborted);
  EXPECT_LT(std::chrono::steady_clock::now() - started, kSurely);
}

}  // namespace
}  // namespace uniperf::session
