// A result record: one per (config, test, size). The engine produces these;
// reporters (terminal table, JSON Lines, ...) only format them.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "model/cpu_use.hpp"
#include "model/test_spec.hpp"

namespace uniperf::results {

/// The schema's major version (`schema_version`): a reader accepts records
/// of its own major only. The minor (`schema_minor`) counts additions of
/// optional fields; a reader accepts any minor of its major (docs/results.md).
inline constexpr int kSchemaVersion = 1;
inline constexpr int kSchemaMinor = 20;

enum class Status : std::uint8_t { ok, skipped, error };
std::string_view to_string(Status);

/// Latency statistics over every sample, in microseconds. For send and write
/// ping-pong the samples are one-way (RTT/2); for read and atomics they are
/// full round trips. `one_way` says which.
struct LatencyStats {
  std::uint64_t samples = 0;
  bool one_way = true;
  double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, p9999 = 0, max = 0, mean = 0, stdev = 0;
  /// (1.10) The worst relative error of the percentiles: 0 when they are
  /// exact (every sample kept), else the histogram's the samples were
  /// folded into (model::LatencyDistribution::kRelativeError). min, max,
  /// mean and stdev are exact either way.
  double percentile_error = 0;
};

/// Bandwidth over first post -> last completion on the measuring side.
/// MB/s is 10^6 bytes per second; Gb/s is 10^9 bits per second.
struct BandwidthStats {
  std::uint64_t bytes = 0;
  std::uint64_t messages = 0;
  double seconds = 0;
  double mb_per_s = 0;
  double gbit_per_s = 0;
  double mmsg_per_s = 0;
  /// (1.2) A stream over an unreliable transport (verbs UD, UC): the
  /// messages posted. `messages` and `bytes` then count what arrived, and
  /// the rates are over those; absent where delivery is reliable.
  std::optional<std::uint64_t> messages_sent;
  /// (1.12) A pipelined flow (fragment > 0; docs/pipeline.md): the
  /// fragments its `messages` went as.
  std::optional<std::uint64_t> fragments;

