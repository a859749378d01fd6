#include "session/alone_baselines.hpp"

#include <fmt/format.h>

#include "results/competition.hpp"

namespace uniperf::session {

AloneBaselines::AloneBaselines(const model::SuiteSpec& suite) {
  for (const model::TestSpec& test : suite.tests) {
    for (const std::string& name : test.baselines) {
      if (!name.empty()) baselines_.insert(name);
    }
  }
}

void AloneBaselines::remember(const model::TestSpec& test, const results::Record& record) {
  if (record.status != results::Status::ok || !record.latency || !baselines_.contains(test.name))
    return;
  measured_[{test.name, record.size}] = *record.latency;
}

void AloneBaselines::compare(const model::TestSpec& test, results::Record& record) const {
  if (record.status != results::Status::ok) return;
  for (std::size_t k = 0; k < test.baselines.size() && k < record.flows.size(); ++k) {
    const std::string& name = test.baselines[k];
    results::FlowResult& flow = record.flows[k];
    if (name.empty() || !flow.latency) continue;
    // A flow with its own size was measured alone at that size.
    const std::uint64_t size = flow.flow.size != 0 ? flow.flow.size : record.size;
    const auto alone = measured_.find({name, size});
    if (alone == measured_.end()) {
      record.warnings.push_back(
          fmt::format("flow {}: no baseline to compare with: test '{}' has no ok record at {} B",
                      k + 1, name, size));
      continue;
    }
    // While every flow ran, where the flows ran together at all.
    const results::LatencyStats& beside =
        flow.common_latency ? *flow.common_latency : *flow.latency;
    flow.alone = results::compare_with_alone(beside, name, alone->second);
  }
}

}  // namespace uniperf::session
