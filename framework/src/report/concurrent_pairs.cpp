#include "report/concurrent_pairs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "model/test_spec.hpp"
#include "report/table.hpp"
#include "results/overlap.hpp"

namespace uniperf::report {
namespace {

bool ran_at_once(const results::Placement& p) {
  return !p.retest && (p.pairs == model::to_string(model::RankPairs::bisection) ||
                       p.pairs == model::to_string(model::RankPairs::incast) ||
                       p.pairs == model::to_string(model::RankPairs::fanout) ||
                       p.pairs == model::to_string(model::RankPairs::neighbors) ||
                       p.pairs == model::to_string(model::RankPairs::all_to_all));
}

std::string what_ran(const ConcurrentPairs& g) {
  const std::size_t n = g.values.size();
  if (g.pairs == "bisection")
    return fmt::format("across the bisection of {} ranks, {} pairs at once", g.ranks, n);
  if (g.pairs == "incast") return fmt::format("into rank 0 from {} ranks at once (incast)", n);
  if (g.pairs == "fanout") return fmt::format("from rank 0 to {} ranks at once (fanout)", n);
  if (g.pairs == "neighbors")
    return fmt::format("each of {} ranks to the next, {} pairs at once", g.ranks, n);
  return fmt::format("all to all among {} ranks, {} pairs at once", g.ranks, n);
}

/// Four significant digits, without an exponent for what a fabric measures
/// (10740 MB/s, not 1.074e+04).
std::string four_digits(double value) {
  const double magnitude = std::abs(value);
  if (magnitude == 0 || magnitude >= 1e12 || magnitude < 1e-3) return fmt::format("{:.4g}", value);
  const int digits_before_point = static_cast<int>(std::floor(std::log10(magnitude))) + 1;
  return fmt::format("{:.{}f}", value, std::max(0, 4 - digits_before_point));
}

std::string duration(double ms) {
  return ms >= 1000 ? four_digits(ms / 1000) + " s" : four_digits(ms) + " ms";
}

}  // namespace

double ConcurrentPairs::sum() const {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

double ConcurrentPairs::median() const {
  const std::size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<ConcurrentPairs> concurrent_pairs(const std::vector<results::Record>& records) {
  using Key = std::tuple<std::string, std::string, std::uint64_t, std::size_t>;
  struct Gathering {
    ConcurrentPairs group;
    bool every_interval = true;
    std::vector<results::MeasuredInterval> intervals;
  };
  std::vector<Key> order;
  std::map<Key, Gathering> by_key;
  for (const auto& r : records) {
    if (!r.placement || !ran_at_once(*r.placement) || r.status != results::Status::ok) continue;
    const Key key{r.config, r.test, r.size, r.placement->round};
    auto [it, added] = by_key.try_emplace(key);
    Gathering& g = it->second;
    if (added) {
      order.push_back(key);
      g.group.config = r.config;
      g.group.test = r.test;
      g.group.size = r.size;
      g.group.pairs = r.placement->pairs;
      g.group.round = r.placement->round;
      g.group.ranks = r.placement->ranks;
    }
    const auto [value, label] = headline(r);
    g.group.metric = label;
    g.group.lower_is_better = r.flow.pattern == model::Pattern::latency;
    g.group.values.push_back(value);
    if (!r.measured) {
      g.every_interval = false;
      continue;
    }
    g.intervals.push_back(*r.measured);
  }
  std::vector<ConcurrentPairs> groups;
  for (const Key& key : order) {
    Gathering& g = by_key.at(key);
    std::sort(g.group.values.begin(), g.group.values.end());
    if (const auto overlap = results::overlap_of(g.intervals); overlap && g.every_interval) {
      g.group.span_ms = overlap->span_us / 1e3;
      g.group.overlap = overlap->together;
    }
    groups.push_back(std::move(g.group));
  }
  return groups;
}

void print_concurrent_pairs(std::ostream& out, const std::vector<results::Record>& records) {
  for (const ConcurrentPairs& g : concurrent_pairs(records)) {
    out << fmt::format("\n{} / {} {} B {}: ", g.config, g.test, g.size, what_ran(g));
    if (!g.lower_is_better) out << fmt::format("sum {} {}, ", four_digits(g.sum()), g.metric);
    out << fmt::format("per pair min {}, median {}, max {} {}", four_digits(g.values.front()),
                       four_digits(g.median()), four_digits(g.values.back()), g.metric);
    if (g.overlap) {
      out << fmt::format("; all of them ran together for {:.0f}% of their {}", 100 * *g.overlap,
                         duration(g.span_ms));
      if (*g.overlap < results::kLeastMeaningfulOverlap && g.values.size() > 1) {
        out << (g.lower_is_better ? " (mostly one after another: not measured under each other's "
                                    "load; give the test a duration)"
                                  : " (mostly one after another: the sum is no concurrent total; "
                                    "give the test a duration)");
      }
    }
    out << "\n";
  }
}

}  // namespace uniperf::report
