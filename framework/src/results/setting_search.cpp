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
      excluded_(candidates, false),
      first_round_(std::max<std::size_t>(1, first_round)),
      budget_(std::max(budget, candidates * std::max<std::size_t>(1, first_round))),
      goal_(goal) {
  if (candidates == 0) throw std::invalid_argument("a search needs a candidate");
}

std::vector<std::size_t> SettingSearch::next() const {
  std::vector<std::size_t> batch;
  const std::vector<std::size_t> live = left();
  // First every candidate, first_round times.
  for (const std::size_t k : live) {
    for (std::size_t n = values_[k].size(); n < first_round_; ++n) batch.push_back(k);
  }
  if (!batch.empty()) return batch;
  if (live.size() <= 1) return batch;
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

void SettingSearch::exclude(std::size_t k) {
  excluded_.at(k) = true;
}

bool SettingSearch::any_left() const {
  return !left().empty();
}

std::vector<std::size_t> SettingSearch::left() const {
  std::vector<std::size_t> live;
  for (std::size_t k = 0; k < values_.size(); ++k) {
    if (!excluded_[k]) live.push_back(k);
  }
  return live;
}

std::vector<std::size_t> SettingSearch::contenders() const {
  const std::vector<std::size_t> live = left();
  if (live.empty()) return {};
  std::vector<Interval> ci(values_.size());
  std::size_t best = live.front();
  for (const std::size_t k : live) {
    ci[k] = mean_ci95(values_[k]);
    if (better(mean_of(values_[k]), mean_of(values_[best]))) best = k;
  }
  // A candidate whose interval reaches into the best's might be the best.
  std::vector<std::size_t> close = {best};
  for (const std::size_t k : live) {
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
  for (std::size_t k = 0; k < values_.size(); ++k) {
    out.curve.push_back({values_[k], mean_ci95(values_[k]), excluded_[k]});
    means.push_back(mean_of(values_[k]));
  }
  const std::vector<std::size_t> live = left();
  if (live.empty()) return out;
  out.best = live.front();
  for (const std::size_t k : live) {
    if (better(means[k], means[out.best])) out.best = k;
  }
  out.runner_up = out.best;
  for (const std::size_t k : live) {
    if (k != out.best && (out.runner_up == out.best || better(means[k], means[out.runner_up])))
      out.runner_up = k;
  }
  out.separated = live.size() == 1 || contenders().size() == 1;
  return out;
}

}  // namespace uniperf::results
