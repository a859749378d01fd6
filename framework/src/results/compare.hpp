// `uniperf compare`: two sets of records, matched by (config, test, size)
// and, in a launched job of many ranks, the pair of ranks (so a node-pair
// matrix is compared cell by cell; the retests of suspect pairs, made or
// not as the first pass went, are left out), each match classified against
// tolerance bands. The policy lives here so that
// unit tests can check it with hand-written records; the command only reads
// files and prints.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace uniperf::results {

/// Allowed change per metric, in percent of the base value, in the metric's
/// bad direction (latency up, bandwidth / message rate down).
using Tolerances = std::map<std::string, double>;

/// Metrics compare knows: every row of model::kMetrics.
const std::vector<std::string>& comparable_metrics();
bool lower_is_better(const std::string& metric);

/// The defaults: each metric's default_tolerance (p50_us 5%, MB_per_s 5%,
/// Mmsg_per_s 5%). Metrics without a tolerance are not checked (mean_us and
/// p99_us only when given one).
Tolerances default_tolerances();

/// "p50_us=3" or "MB_per_s=2.5%" -> (metric, percent). Throws
/// std::invalid_argument naming the problem.
std::pair<std::string, double> parse_tolerance(const std::string& text);

enum class Outcome : std::uint8_t { regressed, improved, unchanged, missing, added, skipped };
std::string_view to_string(Outcome);

/// One metric of one matched pair.
struct MetricChange {
  std::string metric;
  double base = 0, now = 0;
  double change_percent = 0;  ///< (now - base) / base * 100
  double tolerance_percent = 0;
  bool intervals_used = false;     ///< both sides had a 95% CI for it
  bool intervals_overlap = false;  ///< meaningful when intervals_used
  Outcome outcome = Outcome::unchanged;
};

struct Comparison {
  std::string config, test;
  std::uint64_t size = 0;
  Outcome outcome = Outcome::unchanged;
  std::string note;  ///< why skipped / missing / a status change
  std::vector<MetricChange> metrics;
  /// A launched job's pair, "I-J" (placement's initiator and responder
  /// ranks); "" for a single pair.
  std::string pair;
};

struct CompareResult {
  std::vector<Comparison> rows;  ///< base order, then records only in `now`
  std::map<Outcome, std::size_t> counts;
  std::size_t compared() const;  ///< pairs both measured (regressed + improved + unchanged)
};

/// Matches and classifies. A metric regresses when it moved in its bad
/// direction by more than its tolerance AND, where both records carry a 95%
/// CI for it (trials), the two intervals do not overlap; improvements alike
/// in the good direction. A pair regresses when any of its metrics does, or
/// when the base was ok and the new record is an error; it is skipped when
/// either side is skipped (or the base was an error). Metrics checked: those
/// with a tolerance that fit the test's pattern (latency tests: latency
/// metrics; bandwidth: MB_per_s; message_rate: Mmsg_per_s). Duplicated keys
/// in one input: the last record wins.
CompareResult compare(const std::vector<Record>& base, const std::vector<Record>& now,
                      const Tolerances& tolerances);

}  // namespace uniperf::results