  std::uint64_t messages_lost() const {
    return messages_sent && *messages_sent > messages ? *messages_sent - messages : 0;
  }
  /// (1.8) The bandwidth in MiB/s (2^20 B/s), the unit of perftest and
  /// ucx_perftest; derived from mb_per_s, never stored apart from it.
  double mib_per_s() const { return mb_per_s * 1e6 / (1 << 20); }
  /// Lost over sent; 0 without a count of sent messages.
  double loss_rate() const {
    return messages_sent && *messages_sent > 0
               ? static_cast<double>(messages_lost()) / static_cast<double>(*messages_sent)
               : 0;
  }
};

/// A 95% confidence interval of a mean (Student t over the trials).
struct Interval {
  double mean = 0, low = 0, high = 0;
};

/// One trial's headline values (NaN where not measured): the metrics of
/// model::kMetrics marked per_trial (results/metrics.hpp maps each to its
/// member).
struct TrialSummary {
  std::uint64_t iterations_run = 0;
  double p50_us = 0, mean_us = 0, mb_per_s = 0, mmsg_per_s = 0;
};

/// One flow's own results in a test of several concurrent flows.
/// (1.4) When the measured phase ran (first post to last completion; for
/// several flows, the union of theirs; for trials, first to last), on the
/// measuring host's wall clock, in microseconds since the Unix epoch: the
/// pairs of one round of a launched job, or any two records, can be put
/// on one timeline and their overlap read (report/pair_matrix.hpp). Across
/// hosts it is as good as their clocks' agreement (NTP: about a millisecond).
struct MeasuredInterval {
  std::int64_t from_unix_us = 0;
  std::int64_t to_unix_us = 0;
};

/// (1.5) A flow's bandwidth over time: bytes completed per bin, from its
/// trace, as MB/s; bins of `bin_us` from the test's span start (the
/// record's `measured.from_unix_us`).
struct Timeline {
  double bin_us = 0;
  std::vector<double> mb_per_s;
};

/// (1.6) A latency flow of a test of several flows, measured alone (the
/// test named by `baseline:`, same config and message size), and how much
/// slower it was beside the others: its percentile over the baseline's.
struct AloneBaseline {
  std::string test;
  LatencyStats latency;
  double slowdown_p50 = 0;
  double slowdown_p99 = 0;
};

/// One rank of a launched job, as a record names it.
struct RankPlace {
  int rank = 0;
  std::string host;  ///< its host name
  /// Among the job's ranks on that host (the launcher's local rank), so
  /// ranks sharing a host are told apart; absent when the launcher did not say.
  std::optional<int> local_rank;
  /// (1.4) The launcher's name for its node where it has one (Slurm's
  /// node name), which can differ from the host name; "" when none.
  std::string node;
};

/// (1.3) Where a record of a launched job of more than two ranks was
/// measured: which pairing of the test, in which round, between which
/// ranks. Absent for a single pair (a local pair, --peer, two ranks).
struct Placement {
  std::string pairs;      ///< the test's model::RankPairs, e.g. "all"
  std::size_t round = 0;  ///< from 0, the round of the test it ran in
  int ranks = 0;          ///< the job's size
  RankPlace initiator;    ///< measured
  RankPlace responder;    ///< served
  /// The second pass of `pairs: all`: a suspect pair measured again on its
  /// own, with no other pair running (report/pair_matrix.hpp).
  bool retest = false;
};

/// (1.10) Both sides' CPU over a record's measured phase.
struct CpuTime {
  model::CpuUse initiator, responder;
};

struct FlowResult {
  model::FlowSpec flow;  ///< effective parameters
  std::uint64_t iterations_run = 0;
  std::optional<LatencyStats> latency;
  std::optional<BandwidthStats> bandwidth;
  std::uint64_t corrupted_bytes = 0;
  /// (1.4) This flow's own measured phase (results/overlap.hpp says how
  /// long the flows of a test ran together).
  std::optional<MeasuredInterval> measured;
  /// (1.5) A traced flow (results/competition.hpp): what it completed while
  /// every flow ran (the common interval), and over time.
  std::optional<BandwidthStats> common;
  std::optional<Timeline> timeline;
  /// (1.7) A latency flow's percentiles over its iterations that ran
  /// wholly while every flow ran (results::latency_within): `latency` also
  /// counts the iterations before the last flow started and after the
  /// first ended, when this flow had the fabric to itself.
  std::optional<LatencyStats> common_latency;
  std::optional<AloneBaseline> alone;
  /// (1.15) A flow of a test whose flows ran in process pairs of their own
  /// (`process: separate`): the pair of ranks that ran it.
  std::optional<Placement> placement;
  /// (1.16) Such a flow's pair's CPU over its measured phase: its own
  /// processes', which no other flow shares.
  std::optional<CpuTime> cpu_time;
};

/// (1.5) One traced work request (docs/traces.md) on the run's time base:
/// nanoseconds since the Unix epoch, this process's timed-loop clock placed
/// on its wall clock once per record, so the rows of every flow of a test
/// share one timeline.
struct TraceRow {
  std::uint32_t flow = 0;  ///< 0-based, in suite order
  std::uint32_t lane = 0;  ///< the endpoint within the flow
  std::uint64_t id = 0;    ///< the request's id on its endpoint
  std::int64_t posted_ns = 0;
  /// (format 3) When the post call that carried it returned: returned_ns -
  /// posted_ns is that call's own cost (a post_list chain's, shared).
  std::int64_t returned_ns = 0;
  std::int64_t completed_ns = 0;  ///< 0: no completion covered it
  bool signaled = false;          ///< its own completion, else covered by a later one
  /// (1.6) Posted by the responder (its echoes, its half of a bidirectional
  /// flow), moved onto the initiator's clock by the measured offset.
  bool responder = false;
};

/// (1.5) How many trace rows a record's test kept and how many requests
/// found the rows full (trace_max).
struct TraceCount {
  std::uint64_t rows = 0;
  std::uint64_t dropped = 0;
};

/// (1.11) What went over one rail of a config with several (docs/rails.md),
/// over the record's bandwidth interval.
struct RailResult {
  std::uint64_t bytes = 0;
  std::uint64_t requests = 0;  ///< work requests: a striped message's pieces count apart
  double mb_per_s = 0;
  double mreq_per_s = 0;
  /// (1.17) A latency test's samples this rail took part in (all of a bound
  /// flow's rail and of a striped message's rails, its turns of an
  /// alternating ping-pong): which rail carried which samples.
  std::optional<LatencyStats> latency;
};

struct Record {
  int schema_version = kSchemaVersion;
  Status status = Status::ok;
  std::string reason;  ///< for skipped / error
  /// With status error, what kind of failure when the engine can tell
  /// (added in 1.2; "" otherwise): "stalled", no completion came for
  /// --stall-timeout. A field, not a status value: a new status value would
  /// be a schema major (older readers refuse an unknown one).
  std::string failure;

  std::string suite;
  std::string config;
  std::string plugin;
  std::string plugin_version;
  std::string library_version;
  std::string device;
  /// NUMA node of `device` where the framework can tell (added in 1.1).
  std::optional<int> device_numa_node;

  std::string test;
  std::uint64_t size = 0;
  model::FlowSpec flow;              ///< effective parameters (defaults resolved)
  model::Duration duration;          ///< effective run length
  std::uint64_t iterations_run = 0;  ///< measured iterations actually completed
  std::string preset;
  std::vector<std::string> emulated;  ///< features the plugin emulated

  std::optional<LatencyStats> latency;
  std::optional<BandwidthStats> bandwidth;
  std::uint64_t corrupted_bytes = 0;  ///< with validate: bytes that did not match
  /// Tests of several concurrent flows: each flow's results, in suite order.
  /// The record's own `flow` is then the first flow's, `bandwidth` the
  /// aggregate (all bytes over the union of the flows' intervals) and
  /// `latency` absent. Empty for single-flow tests.
  std::vector<FlowResult> flows;

