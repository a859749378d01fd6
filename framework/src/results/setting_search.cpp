#include "results/setting_search.hpp"

#include <algorithm>
#include <stdexcept>

#include "results/stats.hpp"

namespace uniperf::results {
namespace {

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

}  // namespace

SettingSearch::SettingSearch(std::size_t candidates, std::size_t first_round, std::size_t budget,
                             Goal goal)
    : values_(candidates),
      first_round_(std::max<std::size_t>(1, first_round)),
      budget_(std::max(budget, candidates * std::max<std::size_t>(1, first_round))),
      goal_(goal) {
  if (candidates == 0) throw std::invalid_argument("a search needs a candidate");
}

std::vector<std::size_t> SettingSearch::next() const {
  std::vector<std::size_t> batch;
  // First every candidate, first_round times.
  for (std::size_t k = 0; k < values_.size(); ++k) {
    for (std::size_t n = values_[k].size(); n < first_round_; ++n) batch.push_back(k);
  }
  if (!batch.empty()) return batch;
  if (values_.size() == 1) return batch;
  // Then one more of the best and of each candidate it cannot yet be told
  // from, while the budget lasts (the whole round, or none of it: a round
  // cut short would favour the candidates measured first).
  const std::vector<std::size_t> close = contenders();
  if (close.size() < 2 || spent_ + close.size() > budget_) return batch;
  return close;
}

void SettingSearch::add(std::size_t k, double value) {
  values_.at(k).push_back(value);
  ++spent_;
}

std::vector<std::size_t> SettingSearch::contenders() const {
  std::vector<Interval> ci;
  std::size_t best = 0;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    ci.push_back(mean_ci95(values_[k]));
    if (better(mean_of(values_[k]), mean_of(values_[best]))) best = k;
  }
  // A candidate whose interval reaches into the best's might be the best.
  std::vector<std::size_t> close = {best};
  for (std::size_t k = 0; k < values_.size(); ++k) {
    const bool overlaps =
        goal_ == Goal::highest ? ci[k].high >= ci[best].low : ci[k].low <= ci[best].high;
    if (k != best && overlaps) close.push_back(k);
  }
  return close;
}

bool SettingSearch::better(double a, double b) const {
  return goal_ == Goal::highest ? a > b : a < b;
}

SettingSearch::Outcome SettingSearch::outcome() const {
  Outcome out;
  out.measurements = spent_;
  std::vector<double> means;
  for (const auto& values : values_) {
    out.curve.push_back({values, mean_ci95(values)});
    means.push_back(mean_of(values));
  }
  for (std::size_t k = 1; k < means.size(); ++k) {
    if (better(means[k], means[out.best])) out.best = k;
  }
  out.runner_up = out.best;
  for (std::size_t k = 0; k < means.size(); ++k) {
    if (k != out.best && (out.runner_up == out.best || better(means[k], means[out.runner_up])))
      out.runner_up = k;
  }
  out.separated = values_.size() == 1 || contenders().size() == 1;
  return out;
}

}  // namespace uniperf::results
