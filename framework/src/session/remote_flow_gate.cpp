#include "session/remote_flow_gate.hpp"

#include <poll.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/errors.hpp"

namespace uniperf::session {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

/// How long a member's reader, and the coordinator, wait for a message
/// before looking at their stop token again.
constexpr int kPollMs = 10;

/// Whether `fd` has something to read (or hung up) within `ms`.
bool readable(int fd, int ms) {
  pollfd pfd{fd, POLLIN, 0};
  return ::poll(&pfd, 1, ms) > 0;
}

}  // namespace

// ------------------------------------------------------------ coordinator

struct FlowGateCoordinator::Member {
  std::unique_ptr<bootstrap::Bootstrap> link;
  bool joined = false;  // said which side of which flow it is
  GateSide side = GateSide::initiator;
  std::size_t flow = 0;
  bool arrived = false;  // at its side's current gather
  bool gone = false;
};

FlowGateCoordinator::FlowGateCoordinator(const std::string& listen_host,
                                         const std::string& reach_host,
                                         std::vector<model::Role> roles, model::StopRule rule)
    : roles_(std::move(roles)), rule_(rule), listener_(listen_host, 0) {
  address_ = reach_host + ":" + std::to_string(listener_.port());
  thread_ = std::jthread([this](const std::stop_token& stop) { serve(stop); });
}

FlowGateCoordinator::~FlowGateCoordinator() = default;  // the thread stops and joins

