#include "engine/flow_group.hpp"

#include <algorithm>
#include <chrono>

#include "engine/errors.hpp"

namespace uniperf::engine {

FlowGroup::FlowGroup(std::vector<model::Role> roles, model::StopRule rule)
    : roles_(std::move(roles)),
      rule_(rule),
      measured_(static_cast<std::size_t>(
          std::count(roles_.begin(), roles_.end(), model::Role::measured))),
      stops_(std::make_unique<StopTime[]>(roles_.size())) {}

void FlowGroup::gather(const std::atomic<bool>& abort) {
  std::unique_lock lock(mutex_);
  const std::uint64_t generation = generation_;
  if (++waiting_ == roles_.size()) {
    waiting_ = 0;
    ++generation_;
    for (std::size_t k = 0; k < roles_.size(); ++k) stops_[k].at.store(kNever);
    measured_running_.store(measured_);
    arrived_.notify_all();
    return;
  }
  // In slices, so that a flow that failed (and raised the abort) before it
  // came does not keep the others here.
  while (generation_ == generation) {
    arrived_.wait_for(lock, std::chrono::milliseconds(20));
    if (generation_ == generation && abort.load()) {
      --waiting_;
      throw Aborted("waiting for the test's other flows to start");
    }
  }
}

void FlowGroup::done(std::size_t flow) {
  if (roles_[flow] != model::Role::measured) return;
  const bool last = measured_running_.fetch_sub(1) == 1;
  const Ticks t = now();
  for (std::size_t k = 0; k < roles_.size(); ++k) {
    if (k != flow && stops_when_measured_flow_ends(rule_, roles_[k], last)) stops_[k].lower_to(t);
  }
}

}  // namespace uniperf::engine
