#include "report/latency_samples.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>

#include "results/csv_field.hpp"
#include "results/trace_file.hpp"

namespace uniperf::report {
namespace {

template <class T>
bool number(const std::string& text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

void LatencySampler::add(const results::Record& record) {
  for (const auto& kept : record.kept_samples) {
    summarize(record.config, record.test, record.size, kept.flow + 1,
              results::trace_pair(record, kept.flow), kept.us);
  }
}

void LatencySampler::summarize(const std::string& config, const std::string& test,
                               std::uint64_t size, std::uint32_t flow, const std::string& pair,
                               std::vector<double> samples) {
  if (samples.empty()) return;
  const std::size_t n = samples.size();
  // Over time first, while the samples are in the order they ran.
  const std::size_t per_bucket = (n + kBuckets - 1) / kBuckets;
  nlohmann::json from = nlohmann::json::array(), p50 = nlohmann::json::array(),
                 most = nlohmann::json::array();
  std::vector<double> bucket;
  for (std::size_t first = 0; first < n; first += per_bucket) {
    bucket.assign(samples.begin() + static_cast<std::ptrdiff_t>(first),
                  samples.begin() + static_cast<std::ptrdiff_t>(std::min(n, first + per_bucket)));
    const auto middle = bucket.begin() + static_cast<std::ptrdiff_t>(bucket.size() / 2);
    std::nth_element(bucket.begin(), middle, bucket.end());
    from.push_back(first);
    p50.push_back(*middle);
    most.push_back(*std::max_element(bucket.begin(), bucket.end()));
  }
  std::sort(samples.begin(), samples.end());
  nlohmann::json cdf_us = nlohmann::json::array(), cdf_fraction = nlohmann::json::array();
  for (std::size_t q = 0; q <= kQuantiles; ++q) {
    const double fraction = static_cast<double>(q) / kQuantiles;
    const auto at = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n - 1)));
    cdf_us.push_back(samples[at]);
    cdf_fraction.push_back(fraction);
  }
  series_.push_back({{"config", config},
                     {"test", test},
                     {"size", size},
                     {"flow", flow},
                     {"pair", pair},
                     {"samples", n},
                     {"cdf_us", std::move(cdf_us)},
                     {"cdf_fraction", std::move(cdf_fraction)},
                     {"bucket_from", std::move(from)},
                     {"bucket_p50_us", std::move(p50)},
                     {"bucket_max_us", std::move(most)}});
}

std::string LatencySampler::read_file(const std::filesystem::path& path,
                                      const std::map<std::string, std::string>& renamed) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path.string();
  using Key = std::tuple<std::string, std::string, std::uint64_t, std::uint32_t, std::string>;
  std::map<Key, std::vector<double>> read;
  std::vector<Key> order;  // series in the order the file holds them
  std::string line, stopped;
  std::size_t number_of_line = 0;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (line.empty() || line[0] == '#' || line.starts_with("config,")) continue;
    const std::vector<std::string> fields = results::csv_fields(line);
    std::uint64_t size = 0;
    std::uint32_t flow = 0;
    double us = 0;
    // Format 1 had no `pair` column.
    if ((fields.size() != 6 && fields.size() != 7) || !number(fields[2], size) ||
        !number(fields[3], flow) || !number(fields[5], us)) {
      stopped = path.string() + ":" + std::to_string(number_of_line) + ": not a samples row";
      break;
    }
    std::string config = fields[0];
    if (const auto label = renamed.find(config); label != renamed.end()) config = label->second;
    const Key key{config, fields[1], size, flow, fields.size() == 7 ? fields[6] : std::string()};
    auto [series, inserted] = read.try_emplace(key);
    if (inserted) order.push_back(key);
    series->second.push_back(us);
  }
  for (const Key& key : order) {
    auto& [config, test, size, flow, pair] = key;
    summarize(config, test, size, flow, pair, std::move(read.at(key)));
  }
  return stopped;
}

}  // namespace uniperf::report
