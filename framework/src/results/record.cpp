// The JSON Lines schema, version 1.2: one object per line, one line per
// (config, test, size). Units are in the key names or stated here; the
// reference, with the fields added in 1.1 (schema_minor, provenance,
// warnings, trials), is docs/results.md.
//
//   schema_version   1 (the major; schema_minor the minor, absent = 0)
//   status           "ok" | "skipped" | "error"
//   reason           why it was skipped or failed; "" when ok
//   failure          only with status "error" when the kind is known (added
//                    in 1.2): "stalled" (no completion for --stall-timeout)
//   suite, config, test, preset    names; preset is "" or perftest / osu / itperf
//   size             message size in bytes
//   plugin           {name, version, library_version, device}
//   params           every effective parameter (defaults resolved): one key
//                    per row of model/flow_fields.hpp (kFlowFields, then
//                    kRunFields), named and typed there
//   emulated         [features the plugin emulated for this test]
//   iterations_run   measured iterations completed
//   latency_us       only when measured, all in microseconds except the first two:
//                    {samples, one_way (false: full round trips), min, p50, p90,
//                     p99, p99_9, p99_99, max, mean, stdev (population)};
//                    percentiles are nearest-rank over every sample;
//                    (1.10) percentile_error, the worst relative error of the
//                    percentiles, only where the samples were folded into a
//                    histogram (more than 2^20 of them)
//   bandwidth        only when measured, first post -> last completion:
//                    {bytes, messages, seconds, MB_per_s (10^6 B/s),
//                     Gb_per_s (10^9 bit/s), Mmsg_per_s (10^6 msg/s)};
//                    over an unreliable transport (added in 1.2) also
//                    messages_sent, messages_lost and loss_rate (lost/sent),
//                    and bytes, messages and the rates count what arrived;
//                    (1.12) a pipelined flow's fragments (the requests its
//                    messages went as)
//   corrupted_bytes  payload bytes that failed validation
//   flows            only for tests of several concurrent flows (optional, added
//                    in 1): [{params (flow keys as above), iterations_run,
//                    latency_us?, bandwidth?, corrupted_bytes}] in suite order;
//                    then params is the first flow's, bandwidth the aggregate
//                    (every flow's bytes over the union of their intervals)
//                    and latency_us is absent
//   trace            (1.5) only when a flow set `trace`: {rows, dropped}, the
//                    per-request rows written to the run's trace file
//                    (docs/traces.md) and the requests that found no room
//   rails            (1.11) over a config with several rails: {imbalance
//                    ((most - least) / mean of the rails' bytes), per_rail:
//                    [{bytes, requests, MB_per_s, Mreq_per_s}] in rail order};
//                    (1.17) a latency test's per_rail entries add latency_us
//                    over the samples that rail took part in
//   cpu_time         (1.10) {initiator, responder}: each side's process CPU
//                    over the measured phase, {user_s, system_s, seconds (wall),
//                    cpus_used ((user + system) / seconds)}
//   clock            {source ("tsc" | "steady_clock"), ghz (tick rate; 0 when unused)}
//   host             host name
//   timestamp        UTC, ISO 8601
//
// Compatibility: within a schema version fields are only ever added, and a
// reader treats fields added after version 1's first release as optional; a
// renamed, removed or re-defined field bumps schema_version. Non-finite
// numbers are written as null (JSON has no NaN) and read back as NaN.
#include "results/record.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/flow_fields.hpp"
#include "results/metrics.hpp"

namespace uniperf::results {

using json = nlohmann::json;

std::string_view to_string(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::skipped:
      return "skipped";
    case Status::error:
      return "error";
  }
  return "unknown";
}

json to_json(const model::FlowSpec& flow) {
  json params = json::object();
  for (const model::FlowField& field : model::kFlowFields) {
    json& value = params[std::string(field.name)];
    switch (field.kind) {
      case model::FieldKind::count:
        value = flow.*field.count;
        break;
      case model::FieldKind::flag:
        value = flow.*field.flag;
        break;
      case model::FieldKind::choice:
        value = field.text(flow);
        break;
      case model::FieldKind::fraction:
        value = flow.*field.fraction;
        break;
      case model::FieldKind::seconds:
        value = flow.*field.seconds;
        break;
      case model::FieldKind::rate:
        value = field.text(flow);
        break;
    }
  }
  return params;
}

