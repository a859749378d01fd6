// Where a record keeps each metric of model::kMetrics.
#pragma once

#include "model/metrics.hpp"
#include "results/record.hpp"

namespace uniperf::results {

/// The metric's value in a record; NaN when the record does not measure it.
double metric_value(const Record& record, model::Metric metric);

/// The member of TrialSummary that holds a per-trial metric; nullptr for a
/// metric trials do not summarise.
double TrialSummary::*trial_member(model::Metric metric);

}  // namespace uniperf::results