void FlowGateCoordinator::serve(const std::stop_token& stop) {
  const std::size_t expected = 2 * roles_.size();
  std::vector<pollfd> fds;
  while (!stop.stop_requested()) {
    if (members_.size() < expected) accept_members();
    fds.clear();
    for (const auto& m : members_)
      fds.push_back({m->gone ? -1 : m->link->liveness_fd(), POLLIN, 0});
    if (fds.empty()) continue;  // accept_members() waited
    if (::poll(fds.data(), fds.size(), kPollMs) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      Member& member = *members_[i];
      if (member.gone || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      try {
        on_message(member, member.link->receive_text(5s));
      } catch (const std::exception&) {
        on_gone(member);  // closed (its pair's session ended), or garbled
      }
    }
  }
}

void FlowGateCoordinator::accept_members() {
  try {
    if (auto link =
            listener_.try_accept(0, members_.empty() ? std::chrono::milliseconds(kPollMs) : 0ms)) {
      members_.push_back(std::make_unique<Member>(Member{.link = std::move(link)}));
    }
  } catch (const bootstrap::BootstrapError&) {
    // a connection reset before it was accepted: its member retries or fails
  }
}

void FlowGateCoordinator::on_message(Member& member, const std::string& text) {
  const json message = json::parse(text);
  if (message.contains("join")) {
    const auto flow = message.at("flow").get<std::size_t>();
    const int side = message.at("side").get<int>();
    if (flow >= roles_.size() || (side != 0 && side != 1)) throw std::out_of_range("join");
    member.joined = true;
    member.flow = flow;
    member.side = static_cast<GateSide>(side);
    return;
  }
  if (!member.joined) throw std::invalid_argument("a member spoke before it joined");
  SideState& side = sides_[static_cast<int>(member.side)];
  if (message.contains("arrive")) {
    const auto phase = message.at("arrive").get<std::uint64_t>();
    if (aborted_ || side.lost_member) {
      send(member, json{{"abort", kAnotherFlowFailed}}.dump());
      return;
    }
    member.arrived = true;
    if (++side.arrived < roles_.size()) return;
    // The last of its side: the phase opens for every member of the side.
    side.arrived = 0;
    side.measured_running =
        static_cast<std::size_t>(std::count(roles_.begin(), roles_.end(), model::Role::measured));
    const std::string open = json{{"open", phase}}.dump();
    for (auto& m : members_) {
      if (m->joined && !m->gone && m->side == member.side) {
        m->arrived = false;
        send(*m, open);
      }
    }
    return;
  }
  if (message.contains("done")) {
    const auto phase = message.at("done").get<std::uint64_t>();
    if (roles_[member.flow] != model::Role::measured || side.measured_running == 0) return;
    const bool last = --side.measured_running == 0;
    const std::string stop = json{{"stop", phase}}.dump();
    for (auto& m : members_) {
      if (m.get() == &member || !m->joined || m->gone || m->side != member.side) continue;
      if (engine::stops_when_measured_flow_ends(rule_, roles_[m->flow], last)) send(*m, stop);
    }
  }
}

void FlowGateCoordinator::on_gone(Member& member) {
  member.gone = true;
  if (!member.joined) return;
  SideState& side = sides_[static_cast<int>(member.side)];
  side.lost_member = true;
  // Its side is gathering without it: that gather would never open.
  if (side.arrived > 0 && !member.arrived)
    abort_all(std::string(kAnotherFlowFailed) + " before the phase began");
}

void FlowGateCoordinator::abort_all(const std::string& why) {
  aborted_ = true;
  const std::string abort = json{{"abort", why}}.dump();
  for (auto& m : members_) {
    if (!m->gone) send(*m, abort);
  }
}

void FlowGateCoordinator::send(Member& member, const std::string& text) {
  try {
    member.link->send_text(text);
  } catch (const bootstrap::BootstrapError&) {
    member.gone = true;  // found by the poll as well
  }
}

// ------------------------------------------------------------ member

RemoteFlowGate::RemoteFlowGate(const std::string& address, GateSide side, std::size_t flow,
                               std::chrono::milliseconds timeout) {
  const auto [host, port] = bootstrap::split_host_port(address);
  link_ = bootstrap::tcp_connect(host, port, 1, timeout);
  link_->send_text(json{{"join", true}, {"side", static_cast<int>(side)}, {"flow", flow}}.dump());
  reader_ = std::jthread([this](const std::stop_token& stop) { read(stop); });
}

RemoteFlowGate::~RemoteFlowGate() = default;  // the reader stops, then the link closes

void RemoteFlowGate::read(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    if (!readable(link_->liveness_fd(), kPollMs)) continue;
    json message;
    try {
      message = json::parse(link_->receive_text(5s));
    } catch (const std::exception& e) {
      message = {{"abort", std::string("lost the coordinator of the test's flows: ") + e.what()}};
    }
    if (message.contains("stop")) {
      // A stop for an earlier phase came late: it is not this one's.
      if (message.at("stop").get<std::uint64_t>() == phase_.load()) stop_.lower_to(engine::now());
      continue;
    }
    const std::lock_guard lock(mutex_);
    if (message.contains("open")) {
      opened_ = std::max(opened_, message.at("open").get<std::uint64_t>());
    } else if (message.contains("abort")) {
      aborted_ = message.at("abort").get<std::string>();
      stop_.lower_to(engine::now());
      changed_.notify_all();
      return;  // nothing more comes
    }
    changed_.notify_all();
  }
}

void RemoteFlowGate::gather(const std::atomic<bool>& abort) {
  const std::uint64_t phase = phase_.load() + 1;
  {
    const std::lock_guard lock(mutex_);
    if (!aborted_.empty()) throw engine::Aborted(aborted_);
    // Before the arrival: no stop of this phase can come before it.
    stop_.at.store(engine::kNever);
    phase_.store(phase);
  }
  try {
    link_->send_text(json{{"arrive", phase}}.dump());
  } catch (const bootstrap::BootstrapError& e) {
    throw engine::Aborted(std::string("lost the coordinator of the test's flows: ") + e.what());
  }
  std::unique_lock lock(mutex_);
  // In slices, so that this flow's own failure (the watchdog) ends the wait.
  while (opened_ < phase) {
    if (!aborted_.empty()) throw engine::Aborted(aborted_);
    if (abort.load()) throw engine::Aborted("waiting for the test's other flows to start");
    changed_.wait_for(lock, 20ms);
  }
}

void RemoteFlowGate::done(std::size_t) {
  try {
    link_->send_text(json{{"done", phase_.load()}}.dump());
  } catch (const bootstrap::BootstrapError&) {
    // the reader finds the coordinator gone
  }
}

}  // namespace uniperf::session