namespace {

json to_json(const BandwidthStats& b) {
  return {{"bytes", b.bytes},          {"messages", b.messages},   {"seconds", b.seconds},
          {"MB_per_s", b.mb_per_s},    {"Gb_per_s", b.gbit_per_s}, {"Mmsg_per_s", b.mmsg_per_s},
          {"MiB_per_s", b.mib_per_s()}};  // 1.8; derived, so not read back
}

json to_json(const LatencyStats& l) {
  json j = {{"samples", l.samples}, {"one_way", l.one_way}, {"min", l.min},    {"p50", l.p50},
            {"p90", l.p90},         {"p99", l.p99},         {"p99_9", l.p999}, {"p99_99", l.p9999},
            {"max", l.max},         {"mean", l.mean},       {"stdev", l.stdev}};
  if (l.percentile_error > 0) j["percentile_error"] = l.percentile_error;  // 1.10
  return j;
}

void put_results(json& j, const std::optional<LatencyStats>& latency,
                 const std::optional<BandwidthStats>& bandwidth) {
  if (latency) j["latency_us"] = to_json(*latency);
  if (bandwidth) {
    const auto& b = *bandwidth;
    j["bandwidth"] = to_json(b);
    if (b.messages_sent) {
      json& out = j["bandwidth"];
      out["messages_sent"] = *b.messages_sent;
      out["messages_lost"] = b.messages_lost();
      out["loss_rate"] = b.loss_rate();
    }
    if (b.fragments) j["bandwidth"]["fragments"] = *b.fragments;  // 1.12
  }
}

/// Both sides' CPU, each with its derived cpus_used (not read back).
json cpu_time_json(const CpuTime& cpu) {
  const auto side = [](const model::CpuUse& c) {
    return json{{"user_s", c.user_s},
                {"system_s", c.system_s},
                {"seconds", c.seconds},
                {"cpus_used", c.cpus_used()}};
  };
  return {{"initiator", side(cpu.initiator)}, {"responder", side(cpu.responder)}};
}

json to_json(const MeasuredInterval& m) {
  return {{"from_unix_us", m.from_unix_us}, {"to_unix_us", m.to_unix_us}};
}

}  // namespace

json to_json(const Placement& placement) {
  auto place = [](const RankPlace& p) {
    json one = {{"rank", p.rank}, {"host", p.host}};
    if (p.local_rank) one["local_rank"] = *p.local_rank;
    if (!p.node.empty()) one["node"] = p.node;
    return one;
  };
  json j = {{"pairs", placement.pairs},
            {"round", placement.round},
            {"ranks", placement.ranks},
            {"initiator", place(placement.initiator)},
            {"responder", place(placement.responder)}};
  if (placement.retest) j["retest"] = true;
  return j;
}