  std::string clock_source;  ///< "tsc" or "steady_clock"
  double clock_ghz = 0;      ///< calibrated tick rate, when tsc
  std::string timestamp;     ///< ISO 8601 UTC, when the record was made
  std::string host;

  int schema_minor = kSchemaMinor;  ///< 0 when read from a record without one
  /// Where the numbers came from (added in 1.1; an empty object when absent):
  /// {uniperf: {version, git}, suite_sha256, initiator: {facts},
  ///  responder: {facts} | null, cpu: {initiator, responder} (pins asked)};
  /// facts as session::provenance() describes them.
  nlohmann::json provenance = nlohmann::json::object();
  /// Preflight findings that can skew the numbers (added in 1.1).
  std::vector<std::string> warnings;
  /// With `trials: N` > 1 (added in 1.1): every trial's summary, in order,
  /// and per per-trial metric (model::kMetrics) that was measured the 95% confidence
  /// interval of its mean over the trials. The record's latency and
  /// bandwidth are then over every trial's samples pooled.
  std::vector<TrialSummary> trials;
  std::map<std::string, Interval> ci95;
  std::optional<Placement> placement;        ///< (1.3) see Placement
  std::optional<MeasuredInterval> measured;  ///< (1.4) see MeasuredInterval
  /// (1.5) The flows that set `trace`: their rows (this side's requests).
  /// Only the count is in the record's JSON; the rows go to the run's trace
  /// file (cli/run_output.hpp), which keeps none in memory.
  std::optional<TraceCount> trace_count;
  std::vector<TraceRow> trace;
  /// (1.5) Jain's fairness index of the traced bandwidth flows' shares of
  /// the common interval (results/competition.hpp).
  std::optional<double> fairness_jain;
  /// The latency flows that set `keep_samples`: each one's samples in the
  /// order the iterations ran. Not in the record's JSON (its
  /// `samples_kept` counts them); they go to the run's samples file
  /// (results/samples_file.hpp), which keeps none in memory.
  struct KeptSamples {
    std::uint32_t flow = 0;  ///< 0-based, as the flows are listed
    std::vector<double> us;
  };
  std::vector<KeptSamples> kept_samples;
  /// A latency flow's iterations as results::latency_within reads them.
  /// Kept only in the record of one flow of a test whose flows ran in
  /// process pairs of their own, so rank 0 can take the flow's percentiles
  /// over the time every flow ran once all the pairs' records are in
  /// (session/separate_flows_record.hpp). Not in the record's JSON.
  struct Iterations {
    /// The measured phase's first post, on the record's clock (ns since
    /// the Unix epoch); each iteration began `begins_us` after it, or,
    /// without begins, where the one before ended.
    std::int64_t started_ns = 0;
    bool one_way = true;      ///< a sample is half its round trip
    bool all_samples = true;  ///< false: the phase's first samples only (folded)
    std::vector<double> samples_us;
    std::vector<double> begins_us;
    /// {k, t}: the iteration of sample k began t after the start (the loop
    /// paused before it).
    std::vector<std::pair<std::uint64_t, double>> resumes_us;
  };
  std::optional<Iterations> iterations;
  /// (1.11) Over a config with several rails: each rail's share, in rail
  /// order, and their imbalance, (most - least) / mean of the rails' bytes
  /// (0: even; 2 with two rails: one carried everything). Empty over one.
  std::vector<RailResult> rails;
  double rail_imbalance() const;
  std::uint64_t samples_kept = 0;  ///< (1.9) every kept sample, over the flows
  /// (1.10) The CPU each side's process used over the measured phase
  /// (every trial's, summed; a test of several flows: the first flow's
  /// phase, which the others share), from the kernel's accounting.
  std::optional<CpuTime> cpu_time;
};

/// Frees `record`'s kept latency samples (in the samples file now), as
/// release_trace_rows() does its trace rows.
inline void release_kept_samples(Record& record) {
  std::vector<Record::KeptSamples>().swap(record.kept_samples);
}

/// Frees `record`'s trace rows. clear() (or `= {}`) would keep their
/// memory: a record kept after its rows went to the trace file needs only
/// their count, and a run keeps every record to its end.
inline void release_trace_rows(Record& record) {
  std::vector<TraceRow>().swap(record.trace);
}

/// A record of another schema major: readable JSON, but not comparable
/// (`uniperf compare` exits 3 on it rather than 2).
struct SchemaMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The JSON form of a record (the JSON Lines schema, version kSchemaVersion).
nlohmann::json to_json(const Record&);
nlohmann::json to_json(const model::FlowSpec&);
/// The inverse of to_json(const Record&), for reading results back
/// (`uniperf compare`). Throws std::runtime_error naming the field for a
/// missing required field, a wrong type, an unknown enum spelling or a
/// schema_version this build does not know.
Record record_from_json(const nlohmann::json&);
nlohmann::json to_json(const Placement&);
/// Throws as record_from_json does, naming the field under "placement.".
Placement placement_from_json(const nlohmann::json&);

}  // namespace uniperf::results
