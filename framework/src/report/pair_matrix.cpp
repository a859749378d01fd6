#include "report/pair_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "report/csv_reporter.hpp"
#include "report/table.hpp"

namespace uniperf::report {
namespace {

using nlohmann::json;

/// The launcher's node name where it gave one (two slurmd on one host share
/// the host name), else the host's; with the local rank when known.
std::string name_of(const results::RankPlace& place) {
  const std::string& where = place.node.empty() ? place.host : place.node;
  return place.local_rank ? fmt::format("{}/{}", where, *place.local_rank) : where;
}

bool is_suspect(const PairMatrix& m, double value, const SuspectRule& rule) {
  return m.lower_is_better ? value > rule.latency_factor * m.best
                           : value < rule.bandwidth_fraction * m.best;
}

void find_suspects(PairMatrix& m, const SuspectRule& rule) {
  bool any = false;
  for (int i = 0; i < m.ranks; ++i) {
    for (int j = i + 1; j < m.ranks; ++j) {
      const auto& cell = m.cells[i][j];
      if (!cell) {
        m.missing_pairs.emplace_back(i, j);
        continue;
      }
      m.best = !any ? *cell : m.lower_is_better ? std::min(m.best, *cell) : std::max(m.best, *cell);
      any = true;
    }
  }
  if (!any) return;
  std::vector<int> measured(static_cast<std::size_t>(m.ranks)),
      suspect(static_cast<std::size_t>(m.ranks));
  for (int i = 0; i < m.ranks; ++i) {
    for (int j = i + 1; j < m.ranks; ++j) {
      const auto& cell = m.cells[i][j];
      if (!cell) continue;
      ++measured[i];
      ++measured[j];
      if (is_suspect(m, *cell, rule)) {
        const auto retest = std::find_if(m.retests.begin(), m.retests.end(),
                                         [&](const auto& r) { return r.first == std::pair(i, j); });
        if (retest != m.retests.end() && !is_suspect(m, retest->second, rule)) {
          m.cleared_pairs.emplace_back(i, j);
          continue;
        }
        m.suspect_pairs.emplace_back(i, j);
        ++suspect[i];
        ++suspect[j];
      }
    }
  }
  // A rank in one suspect pair of several points at the other end, or the
  // cable between; one in more than half of its pairs is the node itself.
  for (int r = 0; r < m.ranks; ++r) {
    if (2 * suspect[r] > measured[r]) m.suspect_ranks.push_back(r);
  }
}

}  // namespace

std::vector<PairMatrix> build_matrices(const std::vector<results::Record>& records,
                                       const SuspectRule& rule) {
  std::vector<PairMatrix> matrices;
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::size_t> index;
  for (const auto& r : records) {
    if (!r.placement || r.placement->pairs != "all") continue;
    const auto& p = *r.placement;
    const auto key = std::make_tuple(r.config, r.test, r.size);
    auto [it, added] = index.emplace(key, matrices.size());
    if (added) {
      PairMatrix& m = matrices.emplace_back();
      m.config = r.config;
      m.test = r.test;
      m.size = r.size;
      m.ranks = p.ranks;
      m.names.assign(static_cast<std::size_t>(p.ranks), "");
      m.cells.assign(static_cast<std::size_t>(p.ranks),
                     std::vector<std::optional<double>>(static_cast<std::size_t>(p.ranks)));
    }
    PairMatrix& m = matrices[it->second];
    const int i = p.initiator.rank, j = p.responder.rank;
    if (i < 0 || j < 0 || i >= m.ranks || j >= m.ranks || i == j) continue;
    m.names[i] = name_of(p.initiator);
    m.names[j] = name_of(p.responder);
    const auto [value, label] = headline(r);
    if (m.metric.empty() || r.status == results::Status::ok) {
      m.metric = label;
      m.lower_is_better = r.flow.pattern == model::Pattern::latency;
    }
    if (r.status != results::Status::ok || value <= 0) continue;
    if (p.retest) {
      m.retests.emplace_back(std::make_pair(std::min(i, j), std::max(i, j)), value);
      continue;
    }
    m.cells[i][j] = value;
    m.cells[j][i] = value;
  }
  for (PairMatrix& m : matrices) find_suspects(m, rule);
  return matrices;
}

void write_matrix_json(std::ostream& out, const std::vector<results::Record>& records,
                       const SuspectRule& rule) {
  json matrices = json::array();
  for (const PairMatrix& m : build_matrices(records, rule)) {
    json cells = json::array();
    for (const auto& row : m.cells) {
      json values = json::array();
      for (const auto& cell : row) values.push_back(cell ? json(*cell) : json(nullptr));
      cells.push_back(std::move(values));
    }
    matrices.push_back({{"config", m.config},
                        {"test", m.test},
                        {"size", m.size},
                        {"metric", m.metric},
                        {"lower_is_better", m.lower_is_better},
                        {"ranks", m.ranks},
                        {"names", m.names},
                        {"cells", std::move(cells)},
                        {"best", m.best},
                        {"suspect_pairs", m.suspect_pairs},
                        {"suspect_ranks", m.suspect_ranks},
                        {"missing_pairs", m.missing_pairs},
                        {"cleared_pairs", m.cleared_pairs}});
  }
  out << json{{"rule",
               {{"latency_factor", rule.latency_factor},
                {"bandwidth_fraction", rule.bandwidth_fraction}}},
              {"matrices", std::move(matrices)}}
             .dump(2)
      << "\n";
}

void write_matrix_csv(std::ostream& out, const std::vector<results::Record>& records,
                      const SuspectRule& rule) {
  out << "config,test,size,metric,initiator,responder,initiator_host,responder_host,value,"
         "suspect\r\n";
  for (const PairMatrix& m : build_matrices(records, rule)) {
    for (int i = 0; i < m.ranks; ++i) {
      for (int j = 0; j < m.ranks; ++j) {
        if (i == j) continue;
        const auto& cell = m.cells[i][j];
        const bool suspect =
            std::find(m.suspect_pairs.begin(), m.suspect_pairs.end(),
                      std::make_pair(std::min(i, j), std::max(i, j))) != m.suspect_pairs.end();
        out << fmt::format("{},{},{},{},{},{},{},{},{},{}\r\n", csv_field(m.config),
                           csv_field(m.test), m.size, csv_field(m.metric), i, j,
                           csv_field(m.names[i]), csv_field(m.names[j]),
                           cell ? fmt::format("{:.6g}", *cell) : "", suspect ? "yes" : "");
      }
    }
  }
}

void print_matrices(std::ostream& out, const std::vector<PairMatrix>& matrices,
                    const SuspectRule& rule) {
  for (const PairMatrix& m : matrices) {
    out << fmt::format("\n{} / {} {} B: {} between every pair of {} ranks{}\n", m.config, m.test,
                       m.size, m.metric, m.ranks,
                       m.lower_is_better
                           ? fmt::format(" ('!' above {}x the lowest)", rule.latency_factor)
                           : fmt::format(" ('!' below {}x the highest)", rule.bandwidth_fraction));
    out << fmt::format("{:>6}", "");
    for (int j = 0; j < m.ranks; ++j) out << fmt::format("{:>11}", j);
    out << "\n";
    for (int i = 0; i < m.ranks; ++i) {
      out << fmt::format("{:>6}", i);
      for (int j = 0; j < m.ranks; ++j) {
        const auto& cell = m.cells[i][j];
        if (i == j) {
          out << fmt::format("{:>11}", "-");
        } else if (!cell) {
          out << fmt::format("{:>11}", "?");
        } else {
          const auto pair = std::make_pair(std::min(i, j), std::max(i, j));
          const bool named = std::find(m.suspect_pairs.begin(), m.suspect_pairs.end(), pair) !=
                             m.suspect_pairs.end();
          out << fmt::format("{:>10.4g}{}", *cell, named ? '!' : ' ');
        }
      }
      out << fmt::format("  {}\n", m.names[i]);
    }
    if (!m.suspect_pairs.empty()) {
      std::string pairs;
      for (const auto& [i, j] : m.suspect_pairs) pairs += fmt::format(" {}-{}", i, j);
      out << "  suspect pairs:" << pairs << "\n";
    }
    if (!m.suspect_ranks.empty()) {
      std::string ranks;
      for (const int r : m.suspect_ranks) ranks += fmt::format(" {} ({})", r, m.names[r]);
      out << "  suspect ranks (in more than half of their pairs):" << ranks << "\n";
    }
    if (!m.cleared_pairs.empty()) {
      std::string pairs;
      for (const auto& [i, j] : m.cleared_pairs) pairs += fmt::format(" {}-{}", i, j);
      out << "  cleared by their retest alone:" << pairs << "\n";
    }
    if (!m.missing_pairs.empty()) {
      std::string pairs;
      for (const auto& [i, j] : m.missing_pairs) pairs += fmt::format(" {}-{}", i, j);
      out << "  not measured (error or skipped):" << pairs << "\n";
    }
  }
}

}  // namespace uniperf::report
