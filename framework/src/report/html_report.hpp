// The HTML report: ONE self-contained file (no network needed to view it)
// with, per test, latency (p50 line, p90 and p99 bands) or bandwidth /
// message rate against message size, one series per config on log axes;
// the side-by-side table with ratios; where each config ran; and, for a
// launched job's `pairs: all` tests, the node-pair matrices as heatmaps. The chart
// library (uPlot) and the page's script and style are inlined from the
// binary; the records go in as JSON in a <script type="application/json">.
// The same records give the same bytes.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "report/escape.hpp"
#include "report/pair_matrix.hpp"
#include "results/record.hpp"

namespace uniperf::report {

// Views format the results layer's records (results/record.hpp).
using results::FlowResult;
using results::Record;
using results::Status;

/// `completions`: a sample of the traced requests (report/completions.hpp,
/// CompletionSampler::to_json), drawn as completion timelines; null: none.
/// `latency_samples`: the kept samples summarised
/// (report/latency_samples.hpp), drawn as CDFs and latency over time.
/// `stage_costs`: a file of `uniperf stages` (report/stage_costs_view.hpp),
/// its tables beside the fragment sweeps; null: none.
void write_html(std::ostream& out, const std::vector<Record>& records, std::string_view title,
                const SuspectRule& rule = {}, const nlohmann::json& completions = nlohmann::json(),
                const nlohmann::json& latency_samples = nlohmann::json(),
                const nlohmann::json& stage_costs = nlohmann::json());

/// JSON text made safe inside a <script> element: '<', '>' and '&' become
/// \u escapes (in JSON they only occur inside strings, where the escape
/// means the same character), so "</script" and "<!--" cannot appear.
std::string script_safe_json(const nlohmann::json& value);

}  // namespace uniperf::report
