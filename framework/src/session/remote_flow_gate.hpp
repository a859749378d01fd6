// The flows of a test that run in process pairs of their own
// (model::FlowProcesses::separate), started and stopped together over the
// control channel as threads' flows are by engine::FlowGroup
// (docs/architecture.md, "Flows in separate processes").
//
// A coordinator at rank 0 holds one connection to each side of each flow's
// pair (its members: 2N for N flows). Each side's members form a group of
// their own, as each side's threads do:
//   - before a measured phase each member says it arrived, and waits; when
//     every member of its side has, the coordinator opens the phase for all
//     of them at once;
//   - an initiator whose measured loop ended says so, and the coordinator
//     tells the members the stop rule stops (engine::
//     stops_when_measured_flow_ends); each lowers its flow's stop time to
//     the moment it heard, and its loops stop at their next check.
// Nothing of this runs inside a timed loop: a member's reader thread lowers
// the stop time the loops already read. Messages carry the phase's number,
// so a stop that comes late for one phase never stops the next.
//
// A member that leaves while its side is gathering, or a side that gathers
// after one of its members left, gets every member an abort: a flow whose
// pair failed will not come, and the others' gathers must not wait for it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/flow_group.hpp"
#include "model/test_spec.hpp"

namespace uniperf::session {

/// The reason a flow gives when the gate stopped it because another flow's
/// pair failed: the test's record names that other flow's reason instead.
inline constexpr const char* kAnotherFlowFailed = "another flow's process pair failed or left";

/// Which of a pair's two processes a member is: each side gathers alone.
enum class GateSide : std::uint8_t { initiator = 0, responder = 1 };

/// Rank 0's end: accepts the members of one test's flows and runs their
/// groups on a thread of its own until destroyed.
class FlowGateCoordinator {
 public:
  /// Listens on `listen_host` (an ephemeral port), where the members reach
  /// it as `reach_host`, for both sides of each flow of `roles`, stopped by
  /// `rule`. Throws bootstrap::BootstrapError when it cannot listen.
  FlowGateCoordinator(const std::string& listen_host, const std::string& reach_host,
                      std::vector<model::Role> roles, model::StopRule rule);
  ~FlowGateCoordinator();
  FlowGateCoordinator(const FlowGateCoordinator&) = delete;
  FlowGateCoordinator& operator=(const FlowGateCoordinator&) = delete;

  /// HOST:PORT the members connect to.
  std::string address() const { return address_; }

 private:
  struct Member;
  void serve(const std::stop_token& stop);
  void accept_members();
  void on_message(Member& member, const std::string& text);
  void on_gone(Member& member);
  void abort_all(const std::string& why);
  void send(Member& member, const std::string& text);

  const std::vector<model::Role> roles_;
  const model::StopRule rule_;
  bootstrap::TcpListener listener_;
  std::string address_;
  std::vector<std::unique_ptr<Member>> members_;  // as they connected
  struct SideState {
    std::size_t arrived = 0;           // members at the current gather
    std::size_t measured_running = 0;  // measured flows not done yet
    bool lost_member = false;
  };
  SideState sides_[2];
  bool aborted_ = false;
  std::jthread thread_;  // last: stopped and joined first
};

/// A member's end: the gate one side of one flow's pair runs its measured
/// phases by (engine::FlowGate, the runner's flow 0).
class RemoteFlowGate final : public engine::FlowGate {
 public:
  /// Connects to the coordinator at `address` (HOST:PORT) as `side` of flow
  /// `flow`, within `timeout`. Throws bootstrap::BootstrapError.
  RemoteFlowGate(const std::string& address, GateSide side, std::size_t flow,
                 std::chrono::milliseconds timeout);
  ~RemoteFlowGate() override;

  engine::StopTime& stop_of(std::size_t) override { return stop_; }
  void gather(const std::atomic<bool>& abort) override;
  void done(std::size_t) override;

 private:
  void read(const std::stop_token& stop);

  std::unique_ptr<bootstrap::Bootstrap> link_;
  engine::StopTime stop_;
  std::atomic<std::uint64_t> phase_{0};  // the phase gathered for last
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t opened_ = 0;  // the last phase the coordinator opened
  std::string aborted_;       // why the coordinator said abort, or was lost
  std::jthread reader_;       // last: stopped and joined first
};

}  // namespace uniperf::session
