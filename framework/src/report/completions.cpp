#include "report/completions.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <string_view>

#include "results/csv_field.hpp"
#include "results/trace_file.hpp"

namespace uniperf::report {
namespace {

template <class T>
bool number(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

void CompletionSampler::add(const std::string& config, const std::string& test, std::uint64_t size,
                            std::uint32_t flow, bool responder, std::int64_t posted_ns,
                            std::int64_t completed_ns, const std::string& pair) {
  note_first_post({config, test, size}, posted_ns);
  if (completed_ns != 0)
    sample(series_[{config, test, size, flow, responder, pair}], posted_ns, completed_ns);
}

void CompletionSampler::add(const results::Record& record) {
  if (record.trace.empty()) return;
  // A record's rows belong to few series (its flows, either side): each
  // is looked up once, not once per row.
  std::map<std::pair<std::uint32_t, bool>, Series*> of_record;
  std::int64_t first_post = std::numeric_limits<std::int64_t>::max();
  for (const results::TraceRow& row : record.trace) {
    first_post = std::min(first_post, row.posted_ns);
    if (row.completed_ns == 0) continue;
    Series*& series = of_record[{row.flow, row.responder}];
    if (series == nullptr) {
      series = &series_[{record.config, record.test, record.size, row.flow + 1, row.responder,
                         results::trace_pair(record, row.flow)}];
    }
    sample(*series, row.posted_ns, row.completed_ns);
  }
  note_first_post({record.config, record.test, record.size}, first_post);
}

void CompletionSampler::note_first_post(const Record& record, std::int64_t posted_ns) {
  auto [first, inserted] = first_post_ns_.try_emplace(record, posted_ns);
  if (!inserted) first->second = std::min(first->second, posted_ns);
}

void CompletionSampler::sample(Series& s, std::int64_t posted_ns, std::int64_t completed_ns) {
  if (s.seen++ % s.stride != 0) return;
  s.points.emplace_back(completed_ns, completed_ns - posted_ns);
  if (s.points.size() == 2 * kPointsPerSeries) {
    // Full: keep every other point, and from now on every other request.
    for (std::size_t i = 0; i < kPointsPerSeries; ++i) s.points[i] = s.points[2 * i];
    s.points.resize(kPointsPerSeries);
    s.stride *= 2;
  }
}

std::string CompletionSampler::read_file(const std::filesystem::path& path,
                                         const std::map<std::string, std::string>& renamed) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path.string();
  std::string line;
  std::size_t number_of_line = 0;
  int side_column = -1;
  int pair_column = -1;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = results::csv_fields(line);
    if (fields.size() > 0 && fields[0] == "config") {
      // The header: format 2 has a `side` column.
      const auto side = std::find(fields.begin(), fields.end(), "side");
      side_column = side == fields.end() ? -1 : static_cast<int>(side - fields.begin());
      // Format 3 names a launched job's pair.
      const auto pair = std::find(fields.begin(), fields.end(), "pair");
      pair_column = pair == fields.end() ? -1 : static_cast<int>(pair - fields.begin());
      continue;
    }
    std::uint64_t size = 0;
    std::uint32_t flow = 0;
    std::int64_t posted = 0, completed = 0;
    if (fields.size() < 11 || !number(fields[2], size) || !number(fields[3], flow) ||
        !number(fields[8], posted) || !number(fields[9], completed) ||
        (side_column >= 0 && static_cast<std::size_t>(side_column) >= fields.size()) ||
        (pair_column >= 0 && static_cast<std::size_t>(pair_column) >= fields.size())) {
      return path.string() + ":" + std::to_string(number_of_line) + ": not a trace row";
    }
    // Times are nanoseconds since the epoch and a request completes after
    // its post: what breaks that is no trace of a run (and the differences
    // taken below could overflow).
    if (posted < 0 || completed < 0 || (completed != 0 && completed < posted)) {
      return path.string() + ":" + std::to_string(number_of_line) +
             ": not a trace row: a time before 1970, or a completion before its post";
    }
    const bool responder = side_column >= 0 && fields[side_column] == "responder";
    std::string config = fields[0];
    if (const auto label = renamed.find(config); label != renamed.end()) config = label->second;
    add(config, fields[1], size, flow, responder, posted, completed,
        pair_column >= 0 ? fields[pair_column] : std::string());
  }
  return "";
}

nlohmann::json CompletionSampler::to_json() const {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& [key, s] : series_) {
    const auto& [config, test, size, flow, responder, pair] = key;
    const std::int64_t origin = first_post_ns_.at({config, test, size});
    nlohmann::json at_ms = nlohmann::json::array(), took_us = nlohmann::json::array();
    for (const auto& [completed, took] : s.points) {
      at_ms.push_back(static_cast<double>(completed - origin) / 1e6);
      took_us.push_back(static_cast<double>(took) / 1e3);
    }
    all.push_back({{"config", config},
                   {"test", test},
                   {"size", size},
                   {"flow", flow},
                   {"side", responder ? "responder" : "initiator"},
                   {"pair", pair},
                   {"at_ms", std::move(at_ms)},
                   {"took_us", std::move(took_us)}});
  }
  return all;
}

}  // namespace uniperf::report