json to_json(const Record& r) {
  json params = to_json(r.flow);
  for (const model::RunField& field : model::kRunFields) {
    json& value = params[std::string(field.record_key)];
    switch (field.kind) {
      case model::RunKind::count64:
        value = r.duration.*field.count64;
        break;
      case model::RunKind::count32:
        value = r.duration.*field.count32;
        break;
      case model::RunKind::seconds:
        value = r.duration.*field.seconds;
        break;
      case model::RunKind::flag:
        value = r.duration.*field.flag;
        break;
    }
  }
  json j = {{"schema_version", r.schema_version},
            {"schema_minor", r.schema_minor},
            {"status", to_string(r.status)},
            {"reason", r.reason},
            {"suite", r.suite},
            {"config", r.config},
            {"test", r.test},
            {"size", r.size},
            {"preset", r.preset},
            {"plugin",
             {{"name", r.plugin},
              {"version", r.plugin_version},
              {"library_version", r.library_version},
              {"device", r.device},
              {"numa_node", r.device_numa_node ? json(*r.device_numa_node) : json(nullptr)}}},
            {"params", std::move(params)},
            {"emulated", r.emulated},
            {"iterations_run", r.iterations_run},
            {"corrupted_bytes", r.corrupted_bytes},
            {"clock", {{"source", r.clock_source}, {"ghz", r.clock_ghz}}},
            {"host", r.host},
            {"timestamp", r.timestamp},
            {"provenance", r.provenance},
            {"warnings", r.warnings}};
  if (!r.failure.empty()) j["failure"] = r.failure;
  put_results(j, r.latency, r.bandwidth);
  if (!r.trials.empty()) {
    json per_trial = json::array();
    for (const TrialSummary& t : r.trials) {
      json one = {{"iterations_run", t.iterations_run}};
      for (const model::MetricInfo& metric : model::kMetrics) {
        if (metric.per_trial) one[std::string(metric.name)] = t.*trial_member(metric.id);
      }
      per_trial.push_back(std::move(one));
    }
    json ci = json::object();
    for (const auto& [metric, interval] : r.ci95) {
      ci[metric] = {{"mean", interval.mean}, {"low", interval.low}, {"high", interval.high}};
    }
    j["trials"] = {{"count", r.trials.size()}, {"per_trial", per_trial}, {"ci95", ci}};
  }
  if (r.placement) j["placement"] = to_json(*r.placement);
  if (r.measured) j["measured"] = to_json(*r.measured);
  if (r.trace_count)
    j["trace"] = {{"rows", r.trace_count->rows}, {"dropped", r.trace_count->dropped}};
  if (r.fairness_jain) j["fairness_jain"] = *r.fairness_jain;
  if (r.samples_kept > 0) j["samples_kept"] = r.samples_kept;
  if (!r.rails.empty()) {
    json per_rail = json::array();
    for (const RailResult& rail : r.rails) {
      per_rail.push_back({{"bytes", rail.bytes},
                          {"requests", rail.requests},
                          {"MB_per_s", rail.mb_per_s},
                          {"Mreq_per_s", rail.mreq_per_s}});
      if (rail.latency) per_rail.back()["latency_us"] = to_json(*rail.latency);
    }
    j["rails"] = {{"imbalance", r.rail_imbalance()}, {"per_rail", std::move(per_rail)}};
  }
  if (r.cpu_time) j["cpu_time"] = cpu_time_json(*r.cpu_time);
  if (!r.flows.empty()) {
    json flows = json::array();
    for (const FlowResult& f : r.flows) {
      json one = {{"params", to_json(f.flow)},
                  {"iterations_run", f.iterations_run},
                  {"corrupted_bytes", f.corrupted_bytes}};
      put_results(one, f.latency, f.bandwidth);
      if (f.measured) one["measured"] = to_json(*f.measured);
      if (f.common) one["common"] = to_json(*f.common);
      if (f.common_latency) one["common_latency_us"] = to_json(*f.common_latency);
      if (f.cpu_time) one["cpu_time"] = cpu_time_json(*f.cpu_time);
      if (f.timeline)
        one["timeline"] = {{"bin_ms", f.timeline->bin_us / 1e3},
                           {"MB_per_s", f.timeline->mb_per_s}};
      if (f.alone) {
        one["alone"] = {{"test", f.alone->test},
                        {"latency_us", to_json(f.alone->latency)},
                        {"slowdown_p50", f.alone->slowdown_p50},
                        {"slowdown_p99", f.alone->slowdown_p99}};
      }
      if (f.placement) one["placement"] = to_json(*f.placement);
      flows.push_back(std::move(one));
    }
    j["flows"] = std::move(flows);
  }
  return j;
}

// ---------------------------------------------------------------------------
// Reading records back
// ---------------------------------------------------------------------------

