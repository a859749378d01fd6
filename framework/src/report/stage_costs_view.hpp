// The stage costs of `uniperf stages -o FILE` (docs/pipeline.md, "Stage
// costs") as the HTML report's tables, beside the fragment sweeps they
// explain: the copy a staged or copying pipeline adds per fragment, and
// what registering a fresh buffer costs each config's plugin.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace uniperf::report {

/// Why `stages` is not a stage-cost file this report can read ("" when it
/// is): the schema's major version, and the fields the tables use, with
/// their types, each named by its path ("copy[2].MB_per_s").
std::string stage_costs_problem(const nlohmann::json& stages);

/// The "Stage costs" section: copy MB/s per size and pages (with the
/// trials' 95% CI), then per config the median register, release and
/// register-again times per size and pages, then what was skipped and why.
/// `stages` must have passed stage_costs_problem(); null writes nothing.
void write_stage_costs(std::ostream& out, const nlohmann::json& stages);

}  // namespace uniperf::report
