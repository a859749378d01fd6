// The kept latency samples (keep_samples; results/samples_file.hpp) drawn
// small enough for the HTML report: per (config, test, size, flow) a CDF at
// fixed quantiles and the latency over time in buckets of iterations (each
// bucket's median and maximum, so a spike is never averaged away). Taken
// from the records as a run ends them, or from a samples file by `uniperf
// report`; a series is summarised once, when whole.
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

class LatencySampler {
 public:
  /// Points of a CDF (quantiles 0, 1/N, ..., 1) and buckets over time.
  static constexpr std::size_t kQuantiles = 200;
  static constexpr std::size_t kBuckets = 500;

  /// Every kept series of `record` (none: nothing).
  void add(const results::Record& record);
  /// The rows of a samples file. "" when read whole, else what stopped it
  /// (the series read before it are kept). A config in `renamed` takes its
  /// new name (the report's label for it, when several inputs hold it).
  std::string read_file(const std::filesystem::path& path,
                        const std::map<std::string, std::string>& renamed = {});

  bool empty() const { return series_.empty(); }
  /// [{config, test, size, flow, pair, samples, cdf_us: [...], cdf_fraction:
  ///   [...], bucket_from: [...], bucket_p50_us: [...], bucket_max_us: [...]}];
  /// `pair` names a launched job's pair of ranks ("" elsewhere), whose
  /// series a round's other pairs measure beside it.
  nlohmann::json to_json() const { return series_; }

 private:
  void summarize(const std::string& config, const std::string& test, std::uint64_t size,
                 std::uint32_t flow, const std::string& pair, std::vector<double> samples);

  nlohmann::json series_ = nlohmann::json::array();
};

}  // namespace uniperf::report