namespace {

/// One JSON object of a record and its dotted path ("latency_us"), so that
/// every error names the exact field that is wrong.
class FieldReader {
 public:
  FieldReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object())
      fail("", std::string("expected an object, got ") + object_.type_name());
  }

  bool has(const char* key) const { return object_.contains(key); }

  const json& field(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(key, "missing");
    return *it;
  }

  FieldReader object(const char* key) const { return FieldReader(field(key), name(key)); }

  std::string string(const char* key) const {
    const json& value = field(key);
    if (!value.is_string()) wrong_type(key, "a string", value);
    return value.get<std::string>();
  }

  bool boolean(const char* key) const {
    const json& value = field(key);
    if (!value.is_boolean()) wrong_type(key, "true or false", value);
    return value.get<bool>();
  }

  std::uint64_t unsigned_integer(
      const char* key, std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
    const json& value = field(key);
    // Parsed text gives unsigned for any non-negative integer; a json built
    // in memory from an int (schema_version) holds a signed one.
    const bool non_negative =
        value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
    if (!non_negative) wrong_type(key, "a non-negative integer", value);
    const auto number = value.get<std::uint64_t>();
    if (number > max) fail(key, "value " + std::to_string(number) + " is out of range");
    return number;
  }

  std::uint32_t unsigned32(const char* key) const {
    return static_cast<std::uint32_t>(
        unsigned_integer(key, std::numeric_limits<std::uint32_t>::max()));
  }

  double number(const char* key) const {
    const json& value = field(key);
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();  // written for NaN
    if (!value.is_number()) wrong_type(key, "a number", value);
    return value.get<double>();
  }

  std::vector<std::string> strings(const char* key) const {
    const json& value = field(key);
    if (!value.is_array()) wrong_type(key, "an array of strings", value);
    std::vector<std::string> out;
    for (const json& element : value) {
      if (!element.is_string()) wrong_type(key, "an array of strings", element);
      out.push_back(element.get<std::string>());
    }
    return out;
  }

  /// An enum spelled by its to_string() name; `count` values from 0.
  template <typename Enum>
  Enum enumeration(const char* key, std::size_t count) const {
    const std::string text = string(key);
    std::string known;
    for (std::size_t i = 0; i < count; ++i) {
      const auto candidate = static_cast<Enum>(i);
      if (spelling(candidate) == text) return candidate;
      known += (i == 0 ? "" : " | ") + std::string(spelling(candidate));
    }
    fail(key, "unknown value '" + text + "' (expected " + known + ")");
  }

  [[noreturn]] void fail(const char* key, const std::string& problem) const {
    const std::string field_name = name(key);
    throw std::runtime_error(
        "result record: " + (field_name.empty() ? "" : "field '" + field_name + "': ") + problem);
  }

 private:
  static std::string_view spelling(Status status) { return to_string(status); }

  std::string name(const char* key) const {
    if (path_.empty()) return key;
    if (*key == '\0') return path_;
    return path_ + "." + key;
  }

  [[noreturn]] void wrong_type(const char* key, const char* expected, const json& value) const {
    fail(key, std::string("expected ") + expected + ", got " + value.type_name() + " " +
                  value.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  const json& object_;
  std::string path_;
};

model::FlowSpec read_flow(const FieldReader& params, const json& raw) {
  model::FlowSpec f;
  for (const model::FlowField& field : model::kFlowFields) {
    const std::string key(field.name);
    if (field.optional_in_record && !raw.contains(key)) continue;  // the default
    switch (field.kind) {
      case model::FieldKind::count:
        f.*field.count = params.unsigned32(key.c_str());
        break;
      case model::FieldKind::flag:
        f.*field.flag = params.boolean(key.c_str());
        break;
      case model::FieldKind::fraction: {
        const double number = params.number(key.c_str());
        if (!(number >= 0 && number <= 1)) params.fail(key.c_str(), "expected a fraction 0..1");
        f.*field.fraction = number;
        break;
      }
      case model::FieldKind::seconds: {
        const double number = params.number(key.c_str());
        if (!(number >= 0) || !std::isfinite(number))
          params.fail(key.c_str(), "expected seconds >= 0");
        f.*field.seconds = number;
        break;
      }
      case model::FieldKind::rate: {
        const std::string text = params.string(key.c_str());
        if (!field.set_text(f, text))
          params.fail(key.c_str(), "expected a rate (10Gb/s, 100K/s or 0), got '" + text + "'");
        break;
      }
      case model::FieldKind::choice: {
        const std::string text = params.string(key.c_str());
        if (!field.set_text(f, text)) {
          params.fail(key.c_str(),
                      "unknown value '" + text + "' (expected " + field.choice_list(" | ") + ")");
        }
        break;
      }
    }
  }
  return f;
}

void read_duration(const FieldReader& params, const json& raw, model::Duration& d) {
  for (const model::RunField& field : model::kRunFields) {
    const std::string key(field.record_key);
    if (field.optional_in_record && !raw.contains(key)) continue;  // the default
    switch (field.kind) {
      case model::RunKind::count64:
        d.*field.count64 = params.unsigned_integer(key.c_str());
        break;
      case model::RunKind::count32:
        d.*field.count32 = params.unsigned32(key.c_str());
        break;
      case model::RunKind::seconds:
        d.*field.seconds = params.number(key.c_str());
        break;
      case model::RunKind::flag:
        d.*field.flag = params.boolean(key.c_str());
        break;
    }
  }
}

BandwidthStats read_bandwidth(const FieldReader& bandwidth) {
  BandwidthStats b;
  b.bytes = bandwidth.unsigned_integer("bytes");
  b.messages = bandwidth.unsigned_integer("messages");
  b.seconds = bandwidth.number("seconds");
  b.mb_per_s = bandwidth.number("MB_per_s");
  b.gbit_per_s = bandwidth.number("Gb_per_s");
  b.mmsg_per_s = bandwidth.number("Mmsg_per_s");
  return b;
}

LatencyStats read_latency(const FieldReader& latency) {
  LatencyStats l;
  l.samples = latency.unsigned_integer("samples");
  l.one_way = latency.boolean("one_way");
  l.min = latency.number("min");
  l.p50 = latency.number("p50");
  l.p90 = latency.number("p90");
  l.p99 = latency.number("p99");
  l.p999 = latency.number("p99_9");
  l.p9999 = latency.number("p99_99");
  l.max = latency.number("max");
  l.mean = latency.number("mean");
  l.stdev = latency.number("stdev");
  if (latency.has("percentile_error")) l.percentile_error = latency.number("percentile_error");
  return l;
}

void read_results(const FieldReader& top, const json& j, std::optional<LatencyStats>& latency_out,
                  std::optional<BandwidthStats>& bandwidth_out) {
  if (j.contains("latency_us")) latency_out = read_latency(top.object("latency_us"));
  if (j.contains("bandwidth")) {
    const FieldReader bandwidth = top.object("bandwidth");
    BandwidthStats& b = bandwidth_out.emplace(read_bandwidth(bandwidth));
    if (j["bandwidth"].contains("messages_sent"))
      b.messages_sent = bandwidth.unsigned_integer("messages_sent");
    if (j["bandwidth"].contains("fragments")) b.fragments = bandwidth.unsigned_integer("fragments");
  }
}

/// (1.5) A traced flow's `timeline`.
Timeline read_timeline(const FieldReader& owner) {
  const FieldReader timeline = owner.object("timeline");
  Timeline t;
  t.bin_us = timeline.number("bin_ms") * 1e3;
  if (!(t.bin_us > 0)) timeline.fail("bin_ms", "must be positive");
  const json& rates = timeline.field("MB_per_s");
  if (!rates.is_array()) timeline.fail("MB_per_s", "expected an array of numbers");
  for (const json& rate : rates) {
    if (!rate.is_number()) timeline.fail("MB_per_s", "expected an array of numbers");
    t.mb_per_s.push_back(rate.get<double>());
  }
  return t;
}

/// `measured` (1.4) of a record or of one of its flows.
CpuTime read_cpu_time(const FieldReader& cpu) {
  const auto side = [&](const char* name) {
    const FieldReader one = cpu.object(name);
    return model::CpuUse{.user_s = one.number("user_s"),
                         .system_s = one.number("system_s"),
                         .seconds = one.number("seconds")};
  };
  return CpuTime{.initiator = side("initiator"), .responder = side("responder")};
}

MeasuredInterval read_measured(const FieldReader& owner) {
  const FieldReader measured = owner.object("measured");
  constexpr auto kMost = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  MeasuredInterval m;
  m.from_unix_us = static_cast<std::int64_t>(measured.unsigned_integer("from_unix_us", kMost));
  m.to_unix_us = static_cast<std::int64_t>(measured.unsigned_integer("to_unix_us", kMost));
  if (m.to_unix_us < m.from_unix_us) measured.fail("to_unix_us", "before from_unix_us");
  return m;
}

}  // namespace

