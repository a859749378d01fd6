#include "results/trace_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "model/test_spec.hpp"
#include "results/csv_field.hpp"

namespace uniperf::results {

std::filesystem::path trace_path_for(const std::string& results_path) {
  return sidecar_path_for(results_path, ".trace.csv");
}

TraceFile::TraceFile(std::filesystem::path target, const std::string& suite)
    : file_(std::move(target),
            fmt::format("# uniperf per-request trace, format 3 (docs/traces.md); suite {}\n"
                        "# times: nanoseconds since the Unix epoch, the initiator's clock (the "
                        "responder's rows moved onto it by the measured offset; a launched "
                        "job's pairs' onto rank 0's)\n{}\n",
                        suite, kTraceColumns)) {}

void TraceFile::add(const Record& record) {
  if (record.trace.empty()) return;
  std::string& text = file_.rows();
  if (!provenance_written_) {
    text += "# provenance: " + record.provenance.dump() + "\n";
    provenance_written_ = true;
  }
  // What each flow moved: its op, and its bytes per request (8 for atomics).
  auto flow_of = [&](std::uint32_t k) -> const model::FlowSpec& {
    return record.flows.empty() || k >= record.flows.size() ? record.flow : record.flows[k].flow;
  };
  // The pair of each flow's rows, formatted once per flow.
  std::vector<std::string> pairs;
  for (std::uint32_t k = 0; k < std::max<std::size_t>(1, record.flows.size()); ++k)
    pairs.push_back(trace_pair(record, k));
  for (const TraceRow& row : record.trace) {
    const model::FlowSpec& flow = flow_of(row.flow);
    const std::string& pair = row.flow < pairs.size() ? pairs[row.flow] : pairs.front();
    const std::uint64_t bytes = is_atomic(flow.op) ? 8 : flow.size != 0 ? flow.size : record.size;
    fmt::format_to(std::back_inserter(text), "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                   csv_field(record.config), csv_field(record.test), record.size, row.flow + 1,
                   row.lane, row.id, to_string(flow.op), bytes, row.posted_ns, row.completed_ns,
                   row.completed_ns == 0 ? "none"
                   : row.signaled        ? "signaled"
                                         : "covered",
                   row.responder ? "responder" : "initiator", row.returned_ns, pair);
    file_.end_row();
  }
  file_.flush();
}

std::string trace_pair(const Record& record, std::uint32_t flow) {
  // A launched job's pair, as its ranks: several pairs measure one record's
  // (config, test, size) at once, and the flows of a test in separate
  // processes each had a pair of their own.
  const std::optional<Placement>& placement =
      flow < record.flows.size() && record.flows[flow].placement ? record.flows[flow].placement
                                                                 : record.placement;
  return placement ? fmt::format("{}-{}", placement->initiator.rank, placement->responder.rank)
                   : std::string();
}

void TraceFile::commit() {
  file_.commit();
}

}  // namespace uniperf::results
