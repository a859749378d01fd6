#include "report/fragment_grid.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace uniperf::report {

std::vector<FragmentGrid> build_fragment_grids(const std::vector<results::Record>& records) {
  using Key = std::pair<std::string, std::string>;  // config, sweep
  std::vector<Key> order;
  std::map<Key, std::map<std::pair<std::uint64_t, std::uint32_t>, double>> cells;
  for (const results::Record& r : records) {
    const std::size_t suffix = r.test.find(".fragment_");
    // A pipelined ping-pong's figure is its latency, in the tables: the
    // grids are of bandwidth.
    if (r.status != results::Status::ok || !r.bandwidth || r.flow.fragment == 0 ||
        r.flow.pattern == model::Pattern::latency || suffix == std::string::npos || suffix == 0)
      continue;
    // The sweep is the test's name without its fragment: NAME.fragment_F
    // is NAME's, NAME.fragment_F.source_S (a `source: auto` sweep beside
    // it) NAME.source_S's, a heatmap per source.
    // (The fragment is as the suite wrote it, 1K or 1024.)
    const std::size_t source = r.test.find(".source_", suffix);
    const Key key{r.config, r.test.substr(0, suffix) +
                                (source == std::string::npos ? "" : r.test.substr(source))};
    if (!cells.count(key)) order.push_back(key);
    cells[key][{r.size, r.flow.fragment}] = r.bandwidth->mb_per_s;
  }

  std::vector<FragmentGrid> grids;
  for (const Key& key : order) {
    const auto& measured = cells.at(key);
    FragmentGrid g{key.first, key.second, {}, {}, {}, {}};
    for (const auto& [at, value] : measured) {
      g.sizes.push_back(at.first);
      g.fragments.push_back(at.second);
    }
    const auto sort_unique = [](auto& axis) {
      std::sort(axis.begin(), axis.end());
      axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
    };
    sort_unique(g.sizes);
    sort_unique(g.fragments);
    if (g.fragments.size() < 2) continue;
    for (const std::uint64_t size : g.sizes) {
      auto& row = g.mb_per_s.emplace_back(g.fragments.size());
      std::optional<std::size_t> best;
      for (std::size_t k = 0; k < g.fragments.size(); ++k) {
        const auto found = measured.find({size, g.fragments[k]});
        if (found == measured.end()) continue;
        row[k] = found->second;
        if (!best || *row[k] > *row[*best]) best = k;
      }
      g.best.push_back(best);
    }
    grids.push_back(std::move(g));
  }
  return grids;
}

}  // namespace uniperf::report
