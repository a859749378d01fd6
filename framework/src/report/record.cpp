// The JSON Lines schema, version 1: one object per (config, test, size).
//
//   schema_version  1
//   status          "ok" | "skipped" | "error";  reason: why (skipped, error)
//   suite, config, test, size (bytes), preset
//   plugin          {name, version, library_version, device}
//   params          every effective parameter: op, pattern, direction, window,
//                   window_mode, signal_every, cq_moderation, completion,
//                   rx_depth, rx_replenish, post_list, inline, endpoints,
//                   validate, iterations, duration_s, margin_s, warmup_iterations
//   emulated        features the plugin emulated for this test
//   iterations_run  measured iterations completed
//   latency_us      {samples, one_way, min, p50, p90, p99, p99_9, p99_99, max,
//                   mean, stdev}  (latency tests; microseconds)
//   bandwidth       {bytes, messages, seconds, MB_per_s (10^6 B/s),
//                   Gb_per_s (10^9 bit/s), Mmsg_per_s (10^6 msg/s)}
//   corrupted_bytes payload bytes that failed validation
//   clock           {source, ghz};  host;  timestamp (UTC, ISO 8601)
//
// Compatibility: fields are only ever added within a schema version; a
// renamed, removed or re-defined field bumps schema_version.
#include "report/record.hpp"

namespace uniperf::report {

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
  return "?";
}

json to_json(const engine::FlowSpec& f) {
  return {{"op", to_string(f.op)},
          {"pattern", engine::to_string(f.pattern)},
          {"direction", engine::to_string(f.direction)},
          {"window", f.window},
          {"window_mode", engine::to_string(f.window_mode)},
          {"signal_every", f.signal_every},
          {"cq_moderation", f.cq_moderation},
          {"completion", engine::to_string(f.completion)},
          {"rx_depth", f.rx_depth},
          {"rx_replenish", f.rx_replenish},
          {"post_list", f.post_list},
          {"inline", f.inline_size},
          {"endpoints", f.endpoints},
          {"validate", f.validate}};
}

json to_json(const Record& r) {
  json params = to_json(r.flow);
  params["iterations"] = r.duration.iterations;
  params["duration_s"] = r.duration.seconds;
  params["margin_s"] = r.duration.margin;
  params["warmup_iterations"] = r.duration.warmup_iterations;
  json j = {{"schema_version", r.schema_version},
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
              {"device", r.device}}},
            {"params", params},
            {"emulated", r.emulated},
            {"iterations_run", r.iterations_run},
            {"corrupted_bytes", r.corrupted_bytes},
            {"clock", {{"source", r.clock_source}, {"ghz", r.clock_ghz}}},
            {"host", r.host},
            {"timestamp", r.timestamp}};
  if (r.latency) {
    const auto& l = *r.latency;
    j["latency_us"] = {{"samples", l.samples}, {"one_way", l.one_way}, {"min", l.min},
                       {"p50", l.p50},         {"p90", l.p90},         {"p99", l.p99},
                       {"p99_9", l.p999},      {"p99_99", l.p9999},    {"max", l.max},
                       {"mean", l.mean},       {"stdev", l.stdev}};
  }
  if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    j["bandwidth"] = {{"bytes", b.bytes},         {"messages", b.messages},
                      {"seconds", b.seconds},     {"MB_per_s", b.mb_per_s},
                      {"Gb_per_s", b.gbit_per_s}, {"Mmsg_per_s", b.mmsg_per_s}};
  }
  return j;
}

}  // namespace uniperf::report
