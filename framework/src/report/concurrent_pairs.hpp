// The pairs of a launched job's test that ran at once (`pairs:` bisection,
// incast, fanout, neighbors, all_to_all): per config, test, size and round,
// their sum and spread, and how long they really ran together. Pairs told
// to start together need not overlap: a short test's pairs may each finish
// before the next one has opened its transport, and then their sum is no
// concurrent total. The records' measured intervals (1.4) say which.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

/// One round's pairs of one (config, test, size).
struct ConcurrentPairs {
  std::string config;
  std::string test;
  std::uint64_t size = 0;
  std::string pairs;  ///< the pattern, e.g. "incast"
  std::size_t round = 0;
  int ranks = 0;       ///< the job's size
  std::string metric;  ///< the headline's label, e.g. "MB/s"
  bool lower_is_better = false;
  std::vector<double> values;  ///< each ok pair's headline, ascending
  /// Of the pairs' measured phases on the wall clock: the time every one
  /// of them was running, over the time any was (0 to 1); none when a
  /// record has no measured interval (a record older than 1.4).
  std::optional<double> overlap;
  double span_ms = 0;  ///< the first start to the last end

  double sum() const;
  double median() const;
};

/// Every group of pairs that ran at once, in the order they first appear.
/// Retests and records that are not ok are left out.
std::vector<ConcurrentPairs> concurrent_pairs(const std::vector<results::Record>& records);

/// Said on the terminal, one line each: for rates the sum over the pairs
/// (a total the fabric carried only as far as they overlapped), for every
/// metric the min, median and max pair, and the overlap, with a word of
/// warning when it is too small for the sum to mean a concurrent total.
void print_concurrent_pairs(std::ostream& out, const std::vector<results::Record>& records);

}  // namespace uniperf::report
