// A sample of every traced request's completion, for the HTML report's
// completion timelines (docs/traces.md, "Pictures"): per record and per
// flow and side, at most kPointsPerSeries requests, spread evenly over the
// whole run by halving the sample whenever it fills (so memory stays
// bounded however long the run), each as its completion time (ms from the
// record's first post) and its post-to-completion time (us). Fed from the
// records of a run as they finish, or from a trace file read back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

class CompletionSampler {
 public:
  static constexpr std::size_t kPointsPerSeries = 1000;

  /// One traced request of flow `flow` (from 1) of the record (config,
  /// test, size), measured by the pair of ranks `pair` ("0-2"; "" outside
  /// a job of more than two ranks, results::trace_pair); one that never
  /// completed is left out.
  void add(const std::string& config, const std::string& test, std::uint64_t size,
           std::uint32_t flow, bool responder, std::int64_t posted_ns, std::int64_t completed_ns,
           const std::string& pair = "");
  /// Every trace row of `record`.
  void add(const results::Record& record);
  /// The rows of a trace file (results/trace_file.hpp; format 1 has no
  /// `side` column: the initiator's). "" when read whole, else what stopped
  /// it (the rows before it are kept). A config in `renamed` takes its new
  /// name (the report's label for it, when several inputs hold it).
  std::string read_file(const std::filesystem::path& path,
                        const std::map<std::string, std::string>& renamed = {});

  bool empty() const { return series_.empty(); }
  /// [{config, test, size, flow, side, pair, at_ms: [...], took_us: [...]}],
  /// the points of each series in completion order; the pairs of a job's
  /// round, which measure one (config, test, size) at once, apart.
  nlohmann::json to_json() const;

 private:
  using Record = std::tuple<std::string, std::string, std::uint64_t>;
  using Key = std::tuple<std::string, std::string, std::uint64_t, std::uint32_t, bool, std::string>;
  struct Series {
    std::vector<std::pair<std::int64_t, std::int64_t>> points;  ///< completed_ns, took_ns
    std::uint64_t stride = 1;                                   ///< every stride-th request is kept
    std::uint64_t seen = 0;
  };
  void note_first_post(const Record& record, std::int64_t posted_ns);
  /// Keeps the request when its turn in the series' stride came.
  static void sample(Series& s, std::int64_t posted_ns, std::int64_t completed_ns);

  std::map<Key, Series> series_;
  std::map<Record, std::int64_t> first_post_ns_;
};

}  // namespace uniperf::report
