// The self-tuner's search (docs/pipeline.md, "Self-tuning"): which of a few
// candidate settings (fragment sizes, powers of two) gives the best figure
// (the highest bandwidth, or the lowest latency), from noisy measurements,
// within a budget. Every candidate is
// measured a few times; then the best and every candidate whose 95%
// confidence interval still overlaps the best's are measured again, until
// the intervals separate or the budget is spent. Pure: the caller measures
// (a real transport, or a synthetic curve in the unit tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "results/record.hpp"

namespace uniperf::results {

class SettingSearch {
 public:
  /// Which figure is better: bandwidth the highest, latency the lowest.
  enum class Goal { highest, lowest };

  /// `candidates` settings (their values are the caller's), each measured
  /// `first_round` times before any is repeated; at most `budget`
  /// measurements in all (at least candidates x first_round).
  SettingSearch(std::size_t candidates, std::size_t first_round, std::size_t budget,
                Goal goal = Goal::highest);

  /// The candidates to measure next, one entry per measurement (a
  /// candidate may appear more than once); empty when the search is done.
  std::vector<std::size_t> next() const;
  /// One measurement of candidate `k`.
  void add(std::size_t k, double value);
  /// Candidate `k` cannot be measured here (its run was skipped or failed:
  /// a setting the transport refuses): it is measured no more, and is
  /// neither the best nor the runner-up. The others are searched as if it
  /// were not there.
  void exclude(std::size_t k);
  /// Whether a candidate is left that was not excluded: without one there
  /// is nothing to choose, and outcome() means nothing.
  bool any_left() const;
  Goal goal() const { return goal_; }

  struct Candidate {
    std::vector<double> values;
    Interval ci95;          ///< of the mean; the value itself with one measurement
    bool excluded = false;  ///< exclude()d: not a choice, whatever its values
  };
  struct Outcome {
    std::size_t best = 0;
    std::size_t runner_up = 0;  ///< the best but one (== best with one candidate)
    /// The best's interval is clear of every other's: more measurements
    /// would not change the choice at 95%. False when the budget ran out.
    bool separated = false;
    std::size_t measurements = 0;
    std::vector<Candidate> curve;  ///< per candidate, in order
  };
  Outcome outcome() const;
  bool done() const { return next().empty(); }

 private:
  /// The candidates whose interval overlaps the best's, the best first.
  std::vector<std::size_t> contenders() const;
  /// Whether figure `a` is better than `b` by the goal.
  bool better(double a, double b) const;

  /// The candidates not excluded, in order.
  std::vector<std::size_t> left() const;

  std::vector<std::vector<double>> values_;
  std::vector<bool> excluded_;
  std::size_t first_round_;
  std::size_t budget_;
  std::size_t spent_ = 0;
  Goal goal_;
};

}  // namespace uniperf::results
