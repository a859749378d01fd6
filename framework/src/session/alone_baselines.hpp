// A latency flow beside others against the same flow alone (`baseline:` in
// a suite, docs/traces.md): the records of the tests that measured flows
// alone are remembered per config, by (test, message size), and a later
// test's latency flows are compared with theirs in its record
// (results::AloneBaseline). Only the tests some test names as its baseline
// are kept, one latency summary per size, so memory does not grow with the
// run.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "model/suite_spec.hpp"
#include "results/record.hpp"

namespace uniperf::session {

class AloneBaselines {
 public:
  explicit AloneBaselines(const model::SuiteSpec& suite);

  /// A new config: its baselines are measured again.
  void clear() { measured_.clear(); }

  /// Keeps `record`'s latency when `test` is some test's baseline and the
  /// record is ok.
  void remember(const model::TestSpec& test, const results::Record& record);

  /// Fills each baselined latency flow's `alone` in `record` (an ok record
  /// of `test`), or warns that its baseline has no ok record at that size.
  void compare(const model::TestSpec& test, results::Record& record) const;

 private:
  std::set<std::string> baselines_;
  std::map<std::pair<std::string, std::uint64_t>, results::LatencyStats> measured_;
};

}  // namespace uniperf::session
