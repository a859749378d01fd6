#include "results/metrics.hpp"

#include <limits>

namespace uniperf::results {

double metric_value(const Record& r, model::Metric metric) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  switch (metric) {
    case model::Metric::p50_us:
      return r.latency ? r.latency->p50 : kNone;
    case model::Metric::mean_us:
      return r.latency ? r.latency->mean : kNone;
    case model::Metric::p99_us:
      return r.latency ? r.latency->p99 : kNone;
    case model::Metric::mb_per_s:
      return r.bandwidth ? r.bandwidth->mb_per_s : kNone;
    case model::Metric::mmsg_per_s:
      return r.bandwidth ? r.bandwidth->mmsg_per_s : kNone;
  }
  return kNone;
}

double TrialSummary::*trial_member(model::Metric metric) {
  switch (metric) {
    case model::Metric::p50_us:
      return &TrialSummary::p50_us;
    case model::Metric::mean_us:
      return &TrialSummary::mean_us;
    case model::Metric::p99_us:
      return nullptr;
    case model::Metric::mb_per_s:
      return &TrialSummary::mb_per_s;
    case model::Metric::mmsg_per_s:
      return &TrialSummary::mmsg_per_s;
  }
  return nullptr;
}

}  // namespace uniperf::results
