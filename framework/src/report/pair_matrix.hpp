// The node-pair matrix: from the records of a `pairs: all` test of a
// launched job, one N x N matrix per (config, test, size) of its headline
// metric (p50 latency, MB/s or Mmsg/s; report::headline), and the pairs and
// ranks that stand out by a stated rule. Written as JSON (--matrix), CSV
// (--matrix-csv) and as text after a run.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

/// When a pair is a suspect, against the best pair of its matrix: latency
/// above `latency_factor` x the lowest, or bandwidth (and message rate)
/// below `bandwidth_fraction` x the highest. The defaults are the usual
/// cluster-acceptance rule.
struct SuspectRule {
  double latency_factor = 2.1;
  double bandwidth_fraction = 0.93;
};

struct PairMatrix {
  std::string config;
  std::string test;
  std::uint64_t size = 0;
  std::string metric;  ///< the headline's label, e.g. "p50 one-way us", "MB/s"
  bool lower_is_better = true;
  int ranks = 0;
  /// Per rank: its host and, where known, its local rank ("n1", "vm/2").
  std::vector<std::string> names;
  /// cells[i][j]: the pair {i, j}'s value, filled on both sides of the
  /// diagonal (each pair is measured once, from its lower rank); empty on
  /// the diagonal and for a pair whose record is not ok.
  std::vector<std::vector<std::optional<double>>> cells;
  double best = 0;  ///< the lowest latency or the highest rate of any pair
  /// Pairs (i < j) beyond the rule, and ranks for which more than half of
  /// their measured pairs are (a bad node slows every pair it is in; a bad
  /// cable or port one).
  std::vector<std::pair<int, int>> suspect_pairs;
  std::vector<int> suspect_ranks;
  /// Pairs with no ok record (failed, skipped, or not run).
  std::vector<std::pair<int, int>> missing_pairs;
  /// Pairs beyond the rule in the first pass that their retest (measured
  /// alone, placement.retest) brought back within it: not named suspects.
  std::vector<std::pair<int, int>> cleared_pairs;
  /// Each retested pair's second value, by pair (i < j).
  std::vector<std::pair<std::pair<int, int>, double>> retests;
};

/// Every matrix the records hold, in the order their tests first appear.
/// The cells are the first pass's; a pair beyond the rule whose retest is
/// within it (against the first pass's best) is cleared, one with no
/// retest or a retest beyond it stays a suspect.
std::vector<PairMatrix> build_matrices(const std::vector<results::Record>& records,
                                       const SuspectRule& rule = {});

/// As JSON: {"rule": {...}, "matrices": [{config, test, size, metric,
/// lower_is_better, ranks, names, cells (null where empty), best,
/// suspect_pairs, suspect_ranks, missing_pairs}]}.
void write_matrix_json(std::ostream& out, const std::vector<results::Record>& records,
                       const SuspectRule& rule = {});
/// As CSV: one row per cell (config, test, size, metric, initiator,
/// responder, initiator host, responder host, value, suspect).
void write_matrix_csv(std::ostream& out, const std::vector<results::Record>& records,
                      const SuspectRule& rule = {});
/// As text, for the terminal: a grid per matrix, suspects marked with '!'.
void print_matrices(std::ostream& out, const std::vector<PairMatrix>& matrices,
                    const SuspectRule& rule = {});

}  // namespace uniperf::report
