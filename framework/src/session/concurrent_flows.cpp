#include "session/concurrent_flows.hpp"

#include <string>
#include <thread>

#include "engine/lane.hpp"

namespace uniperf::session {

void ConcurrentFlows::set_up(const std::vector<engine::FlowPlan>& plans, model::StopRule until,
                             const std::vector<Context*>& rails, Plugin& plugin,
                             const std::vector<Options>& rail_options,
                             std::vector<engine::LaneMemory> mapped, engine::FlowGate* separate) {
  const std::size_t count = plans.size();
  if (count > 1) {
    channels_ = std::make_unique<bootstrap::ChannelMux>(control_, count);
    std::vector<model::Role> roles;
    for (const auto& plan : plans) roles.push_back(plan.flow.role);
    group_ = std::make_unique<engine::FlowGroup>(std::move(roles), until);
    gate_ = group_.get();
  } else {
    gate_ = separate;
  }
  const bool share_context = rails.front()->capabilities().thread_safe_endpoints;
  for (std::size_t k = 0; k < count; ++k) {
    std::vector<Context*> flow_rails = rails;
    if (k > 0 && !share_context) {
      for (std::size_t r = 0; r < flow_rails.size(); ++r) {
        try {
          extra_contexts_.push_back(plugin.open(rail_options.at(r)));
        } catch (const Unsupported& e) {
          throw Unsupported(std::string("concurrent flows need one Context each: ") + e.what());
        }
        flow_rails[r] = extra_contexts_.back().get();
      }
    }
    bootstrap::Bootstrap& channel = count > 1 ? channels_->channel(k) : control_;
    runners_.push_back(std::make_unique<engine::TestRunner>(flow_rails, channel, plans[k],
                                                            watchdog_.abort(), gate_, k));
    runners_.back()->setup(k < mapped.size() ? std::move(mapped[k]) : engine::LaneMemory{});
  }
  std::vector<Watchdog::ProgressSource> sources;
  for (const auto& runner : runners_)
    sources.push_back({&runner->progress().completions, &runner->progress().phase});
  watchdog_.watch_progress(std::move(sources));
}

ConcurrentFlows::~ConcurrentFlows() {
  watchdog_.watch_progress({});  // before the runners and their meters go
}

std::vector<engine::SizeOutcome> ConcurrentFlows::run_size(std::uint64_t size) {
  const std::size_t count = runners_.size();
  std::vector<engine::SizeOutcome> outcomes(count);
  if (count == 1) {
    outcomes[0] = runners_[0]->run(size);
    return outcomes;
  }
  std::vector<std::string> failures(count);
  std::vector<bool> aborted(count, false);
  auto run_one = [&](std::size_t k) {
    try {
      outcomes[k] = runners_[k]->run(size);
    } catch (const std::exception& e) {
      failures[k] = "flow " + std::to_string(k + 1) + ": " + e.what();
      aborted[k] = dynamic_cast<const engine::Aborted*>(&e) != nullptr;
      watchdog_.trip();
    }
  };
  {
    std::vector<std::jthread> threads;
    for (std::size_t k = 1; k < count; ++k) threads.emplace_back(run_one, k);
    run_one(0);
  }
  for (std::size_t k = 0; k < count; ++k) {
    if (!failures[k].empty() && !aborted[k]) throw TransportError(failures[k]);
  }
  for (const auto& failure : failures) {
    if (!failure.empty()) throw TransportError(failure);
  }
  return outcomes;
}

}  // namespace uniperf::session