Placement placement_from_json(const json& j) {
  const FieldReader placement(j, "placement");
  auto place = [&j](const char* side) {
    const FieldReader one(j.at(side), std::string("placement.") + side);
    RankPlace p;
    p.rank = static_cast<int>(one.unsigned_integer("rank", 1 << 30));
    p.host = one.string("host");
    if (j.at(side).contains("local_rank"))
      p.local_rank = static_cast<int>(one.unsigned_integer("local_rank", 1 << 30));
    if (j.at(side).contains("node")) p.node = one.string("node");  // 1.4
    return p;
  };
  Placement p;
  p.pairs = placement.string("pairs");
  p.round = placement.unsigned_integer("round", 1 << 30);
  p.ranks = static_cast<int>(placement.unsigned_integer("ranks", 1 << 30));
  placement.object("initiator");  // fails unless an object
  placement.object("responder");
  p.initiator = place("initiator");
  p.responder = place("responder");
  if (j.contains("retest")) p.retest = placement.boolean("retest");
  return p;
}

Record record_from_json(const json& j) {
  const FieldReader top(j, "");
  Record r;
  r.schema_version = static_cast<int>(top.unsigned_integer("schema_version", 1'000'000));
  if (r.schema_version != kSchemaVersion) {
    throw SchemaMismatch(
        "result record: field 'schema_version': " + std::to_string(r.schema_version) +
        " is not supported (this build reads " + std::to_string(kSchemaVersion) + ")");
  }
  r.status = top.enumeration<Status>("status", 3);
  r.reason = top.string("reason");
  r.suite = top.string("suite");
  r.config = top.string("config");
  r.test = top.string("test");
  r.size = top.unsigned_integer("size");
  r.preset = top.string("preset");

  const FieldReader plugin = top.object("plugin");
  r.plugin = plugin.string("name");
  r.plugin_version = plugin.string("version");
  r.library_version = plugin.string("library_version");
  r.device = plugin.string("device");
  if (j.at("plugin").contains("numa_node") && !j.at("plugin").at("numa_node").is_null()) {
    r.device_numa_node = static_cast<int>(plugin.unsigned_integer("numa_node", 1 << 20));
  }

  const FieldReader params = top.object("params");
  r.flow = read_flow(params, j.at("params"));
  read_duration(params, j.at("params"), r.duration);

  r.emulated = top.strings("emulated");
  r.iterations_run = top.unsigned_integer("iterations_run");
  r.corrupted_bytes = top.unsigned_integer("corrupted_bytes");

  read_results(top, j, r.latency, r.bandwidth);
  if (j.contains("flows")) {
    const json& flows = j.at("flows");
    if (!flows.is_array()) top.fail("flows", "expected an array of flow results");
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const FieldReader one(flows[i], "flows[" + std::to_string(i) + "]");
      FlowResult& f = r.flows.emplace_back();
      f.flow = read_flow(one.object("params"), flows[i].at("params"));
      f.iterations_run = one.unsigned_integer("iterations_run");
      f.corrupted_bytes = one.unsigned_integer("corrupted_bytes");
      read_results(one, flows[i], f.latency, f.bandwidth);
      if (flows[i].contains("measured")) f.measured = read_measured(one);                // 1.4
      if (flows[i].contains("common")) f.common = read_bandwidth(one.object("common"));  // 1.5
      if (flows[i].contains("timeline")) f.timeline = read_timeline(one);                // 1.5
      if (flows[i].contains("common_latency_us")) {                                      // 1.7
        f.common_latency = read_latency(one.object("common_latency_us"));
      }
      if (flows[i].contains("alone")) {  // 1.6
        const FieldReader alone = one.object("alone");
        f.alone = AloneBaseline{.test = alone.string("test"),
                                .latency = read_latency(alone.object("latency_us")),
                                .slowdown_p50 = alone.number("slowdown_p50"),
                                .slowdown_p99 = alone.number("slowdown_p99")};
      }
      if (flows[i].contains("placement"))  // 1.15
        f.placement = placement_from_json(flows[i]["placement"]);
      if (flows[i].contains("cpu_time"))  // 1.16
        f.cpu_time = read_cpu_time(one.object("cpu_time"));
    }
  }

  const FieldReader clock = top.object("clock");
  r.clock_source = clock.string("source");
  r.clock_ghz = clock.number("ghz");
  r.host = top.string("host");
  r.timestamp = top.string("timestamp");
  // Added in 1.1: optional.
  r.schema_minor = j.contains("schema_minor")
                       ? static_cast<int>(top.unsigned_integer("schema_minor", 1'000'000))
                       : 0;
  if (j.contains("provenance")) {
    if (!j["provenance"].is_object()) top.fail("provenance", "expected an object");
    r.provenance = j["provenance"];
  }
  if (j.contains("warnings")) r.warnings = top.strings("warnings");
  if (j.contains("failure")) r.failure = top.string("failure");                    // added in 1.2
  if (j.contains("placement")) r.placement = placement_from_json(j["placement"]);  // 1.3
  if (j.contains("measured")) r.measured = read_measured(top);                     // 1.4
  if (j.contains("trace")) {                                                       // 1.5
    const FieldReader trace = top.object("trace");
    constexpr auto kMost = std::numeric_limits<std::uint64_t>::max();
    r.trace_count = TraceCount{.rows = trace.unsigned_integer("rows", kMost),
                               .dropped = trace.unsigned_integer("dropped", kMost)};
  }
  if (j.contains("fairness_jain")) r.fairness_jain = top.number("fairness_jain");         // 1.5
  if (j.contains("samples_kept")) r.samples_kept = top.unsigned_integer("samples_kept");  // 1.9
  if (j.contains("rails")) {  // 1.11; the imbalance is derived, so not read back
    const FieldReader rails = top.object("rails");
    const json& per_rail = rails.field("per_rail");
    if (!per_rail.is_array()) rails.fail("per_rail", "expected an array");
    for (std::size_t i = 0; i < per_rail.size(); ++i) {
      const FieldReader one(per_rail[i], "rails.per_rail[" + std::to_string(i) + "]");
      r.rails.push_back({.bytes = one.unsigned_integer("bytes"),
                         .requests = one.unsigned_integer("requests"),
                         .mb_per_s = one.number("MB_per_s"),
                         .mreq_per_s = one.number("Mreq_per_s"),
                         .latency = {}});
      if (per_rail[i].contains("latency_us"))  // 1.17
        r.rails.back().latency = read_latency(one.object("latency_us"));
    }
  }
  if (j.contains("cpu_time")) r.cpu_time = read_cpu_time(top.object("cpu_time"));  // 1.10
  if (j.contains("trials")) {
    const FieldReader trials = top.object("trials");
    const json& per_trial = trials.field("per_trial");
    if (!per_trial.is_array()) trials.fail("per_trial", "expected an array");
    for (std::size_t i = 0; i < per_trial.size(); ++i) {
      const FieldReader one(per_trial[i], "trials.per_trial[" + std::to_string(i) + "]");
      TrialSummary& t = r.trials.emplace_back();
      t.iterations_run = one.unsigned_integer("iterations_run");
      for (const model::MetricInfo& metric : model::kMetrics) {
        if (metric.per_trial)
          t.*trial_member(metric.id) = one.number(std::string(metric.name).c_str());
      }
    }
    trials.object("ci95");  // fails unless an object
    for (const auto& [metric, value] : trials.field("ci95").items()) {
      const FieldReader interval(value, "trials.ci95." + metric);
      r.ci95[metric] = {interval.number("mean"), interval.number("low"), interval.number("high")};
    }
  }
  return r;
}

double Record::rail_imbalance() const {
  if (rails.size() < 2) return 0;
  std::uint64_t most = 0, least = std::numeric_limits<std::uint64_t>::max(), sum = 0;
  for (const RailResult& rail : rails) {
    most = std::max(most, rail.bytes);
    least = std::min(least, rail.bytes);
    sum += rail.bytes;
  }
  if (sum == 0) return 0;
  const double mean = static_cast<double>(sum) / static_cast<double>(rails.size());
  return static_cast<double>(most - least) / mean;
}

}  // namespace uniperf::results
