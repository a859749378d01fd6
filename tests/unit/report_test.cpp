// Result records and their reporters: the JSON Lines schema and its
// round trip, the atomic result file, the live lines, the side-by-side
// table and the TTY-only progress line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/table.hpp"
#include "results/jsonl_writer.hpp"
#include "results/record.hpp"
#include "results/stats.hpp"

namespace uniperf::report {
namespace {

using namespace results;  // the records these views format

namespace fs = std::filesystem;
using json = nlohmann::json;

Record latency_record(const std::string& config, const std::string& test, std::uint64_t size,
                      double p50) {
  Record r;
  r.suite = "smoke";
  r.config = config;
  r.plugin = config + "-plugin";
  r.plugin_version = "0.3";
  r.library_version = "ucx 1.13.1";
  r.device = "lo";
  r.test = test;
  r.size = size;
  r.preset = "perftest";
  r.flow.op = Op::send;
  r.flow.pattern = model::Pattern::latency;
  r.duration.iterations = 1000;
  r.duration.warmup_iterations = 100;
  r.iterations_run = 1000;
  LatencyStats l;
  l.samples = 1000;
  l.one_way = true;
  l.min = p50 * 0.9;
  l.p50 = p50;
  l.p90 = p50 * 1.1;
  l.p99 = p50 * 1.5;
  l.p999 = p50 * 2;
  l.p9999 = p50 * 3;
  l.max = p50 * 4;
  l.mean = p50 * 1.05;
  l.stdev = 0.125;
  r.latency = l;
  r.clock_source = "tsc";
  r.clock_ghz = 2.9;
  r.host = "bench-host";
  r.timestamp = "2024-05-01T12:00:00Z";
  return r;
}

Record bandwidth_record(const std::string& config, const std::string& test, std::uint64_t size,
                        double seconds) {
  Record r = latency_record(config, test, size, 0);
  r.latency.reset();
  r.flow.op = Op::write;
  r.flow.pattern = model::Pattern::bandwidth;
  r.flow.window = 128;
  r.flow.signal_every = 64;
  r.bandwidth = compute_bandwidth(size * 5000, 5000, seconds);
  r.iterations_run = 5000;
  return r;
}

Record not_run_record(const std::string& config, const std::string& test, std::uint64_t size,
                      Status status, const std::string& reason) {
  Record r = latency_record(config, test, size, 0);
  r.latency.reset();
  r.status = status;
  r.reason = reason;
  r.iterations_run = 0;
  return r;
}

/// A record with every field away from its default, so a round trip that
/// drops or swaps any field shows.
Record full_record() {
  Record r = latency_record("ucx-shm", "send_lat", 4096, 1.2345678901234567);
  r.status = Status::error;
  r.reason = "payload validation failed: 12 corrupted bytes";
  r.flow.op = Op::cswap;
  r.flow.pattern = model::Pattern::message_rate;
  r.flow.direction = model::Direction::bi;
  r.flow.window = 64;
  r.flow.window_mode = model::WindowMode::window_ack;
  r.flow.signal_every = 32;
  r.flow.cq_moderation = 16;
  r.flow.completion = model::CompletionMode::event;
  r.flow.rx_depth = 256;
  r.flow.rx_replenish = 8;
  r.flow.post_list = 4;
  r.flow.inline_size = 220;
  r.flow.endpoints = 3;
  r.flow.validate = true;
  r.duration = {777, 5.5, 0.75, 42};
  r.iterations_run = 12345;
  r.emulated = {"selective_completion", "post_list"};
  r.latency->one_way = false;
  r.bandwidth = compute_bandwidth(123456789, 3333, 0.1234567);
  r.corrupted_bytes = 12;
  return r;
}

void expect_same(const Record& a, const Record& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.failure, b.failure);
  EXPECT_EQ(a.suite, b.suite);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.plugin, b.plugin);
  EXPECT_EQ(a.plugin_version, b.plugin_version);
  EXPECT_EQ(a.library_version, b.library_version);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.preset, b.preset);
  EXPECT_EQ(to_json(a.flow), to_json(b.flow));
  EXPECT_EQ(a.flow.op, b.flow.op);
  EXPECT_EQ(a.flow.inline_size, b.flow.inline_size);
  EXPECT_EQ(a.duration.iterations, b.duration.iterations);
  EXPECT_EQ(a.duration.seconds, b.duration.seconds);
  EXPECT_EQ(a.duration.margin, b.duration.margin);
  EXPECT_EQ(a.duration.warmup_iterations, b.duration.warmup_iterations);
  EXPECT_EQ(a.iterations_run, b.iterations_run);
  EXPECT_EQ(a.emulated, b.emulated);
  ASSERT_EQ(a.latency.has_value(), b.latency.has_value());
  if (a.latency) {
    EXPECT_EQ(a.latency->samples, b.latency->samples);
    EXPECT_EQ(a.latency->one_way, b.latency->one_way);
    EXPECT_EQ(a.latency->min, b.latency->min);
    EXPECT_EQ(a.latency->p50, b.latency->p50);
    EXPECT_EQ(a.latency->p90, b.latency->p90);
    EXPECT_EQ(a.latency->p99, b.latency->p99);
    EXPECT_EQ(a.latency->p999, b.latency->p999);
    EXPECT_EQ(a.latency->p9999, b.latency->p9999);
    EXPECT_EQ(a.latency->max, b.latency->max);
    EXPECT_EQ(a.latency->mean, b.latency->mean);
    EXPECT_EQ(a.latency->stdev, b.latency->stdev);
  }
  ASSERT_EQ(a.bandwidth.has_value(), b.bandwidth.has_value());
  if (a.bandwidth) {
    EXPECT_EQ(a.bandwidth->bytes, b.bandwidth->bytes);
    EXPECT_EQ(a.bandwidth->messages, b.bandwidth->messages);
    EXPECT_EQ(a.bandwidth->seconds, b.bandwidth->seconds);
    EXPECT_EQ(a.bandwidth->messages_sent, b.bandwidth->messages_sent);
    EXPECT_EQ(a.bandwidth->mb_per_s, b.bandwidth->mb_per_s);
    EXPECT_EQ(a.bandwidth->gbit_per_s, b.bandwidth->gbit_per_s);
    EXPECT_EQ(a.bandwidth->mmsg_per_s, b.bandwidth->mmsg_per_s);
  }
  EXPECT_EQ(a.corrupted_bytes, b.corrupted_bytes);
  EXPECT_EQ(a.clock_source, b.clock_source);
  EXPECT_EQ(a.clock_ghz, b.clock_ghz);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.timestamp, b.timestamp);
}

std::string error_of(const json& j) {
  try {
    record_from_json(j);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---------------------------------------------------------------------------
// JSON schema
// ---------------------------------------------------------------------------

TEST(RecordJson, CarriesEveryFieldWithUnitsInTheKeys) {
  const json j = to_json(full_record());
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("status"), "error");
  EXPECT_EQ(j.at("reason"), "payload validation failed: 12 corrupted bytes");
  EXPECT_EQ(j.at("suite"), "smoke");
  EXPECT_EQ(j.at("config"), "ucx-shm");
  EXPECT_EQ(j.at("test"), "send_lat");
  EXPECT_EQ(j.at("size"), 4096);
  EXPECT_EQ(j.at("preset"), "perftest");
  EXPECT_EQ(j.at("plugin"), json({{"name", "ucx-shm-plugin"},
                                  {"version", "0.3"},
                                  {"library_version", "ucx 1.13.1"},
                                  {"device", "lo"},
                                  {"numa_node", nullptr}}));
  const json& p = j.at("params");
  EXPECT_EQ(p.at("op"), "cswap");
  EXPECT_EQ(p.at("pattern"), "message_rate");
  EXPECT_EQ(p.at("direction"), "bi");
  EXPECT_EQ(p.at("window"), 64);
  EXPECT_EQ(p.at("window_mode"), "window_ack");
  EXPECT_EQ(p.at("signal_every"), 32);
  EXPECT_EQ(p.at("cq_moderation"), 16);
  EXPECT_EQ(p.at("completion"), "event");
  EXPECT_EQ(p.at("rx_depth"), 256);
  EXPECT_EQ(p.at("rx_replenish"), 8);
  EXPECT_EQ(p.at("post_list"), 4);
  EXPECT_EQ(p.at("inline"), 220);
  EXPECT_EQ(p.at("endpoints"), 3);
  EXPECT_EQ(p.at("validate"), true);
  EXPECT_EQ(p.at("buffers"), "cycle");
  EXPECT_EQ(p.at("iterations"), 777);
  EXPECT_EQ(p.at("duration_s"), 5.5);
  EXPECT_EQ(p.at("margin_s"), 0.75);
  EXPECT_EQ(p.at("warmup_iterations"), 42);
  EXPECT_EQ(p.at("trials"), 1);
  EXPECT_EQ(p.at("forever"), false);
  EXPECT_EQ(p.at("max_loss"), 1.0);
  EXPECT_EQ(p.at("trace"), 0);
  EXPECT_EQ(p.at("trace_max"), 1 << 20);
  EXPECT_EQ(p.at("role"), "measured");
  EXPECT_EQ(p.at("flow_size"), 0);
  EXPECT_EQ(p.at("flow_iterations"), 0);
  EXPECT_EQ(p.at("flow_duration"), 0.0);
  EXPECT_EQ(p.at("start_offset"), 0.0);
  EXPECT_EQ(p.at("latency_gap"), 0.0);
  EXPECT_EQ(p.at("rate_limit"), "0");
  EXPECT_EQ(p.at("keep_samples"), false);
  EXPECT_EQ(p.at("rail_policy"), "bind");
  EXPECT_EQ(p.at("stripe_threshold"), 8192);
  EXPECT_EQ(p.at("fragment"), 0);
  EXPECT_EQ(p.at("delivery"), "direct");
  EXPECT_EQ(p.at("reassembly"), "cut_through");
  EXPECT_EQ(p.at("source"), "zero_copy");
  EXPECT_EQ(p.at("pages"), "normal");
  EXPECT_EQ(p.at("stream_end"), "last_completion");
  EXPECT_EQ(p.at("target_watch"), "none");
  EXPECT_EQ(p.at("send_buffers"), "pattern");
  EXPECT_EQ(p.size(), 42u);
  EXPECT_EQ(j.at("emulated"), json({"selective_completion", "post_list"}));
  EXPECT_EQ(j.at("iterations_run"), 12345);
  const json& l = j.at("latency_us");
  EXPECT_EQ(l.at("samples"), 1000);
  EXPECT_EQ(l.at("one_way"), false);
  EXPECT_EQ(l.at("p50"), 1.2345678901234567);
  EXPECT_EQ(l.at("p99_9"), 1.2345678901234567 * 2);
  EXPECT_EQ(l.at("p99_99"), 1.2345678901234567 * 3);
  EXPECT_EQ(l.at("stdev"), 0.125);
  for (const char* key : {"min", "p90", "p99", "max", "mean"}) EXPECT_TRUE(l.contains(key)) << key;
  const json& b = j.at("bandwidth");
  EXPECT_EQ(b.at("bytes"), 123456789);
  EXPECT_EQ(b.at("messages"), 3333);
  EXPECT_EQ(b.at("seconds"), 0.1234567);
  EXPECT_DOUBLE_EQ(b.at("MB_per_s").get<double>(), 123456789 / 0.1234567 / 1e6);
  EXPECT_DOUBLE_EQ(b.at("Gb_per_s").get<double>(), 123456789 * 8 / 0.1234567 / 1e9);
  EXPECT_DOUBLE_EQ(b.at("Mmsg_per_s").get<double>(), 3333 / 0.1234567 / 1e6);
  EXPECT_EQ(j.at("corrupted_bytes"), 12);
  EXPECT_EQ(j.at("clock"), json({{"source", "tsc"}, {"ghz", 2.9}}));
  EXPECT_EQ(j.at("host"), "bench-host");
  EXPECT_EQ(j.at("timestamp"), "2024-05-01T12:00:00Z");
}

TEST(RecordJson, LeavesOutMeasurementsThatWereNotMade) {
  const json skipped = to_json(not_run_record("tcp", "read_lat", 8, Status::skipped, "no read"));
  EXPECT_EQ(skipped.at("status"), "skipped");
  EXPECT_EQ(skipped.at("reason"), "no read");
  EXPECT_FALSE(skipped.contains("latency_us"));
  EXPECT_FALSE(skipped.contains("bandwidth"));

  const json bw = to_json(bandwidth_record("tcp", "write_bw", 65536, 0.5));
  EXPECT_EQ(bw.at("status"), "ok");
  EXPECT_FALSE(bw.contains("latency_us"));
  EXPECT_TRUE(bw.contains("bandwidth"));
}

TEST(RecordJson, StatusNames) {
  EXPECT_EQ(to_string(Status::ok), "ok");
  EXPECT_EQ(to_string(Status::skipped), "skipped");
  EXPECT_EQ(to_string(Status::error), "error");
}

TEST(RecordJson, RoundTripsThroughText) {
  for (const Record& original :
       {full_record(), latency_record("a", "send_lat", 2, 0.1),
        bandwidth_record("b", "write_bw", 1 << 20, 0.3),
        not_run_record("c", "read_lat", 8, Status::skipped, "op read: not supported")}) {
    const std::string text = to_json(original).dump();
    const Record back = record_from_json(json::parse(text));
    expect_same(original, back);
    EXPECT_EQ(to_json(back).dump(), text);
  }
}

TEST(RecordJson, BothSidesCpuTimeAndAHistogramsErrorRoundTrip) {
  Record r = latency_record("tcp", "send_lat", 8, 0.5);
  EXPECT_FALSE(to_json(r).contains("cpu_time"));
  EXPECT_FALSE(to_json(r).at("latency_us").contains("percentile_error"));  // exact
  r.latency->percentile_error = 1.0 / 2048;
  r.cpu_time = CpuTime{.initiator = {.user_s = 0.75, .system_s = 0.25, .seconds = 2},
                       .responder = {.user_s = 0.1, .system_s = 0.9, .seconds = 2}};
  const json j = to_json(r);
  EXPECT_EQ(j.at("latency_us").at("percentile_error"), 1.0 / 2048);
  EXPECT_EQ(j.at("cpu_time").at("initiator").at("user_s"), 0.75);
  EXPECT_EQ(j.at("cpu_time").at("initiator").at("cpus_used"), 0.5);  // (0.75 + 0.25) / 2
  EXPECT_EQ(j.at("cpu_time").at("responder").at("system_s"), 0.9);
  const Record back = record_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.cpu_time);
  EXPECT_EQ(back.cpu_time->responder.user_s, 0.1);
  EXPECT_EQ(back.latency->percentile_error, 1.0 / 2048);
  EXPECT_EQ(to_json(back).dump(), j.dump());
}

TEST(RecordJson, EachRailsShareAndTheirImbalanceRoundTrip) {
  Record r = latency_record("tcp", "send_lat", 8, 0.5);
  EXPECT_FALSE(to_json(r).contains("rails"));  // one rail: nothing to say
  // The second rail carried one of the samples: its own latency.
  const LatencyStats rail_latency{.samples = 1, .p50 = 0.75, .max = 0.75, .mean = 0.75};
  r.rails = {{.bytes = 3000, .requests = 3, .mb_per_s = 1.5, .mreq_per_s = 0.0015, .latency = {}},
             {.bytes = 1000,
              .requests = 1,
              .mb_per_s = 0.5,
              .mreq_per_s = 0.0005,
              .latency = rail_latency}};
  const json j = to_json(r);
  EXPECT_EQ(j.at("rails").at("imbalance"), 1.0);  // (3000 - 1000) / 2000
  EXPECT_EQ(j.at("rails").at("per_rail").size(), 2u);
  EXPECT_EQ(j.at("rails").at("per_rail")[1].at("requests"), 1);
  EXPECT_FALSE(j.at("rails").at("per_rail")[0].contains("latency_us"));
  EXPECT_EQ(j.at("rails").at("per_rail")[1].at("latency_us").at("p50"), 0.75);
  const Record back = record_from_json(json::parse(j.dump()));
  ASSERT_EQ(back.rails.size(), 2u);
  EXPECT_EQ(back.rails[0].mb_per_s, 1.5);
  EXPECT_FALSE(back.rails[0].latency);
  ASSERT_TRUE(back.rails[1].latency);
  EXPECT_EQ(back.rails[1].latency->p50, 0.75);
  EXPECT_EQ(to_json(back).dump(), j.dump());
  r.rails[1].bytes = 0;  // one rail carried everything
  EXPECT_EQ(r.rail_imbalance(), 2.0);
}

TEST(RecordJson, AMeasuredIntervalRoundTripsAndMustNotEndBeforeItStarts) {
  Record r = not_run_record("tcp", "send_bw", 65536, Status::ok, "");
  EXPECT_FALSE(to_json(r).contains("measured"));
  r.measured = results::MeasuredInterval{.from_unix_us = 1'795'000'000'000'000,
                                         .to_unix_us = 1'795'000'000'004'500};
  const json j = to_json(r);
  EXPECT_EQ(j.at("measured").at("to_unix_us"), 1'795'000'000'004'500);
  const Record back = record_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.measured);
  EXPECT_EQ(back.measured->from_unix_us, r.measured->from_unix_us);
  EXPECT_EQ(to_json(back).dump(), j.dump());
  Record flows = r;
  flows.flows.resize(2);
  flows.flows[1].measured = results::MeasuredInterval{.from_unix_us = 10, .to_unix_us = 20};
  const Record flows_back = record_from_json(json::parse(to_json(flows).dump()));
  ASSERT_EQ(flows_back.flows.size(), 2u);
  EXPECT_FALSE(flows_back.flows[0].measured);
  ASSERT_TRUE(flows_back.flows[1].measured);
  EXPECT_EQ(flows_back.flows[1].measured->to_unix_us, 20);
  json backwards = j;
  backwards["measured"]["to_unix_us"] = 1;
  try {
    record_from_json(backwards);
    ADD_FAILURE() << "an interval ending before it starts was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("measured"), std::string::npos) << e.what();
  }
}

TEST(RecordJson, APlacementNamesBothRanksAndRoundTrips) {
  Record r = not_run_record("tcp", "send_lat", 8, Status::ok, "");
  EXPECT_FALSE(to_json(r).contains("placement"));  // a single pair has none
  r.placement = results::Placement{
      .pairs = "all",
      .round = 2,
      .ranks = 4,
      .initiator = {.rank = 1, .host = "n1", .local_rank = 0, .node = ""},
      .responder = {.rank = 3, .host = "n2", .local_rank = std::nullopt, .node = ""}};
  r.placement->responder.node = "rack2-n7";
  const json j = to_json(r);
  EXPECT_EQ(j.at("schema_minor"), results::kSchemaMinor);
  EXPECT_EQ(j.at("placement").at("initiator").at("rank"), 1);
  EXPECT_EQ(j.at("placement").at("initiator").at("local_rank"), 0);
  EXPECT_FALSE(j.at("placement").at("responder").contains("local_rank"));
  EXPECT_FALSE(j.at("placement").at("initiator").contains("node"));
  EXPECT_EQ(j.at("placement").at("responder").at("node"), "rack2-n7");
  const Record back = record_from_json(json::parse(j.dump()));
  ASSERT_TRUE(back.placement);
  EXPECT_EQ(back.placement->pairs, "all");
  EXPECT_EQ(back.placement->round, 2u);
  EXPECT_EQ(back.placement->ranks, 4);
  EXPECT_EQ(back.placement->responder.host, "n2");
  EXPECT_EQ(back.placement->responder.node, "rack2-n7");
  EXPECT_FALSE(back.placement->responder.local_rank);
  EXPECT_EQ(to_json(back).dump(), j.dump());

  // (1.15) Flows in process pairs of their own: each flow's pair.
  Record separate = r;
  separate.flows.resize(2);
  separate.flows[1].placement = r.placement;
  separate.flows[1].placement->initiator.rank = 2;
  // (1.16) And each flow's pair's CPU.
  separate.flows[1].cpu_time =
      results::CpuTime{.initiator = {.user_s = 0.5, .system_s = 0.25, .seconds = 1.5},
                       .responder = {.user_s = 1, .system_s = 0, .seconds = 1.5}};
  const json sj = to_json(separate);
  EXPECT_FALSE(sj.at("flows").at(0).contains("placement"));
  EXPECT_FALSE(sj.at("flows").at(0).contains("cpu_time"));
  EXPECT_EQ(sj.at("flows").at(1).at("placement").at("initiator").at("rank"), 2);
  EXPECT_DOUBLE_EQ(sj.at("flows").at(1).at("cpu_time").at("initiator").at("cpus_used"), 0.5);
  const Record separate_back = record_from_json(json::parse(sj.dump()));
  ASSERT_EQ(separate_back.flows.size(), 2u);
  ASSERT_TRUE(separate_back.flows[1].placement);
  EXPECT_EQ(separate_back.flows[1].placement->initiator.rank, 2);
  ASSERT_TRUE(separate_back.flows[1].cpu_time);
  EXPECT_DOUBLE_EQ(separate_back.flows[1].cpu_time->responder.user_s, 1);
  EXPECT_EQ(to_json(separate_back).dump(), sj.dump());

  json broken = j;
  broken["placement"]["responder"]["rank"] = "three";
  try {
    record_from_json(broken);
    ADD_FAILURE() << "a rank that is not a number was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("placement.responder"), std::string::npos) << e.what();
  }

  std::ostringstream out;
  LiveReporter live(out);
  live.on_record(r);
  EXPECT_NE(out.str().find("ranks 1 (n1) -> 3 (rack2-n7 on n2), round 3 of pairs: all"),
            std::string::npos)
      << out.str();
}

TEST(RecordJson, AStalledTestIsAnErrorWithItsFailureKind) {
  Record stalled = not_run_record("tcp", "send_bw", 4096, Status::error,
                                  "no completion for 10 s (--stall-timeout): run aborted after 3 "
                                  "of 100 messages of the measured phase");
  stalled.failure = "stalled";
  const json j = to_json(stalled);
  EXPECT_EQ(j.at("status"), "error");  // a 1.1 reader still reads it
  EXPECT_EQ(j.at("failure"), "stalled");
  EXPECT_GE(j.at("schema_minor"), 2);  // added in 1.2
  EXPECT_EQ(record_from_json(j).failure, "stalled");
  // Only a failure of a known kind has the field.
  EXPECT_FALSE(to_json(not_run_record("t", "x", 8, Status::error, "boom")).contains("failure"));

  std::ostringstream out;
  LiveReporter live(out);
  live.on_record(stalled);
  EXPECT_NE(out.str().find("4096 STALLED: no completion for 10 s"), std::string::npos) << out.str();
}

TEST(RecordJson, NonFiniteNumbersBecomeNullAndReadBackAsNan) {
  Record r = latency_record("a", "t", 1, 1.0);
  r.latency->stdev = std::numeric_limits<double>::quiet_NaN();
  const json j = json::parse(to_json(r).dump());
  EXPECT_TRUE(j.at("latency_us").at("stdev").is_null());
  EXPECT_TRUE(std::isnan(record_from_json(j).latency->stdev));
}

TEST(RecordJson, ReadingNamesTheBadField) {
  const json good = to_json(full_record());

  json missing = good;
  missing.erase("config");
  EXPECT_NE(error_of(missing).find("'config': missing"), std::string::npos) << error_of(missing);

  json bad_op = good;
  bad_op["params"]["op"] = "teleport";
  EXPECT_NE(error_of(bad_op).find("'params.op': unknown value 'teleport'"), std::string::npos)
      << error_of(bad_op);
  EXPECT_NE(error_of(bad_op).find("fetch_add"), std::string::npos) << error_of(bad_op);

  json bad_type = good;
  bad_type["size"] = "4096";
  EXPECT_NE(error_of(bad_type).find("'size': expected a non-negative integer, got string"),
            std::string::npos)
      << error_of(bad_type);

  json negative = good;
  negative["latency_us"]["samples"] = -1;
  EXPECT_NE(error_of(negative).find("'latency_us.samples'"), std::string::npos)
      << error_of(negative);

  json too_wide = good;
  too_wide["params"]["window"] = 1ULL << 33;
  EXPECT_NE(error_of(too_wide).find("'params.window': value 8589934592 is out of range"),
            std::string::npos)
      << error_of(too_wide);

  json newer = good;
  newer["schema_version"] = 2;
  EXPECT_NE(error_of(newer).find("'schema_version': 2 is not supported"), std::string::npos)
      << error_of(newer);

  EXPECT_EQ(error_of(json::array()), "result record: expected an object, got array");
}

TEST(RecordJson, LossIsReportedBesideWhatArrived) {
  Record r = bandwidth_record("ud", "send_bw", 1024, 0.5);
  r.flow.op = Op::send;
  r.flow.max_loss = 0.001;
  r.bandwidth->messages_sent = 5025;  // 5000 arrived
  const json j = json::parse(to_json(r).dump());
  const json& b = j.at("bandwidth");
  EXPECT_EQ(b.at("messages"), 5000);
  EXPECT_EQ(b.at("messages_sent"), 5025);
  EXPECT_EQ(b.at("messages_lost"), 25);
  EXPECT_DOUBLE_EQ(b.at("loss_rate").get<double>(), 25.0 / 5025);
  EXPECT_EQ(j.at("params").at("max_loss"), 0.001);
  const Record back = record_from_json(j);
  expect_same(r, back);
  EXPECT_EQ(back.flow.max_loss, 0.001);
  // Reliable delivery: no loss fields at all.
  EXPECT_FALSE(to_json(bandwidth_record("rc", "send_bw", 1024, 0.5))
                   .at("bandwidth")
                   .contains("messages_sent"));
}

TEST(RecordJson, APipelinesFragmentsRoundTrip) {
  Record r = bandwidth_record("ucx-shm", "write_bw", 10000, 0.5);
  r.flow.op = Op::write;
  r.flow.fragment = 4096;
  r.bandwidth->fragments = 3000;  // 1000 messages of 3 fragments
  const json j = json::parse(to_json(r).dump());
  EXPECT_EQ(j.at("bandwidth").at("fragments"), 3000);
  EXPECT_EQ(j.at("params").at("fragment"), 4096);
  const Record back = record_from_json(j);
  EXPECT_EQ(back.bandwidth->fragments, 3000u);
  EXPECT_EQ(back.flow.fragment, 4096u);
  // Whole messages: no fragments field.
  EXPECT_FALSE(
      to_json(bandwidth_record("rc", "send_bw", 1024, 0.5)).at("bandwidth").contains("fragments"));
}

TEST(RecordJson, ReadsRecordsWrittenBeforeOptionalFieldsWereAdded) {
  json j = to_json(full_record());
  j["params"].erase("max_loss");  // added in 1.2: absent means 1 (loss never fails)
  EXPECT_EQ(record_from_json(j).flow.max_loss, 1.0);
  j["params"].erase("buffers");  // added within schema 1: absent means cycle
  EXPECT_EQ(record_from_json(j).flow.buffers, model::BufferMode::cycle);
  j["params"]["buffers"] = "single";
  EXPECT_EQ(record_from_json(j).flow.buffers, model::BufferMode::single);
}

TEST(RecordJson, IgnoresFieldsItDoesNotKnow) {
  // Fields are only ever added within a schema version.
  json j = to_json(full_record());
  j["cpu_governor"] = "performance";
  j["latency_us"]["p99_999"] = 9.0;
  expect_same(record_from_json(j), full_record());
}

// ---------------------------------------------------------------------------
// The result file
// ---------------------------------------------------------------------------

class JsonlWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("uniperf-report-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    target_ = directory_ / "results.jsonl";
  }
  void TearDown() override { fs::remove_all(directory_); }

  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(directory_)) out.push_back(entry.path());
    return out;
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path directory_;
  fs::path target_;
};

TEST_F(JsonlWriterTest, CommitWritesOneValidLinePerRecord) {
  const std::vector<Record> records = {
      latency_record("ucx", "send_lat", 2, 1.5), latency_record("ucx", "send_lat", 4, 1.6),
      bandwidth_record("ucx", "write_bw", 65536, 0.2),
      not_run_record("ucx", "read_lat", 8, Status::skipped, "no read")};
  {
    JsonlWriter writer(target_);
    for (const auto& r : records) writer.add(r);
    EXPECT_FALSE(fs::exists(target_)) << "visible before commit";
    writer.commit();
    EXPECT_NO_THROW(writer.commit());  // a second commit does nothing
  }
  EXPECT_EQ(files(), std::vector<fs::path>{target_}) << "temporary file left behind";

  std::ifstream in(target_);
  std::string line;
  std::size_t count = 0;
  while (std::getline(in, line)) {
    ASSERT_LT(count, records.size());
    const json j = json::parse(line);  // throws on an invalid line
    EXPECT_EQ(j.at("test"), records[count].test);
    EXPECT_EQ(j.at("size"), records[count].size);
    ++count;
  }
  EXPECT_EQ(count, records.size());

  const auto back = read_jsonl(target_);
  ASSERT_EQ(back.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) expect_same(back[i], records[i]);
}

TEST_F(JsonlWriterTest, DestroyedWithoutCommitLeavesNothing) {
  {
    JsonlWriter writer(target_);
    writer.add(latency_record("ucx", "send_lat", 2, 1.5));
    // Unnamed until commit (O_TMPFILE): a killed run leaves nothing either.
    EXPECT_TRUE(files().empty());
    EXPECT_EQ(writer.temporary().parent_path(), directory_);  // same file system as the target
  }
  EXPECT_FALSE(fs::exists(target_));
  EXPECT_TRUE(files().empty());
}

TEST_F(JsonlWriterTest, ExceptionBeforeCommitLeavesNothing) {
  EXPECT_THROW(
      {
        JsonlWriter writer(target_);
        writer.add(latency_record("ucx", "send_lat", 2, 1.5));
        throw std::runtime_error("lost the peer");
      },
      std::runtime_error);
  EXPECT_FALSE(fs::exists(target_));
  EXPECT_TRUE(files().empty());
}

TEST_F(JsonlWriterTest, ReplacesAnExistingTargetAtomically) {
  { std::ofstream(target_) << "old results\n"; }
  // An open descriptor of the old file: rename leaves it the old content,
  // truncating in place would not.
  const int old_fd = ::open(target_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(old_fd, 0);
  {
    JsonlWriter writer(target_);
    writer.add(latency_record("ucx", "send_lat", 2, 1.5));
    EXPECT_EQ(read(target_), "old results\n") << "target touched before commit";
    writer.commit();
  }
  EXPECT_EQ(read_jsonl(target_).size(), 1u);
  char buffer[64] = {};
  const ssize_t n = ::read(old_fd, buffer, sizeof buffer - 1);
  ::close(old_fd);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(std::max<ssize_t>(n, 0))),
            "old results\n");
  EXPECT_EQ(files(), std::vector<fs::path>{target_});
}

TEST_F(JsonlWriterTest, FailedRunKeepsTheOldTarget) {
  { std::ofstream(target_) << "old results\n"; }
  {
    JsonlWriter writer(target_);
    writer.add(latency_record("ucx", "send_lat", 2, 1.5));
  }
  EXPECT_EQ(read(target_), "old results\n");
  EXPECT_EQ(files(), std::vector<fs::path>{target_});
}

TEST_F(JsonlWriterTest, UnwritableDirectoryNamesThePathAndTheCause) {
  const fs::path missing = directory_ / "no-such-dir" / "results.jsonl";
  try {
    JsonlWriter writer(missing);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((directory_ / "no-such-dir").string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(ENOENT)), std::string::npos) << message;
  }
}

TEST_F(JsonlWriterTest, ADirectoryAsTheTargetIsRefusedBeforeAnythingIsWritten) {
  fs::create_directories(target_);
  try {
    JsonlWriter writer(target_);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("cannot write to " + target_.string() + ": Is a directory"),
        std::string::npos)
        << e.what();
  }
}

TEST_F(JsonlWriterTest, RenameFailureNamesTheTarget) {
  JsonlWriter writer(target_);
  // A directory that appears while the run goes on: a non-empty one cannot
  // be replaced by the rename.
  fs::create_directories(target_ / "occupied");
  writer.add(latency_record("ucx", "send_lat", 2, 1.5));
  try {
    writer.commit();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create " + target_.string() + ": "),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(writer.temporary()));
}

TEST_F(JsonlWriterTest, AddAfterCommitIsALogicError) {
  JsonlWriter writer(target_);
  writer.commit();
  EXPECT_THROW(writer.add(latency_record("ucx", "send_lat", 2, 1.5)), std::logic_error);
  EXPECT_TRUE(read(target_).empty());
}

TEST_F(JsonlWriterTest, InvalidUtf8InAReasonDoesNotLoseTheRecord) {
  Record r = not_run_record("ucx", "send_lat", 2, Status::error, "device \xff\xfe gone");
  {
    JsonlWriter writer(target_);
    EXPECT_NO_THROW(writer.add(r));
    writer.commit();
  }
  const auto back = read_jsonl(target_);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].reason, "device \xEF\xBF\xBD\xEF\xBF\xBD gone");  // U+FFFD twice
}

TEST_F(JsonlWriterTest, ReadingABadLineNamesFileAndLine) {
  {
    std::ofstream out(target_);
    out << to_json(latency_record("ucx", "send_lat", 2, 1.5)).dump() << "\n\n{\"schema_v\n";
  }
  try {
    read_jsonl(target_);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(target_.string() + ":3: "), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Live lines
// ---------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(LiveReporter, PrintsSkippedAndErrorWithTheReason) {
  std::ostringstream out;
  LiveReporter live(out);
  live.on_record(not_run_record("tcp", "read_lat", 8, Status::skipped,
                                "op read: not supported by plugin tcp"));
  live.on_record(not_run_record("tcp", "read_lat", 16, Status::error, "peer gone\nat line 3"));
  const std::string text = out.str();
  EXPECT_NE(text.find("8 SKIPPED: op read: not supported by plugin tcp\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("16 ERROR: peer gone at line 3\n"), std::string::npos) << text;
}

TEST(LiveReporter, HeaderOncePerTestWithLatencyColumns) {
  std::ostringstream out;
  LiveReporter live(out);
  live.on_record(latency_record("ucx", "send_lat", 2, 1.5));
  live.on_record(latency_record("ucx", "send_lat", 4, 1.75));
  live.on_record(bandwidth_record("ucx", "write_bw", 65536, 0.1));
  live.on_record(latency_record("tcp", "send_lat", 2, 9.5));
  const std::string text = out.str();
  EXPECT_EQ(count_of(text, "ucx / send_lat:"), 1u) << text;
  EXPECT_EQ(count_of(text, "ucx / write_bw:"), 1u) << text;
  EXPECT_EQ(count_of(text, "tcp / send_lat:"), 1u) << text;  // a new config is a new header
  EXPECT_EQ(count_of(text, "p99.9"), 2u) << text;
  EXPECT_EQ(count_of(text, "MB/s"), 1u) << text;
  EXPECT_NE(text.find("one-way latency (RTT/2) in us"), std::string::npos) << text;
  // size, iterations, min, p50, p90, p99, p99.9, max, mean, stdev
  EXPECT_NE(text.find("         2       1000     1.350     1.500     1.650     2.250     3.000"
                      "     6.000     1.575     0.125\n"),
            std::string::npos)
      << text;
  // 5000 x 64 KiB in 0.1 s: 3276.8 MB/s, 26.214 Gb/s, 0.05 Mmsg/s
  EXPECT_NE(text.find("     65536       5000      3276.80    26.214     0.0500    0.1000\n"),
            std::string::npos)
      << text;
}

TEST(LiveReporter, LabelsRoundTripLatency) {
  std::ostringstream out;
  LiveReporter live(out);
  Record r = latency_record("ucx", "read_lat", 8, 3.0);
  r.flow.op = Op::read;
  r.latency->one_way = false;
  live.on_record(r);
  EXPECT_NE(out.str().find("round-trip latency in us"), std::string::npos) << out.str();
}

// ---------------------------------------------------------------------------
// Side-by-side table
// ---------------------------------------------------------------------------

TEST(ComparisonTable, ShowsBothConfigsAndTheRatio) {
  ComparisonTable table;
  table.add(latency_record("ucx", "send_lat", 2, 1.5));
  table.add(bandwidth_record("ucx", "write_bw", 65536, 0.1));
  Record read_error = not_run_record("ucx", "read_lat", 8, Status::error, "peer gone");
  read_error.flow.op = Op::read;
  table.add(read_error);
  table.add(latency_record("tcp", "send_lat", 2, 6.0));
  table.add(bandwidth_record("tcp", "write_bw", 65536, 0.4));
  Record read_skipped = not_run_record("tcp", "read_lat", 8, Status::skipped, "no read");
  read_skipped.flow.op = Op::read;
  table.add(read_skipped);
  std::ostringstream out;
  table.print(out);
  const std::string text = out.str();
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 5u) << text;  // header, 3 rows, ratio legend

  EXPECT_NE(lines[0].find("ucx"), std::string::npos) << text;
  EXPECT_LT(lines[0].find("ucx"), lines[0].find("tcp")) << "configs in order of appearance";
  EXPECT_NE(lines[0].find("tcp/ucx"), std::string::npos) << text;
  EXPECT_NE(lines[0].find("metric (unit)"), std::string::npos) << text;

  EXPECT_EQ(lines[1].rfind("send_lat", 0), 0u) << text;
  EXPECT_NE(lines[1].find("p50 one-way us"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("1.500"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("6.000"), std::string::npos) << text;
  EXPECT_NE(lines[1].find("4.000"), std::string::npos) << text;  // 6.0 / 1.5

  EXPECT_NE(lines[2].find("MB/s"), std::string::npos) << text;
  EXPECT_NE(lines[2].find("3276.8"), std::string::npos) << text;
  EXPECT_NE(lines[2].find("819.2"), std::string::npos) << text;
  EXPECT_NE(lines[2].find("0.250"), std::string::npos) << text;  // 819.2 / 3276.8

  EXPECT_NE(lines[3].find("p50 RTT us"), std::string::npos) << text;  // read: round trips
  EXPECT_NE(lines[3].find("error"), std::string::npos) << text;
  EXPECT_NE(lines[3].find("skipped"), std::string::npos) << text;
  EXPECT_EQ(lines[3].back(), '-') << "no ratio without values: " << text;

  // Aligned: the last column is right-aligned, so every row ends at one column.
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(lines[i].size(), lines[0].size()) << text;
  EXPECT_EQ(lines[1].find("1.500") + 5, lines[2].find("3276.8") + 6) << text;
  EXPECT_NE(lines[4].find("ratio = config / ucx"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "no colour";
}

TEST(ComparisonTable, OneConfigHasNoRatioColumn) {
  ComparisonTable table;
  Record rate = bandwidth_record("ucx", "send_mr", 8, 0.01);
  rate.flow.pattern = model::Pattern::message_rate;
  table.add(rate);
  std::ostringstream out;
  table.print(out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  EXPECT_EQ(lines[0].find('/'), std::string::npos) << out.str();
  EXPECT_NE(lines[1].find("Mmsg/s"), std::string::npos) << out.str();
  EXPECT_NE(lines[1].find("0.5000"), std::string::npos) << out.str();  // 5000 msg in 10 ms
}

// A record holding a mean and no percentiles (a native tool's figure in
// tests/fidelity/fidelity.py's records: fi_pingpong and qperf report means)
// heads with its mean and says so, rather than passing it off as a p50.
TEST(ComparisonTable, AMeanOnlyRecordHeadsWithItsMean) {
  const double no_value = std::numeric_limits<double>::quiet_NaN();
  auto mean_only = [&](const std::string& config, double mean) {
    Record r = latency_record(config, "send_lat", 8, 1.0);
    r.latency->min = r.latency->p50 = r.latency->p90 = r.latency->p99 = no_value;
    r.latency->p999 = r.latency->p9999 = r.latency->max = r.latency->stdev = no_value;
    r.latency->mean = mean;
    return r;
  };
  EXPECT_EQ(headline(mean_only("uniperf", 3.5)),
            std::make_pair(3.5, std::string("mean one-way us")));
  Record round_trips = mean_only("uniperf", 7.0);
  round_trips.flow.op = Op::read;
  round_trips.latency->one_way = false;
  EXPECT_EQ(headline(round_trips).second, "mean RTT us");
  EXPECT_EQ(headline(latency_record("uniperf", "send_lat", 8, 2.0)),
            std::make_pair(2.0, std::string("p50 one-way us")))
      << "a record with its percentiles heads with its p50";
  EXPECT_EQ(headline_statistic(mean_only("uniperf", 3.5)), "mean");
  EXPECT_EQ(headline_statistic(round_trips), "mean");
  EXPECT_EQ(headline_statistic(latency_record("uniperf", "send_lat", 8, 2.0)), "p50");
  EXPECT_EQ(headline_statistic(bandwidth_record("uniperf", "send_bw", 65536, 0.5)), "")
      << "a bandwidth is no statistic of samples";

  ComparisonTable table;
  table.add(mean_only("uniperf", 3.5));
  table.add(mean_only("fi_pingpong", 3.25));
  std::ostringstream out;
  table.print(out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_NE(lines[1].find("mean one-way us"), std::string::npos) << out.str();
  EXPECT_EQ(lines[1].find("p50"), std::string::npos) << out.str();
  EXPECT_NE(lines[1].find("3.500"), std::string::npos) << out.str();
  EXPECT_NE(lines[1].find("3.250"), std::string::npos) << out.str();
  EXPECT_NE(lines[1].find("0.929"), std::string::npos) << out.str();  // 3.25 / 3.5
}

// A row whose configs kept different statistics (uniperf's p50 beside a
// native tool's mean) names each value's statistic and gives no ratio: a
// mean over a median is no like-for-like ratio. Rows that agree keep theirs.
TEST(ComparisonTable, ARowMixingAP50AndAMeanNamesEachAndHasNoRatio) {
  Record mean_only = latency_record("fi_pingpong", "send_lat", 8, 1.0);
  mean_only.latency->p50 = std::numeric_limits<double>::quiet_NaN();
  mean_only.latency->mean = 3.25;
  ComparisonTable table;
  table.add(latency_record("uniperf", "send_lat", 8, 2.0));
  table.add(mean_only);
  table.add(latency_record("uniperf", "send_lat", 64, 2.0));
  table.add(latency_record("fi_pingpong", "send_lat", 64, 3.0));
  const auto cells = table.cells();
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[1][2], "p50 one-way us / mean one-way us");
  EXPECT_EQ(cells[1][3], "2.000 [p50]");
  EXPECT_EQ(cells[1][4], "3.250 [mean]");
  EXPECT_EQ(cells[1][5], "-") << "no ratio of a mean to a p50";
  EXPECT_EQ(cells[2][2], "p50 one-way us");
  EXPECT_EQ(cells[2][3], "2.000");
  EXPECT_EQ(cells[2][5], "1.500");
  EXPECT_NE(table.legend().find("[p50], [mean]"), std::string::npos) << table.legend();

  ComparisonTable alike;
  alike.add(latency_record("uniperf", "send_lat", 64, 2.0));
  alike.add(latency_record("fi_pingpong", "send_lat", 64, 3.0));
  EXPECT_EQ(alike.legend().find("[mean]"), std::string::npos) << alike.legend();
}

// With trials the headline carries half its 95% confidence interval (the
// records kept it, and nothing showed it), and the legend says what it is.
TEST(ComparisonTable, TrialsShowTheirConfidenceInterval) {
  ComparisonTable table;
  Record tried = latency_record("tcp", "send_lat", 8, 3.5);
  tried.trials = {{100, 3.4, 3.4, 0, 0}, {100, 3.6, 3.6, 0, 0}};
  tried.ci95["p50_us"] = Interval{3.5, 3.25, 3.75};
  table.add(tried);
  table.add(latency_record("shm", "send_lat", 8, 0.5));  // a single run: no interval
  std::ostringstream out;
  table.print(out);
  const auto lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 4u) << out.str();
  EXPECT_NE(lines[1].find(" ±0.250"), std::string::npos) << out.str();
  EXPECT_EQ(lines[1].find("0.500 ±"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("±x: half the 95% confidence interval of the mean over the trials"),
            std::string::npos)
      << out.str();
  // Without trials, no such legend.
  ComparisonTable single;
  single.add(latency_record("tcp", "send_lat", 8, 3.5));
  std::ostringstream plain;
  single.print(plain);
  EXPECT_EQ(plain.str().find("±"), std::string::npos) << plain.str();
}

// uniperf report base.jsonl new.jsonl: each config against its own base run,
// not only against the first column (the new tcp over the base ucx-shm said
// nothing about tcp's regression).
TEST(ComparisonTable, SeveralFilesGiveEachConfigItsNewOverBaseRatio) {
  ComparisonTable table;
  table.add(latency_record("shm [base]", "send_lat", 8, 1.0));
  table.add(latency_record("tcp [base]", "send_lat", 8, 4.0));
  table.add(latency_record("shm [new]", "send_lat", 8, 1.5));
  table.add(latency_record("tcp [new]", "send_lat", 8, 2.0));
  const auto cells = table.cells();
  ASSERT_EQ(cells.size(), 2u);
  const std::vector<std::string> ratios(cells[0].begin() + 7, cells[0].end());
  EXPECT_EQ(ratios, (std::vector<std::string>{"tcp [base]/shm [base]", "shm [new]/shm [base]",
                                              "tcp [new]/tcp [base]"}));
  EXPECT_EQ(std::vector<std::string>(cells[1].begin() + 7, cells[1].end()),
            (std::vector<std::string>{"4.000", "1.500", "0.500"}));
  EXPECT_NE(table.legend().find("against the first file's"), std::string::npos);
}

// --units MiB: perftest's and ucx_perftest's 2^20 B/s in the table and the
// live lines; the record carries both units.
TEST(ComparisonTable, MiBAreTwoToTheTwentiethBytes) {
  // 5000 x 1 MiB in 5 s: 1048.576 MB/s, exactly 1000 MiB/s.
  const Record r = bandwidth_record("ucx", "write_bw", 1 << 20, 5.0);
  ComparisonTable table(BandwidthUnit::mib);
  table.add(r);
  const auto cells = table.cells();
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1][2], "MiB/s");
  EXPECT_EQ(cells[1][3], "1000.0");
  ComparisonTable decimal;
  decimal.add(r);
  EXPECT_EQ(decimal.cells()[1][3], "1048.6");

  std::ostringstream live;
  LiveReporter(live, BandwidthUnit::mib).on_record(r);
  EXPECT_NE(live.str().find("MiB/s"), std::string::npos) << live.str();
  EXPECT_NE(live.str().find(" 1000.00 "), std::string::npos) << live.str();

  const json j = to_json(r);
  EXPECT_DOUBLE_EQ(j.at("bandwidth").at("MiB_per_s").get<double>(), 1000.0);
  EXPECT_THROW(parse_bandwidth_unit("KB"), std::invalid_argument);
}

TEST(ComparisonTable, TinyRatiosKeepTheirDigits) {
  ComparisonTable table;
  table.add(latency_record("tcp", "send_lat", 8, 3000.0));
  table.add(latency_record("shm", "send_lat", 8, 1.0));
  std::ostringstream out;
  table.print(out);
  const auto lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 2u) << out.str();
  EXPECT_NE(lines[1].find(" 0.00033"), std::string::npos) << out.str();  // 1 / 3000
}

TEST(ComparisonTable, ConfigMissingARowShowsADash) {
  ComparisonTable table;
  table.add(latency_record("ucx", "send_lat", 2, 1.5));
  table.add(latency_record("ucx", "send_lat", 4, 1.5));
  table.add(latency_record("tcp", "send_lat", 2, 3.0));
  std::ostringstream out;
  table.print(out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_NE(lines[1].find("2.000"), std::string::npos) << out.str();
  std::istringstream row(lines[2]);
  const std::vector<std::string> cells{std::istream_iterator<std::string>(row), {}};
  EXPECT_EQ(cells,
            (std::vector<std::string>{"send_lat", "4", "p50", "one-way", "us", "1.500", "-", "-"}))
      << out.str();
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

TEST(Progress, ShowsAndClearsTheLineWhenEnabled) {
  std::ostringstream out;
  {
    Progress progress(out, true);
    progress.start("write_bw", 65536, 3, 24);
    // Elapsed and ETA depend on the clock: checked by shape only.
    const std::string line = out.str();
    EXPECT_EQ(line.rfind("\r[ 3/24] write_bw 65536 B  elapsed ", 0), 0u) << line;
    EXPECT_NE(line.find("s  ETA "), std::string::npos) << line;
    EXPECT_EQ(line.back(), 's');
    progress.finish();
    const std::string cleared = "\r" + std::string(line.size() - 1, ' ') + "\r";
    EXPECT_EQ(out.str(), line + cleared);
    out.str("");
    progress.start("send_lat", 2, 4, 24);
    const std::string longer = out.str();
    EXPECT_EQ(longer.rfind("\r[ 4/24] send_lat 2 B  elapsed ", 0), 0u) << longer;
    out.str("");
    progress.start("x", 2, 5, 24);  // shorter: blanks over the rest of the previous line
    const std::string shorter = out.str();
    EXPECT_EQ(shorter.rfind("\r[ 5/24] x 2 B  elapsed ", 0), 0u) << shorter;
    EXPECT_EQ(shorter.size(), longer.size()) << shorter;
    EXPECT_EQ(shorter.back(), ' ');
    out.str("");
    progress.interim("p50 1.2 us");
    EXPECT_NE(out.str().find("ETA "), std::string::npos);
    EXPECT_NE(out.str().find("  p50 1.2 us"), std::string::npos) << out.str();
    out.str("");
  }  // destroyed while shown: cleared
  EXPECT_EQ(out.str().front(), '\r');
  EXPECT_EQ(out.str().back(), '\r');
  EXPECT_EQ(out.str().find_first_not_of(" \r"), std::string::npos);
}

TEST(Progress, NothingWhenDisabled) {
  std::ostringstream out;
  Progress progress(out, false);
  progress.start("write_bw", 65536, 3, 24);
  progress.finish();
  EXPECT_TRUE(out.str().empty());
}

/// Points stderr at `fd` for the lifetime of the object.
class StderrRedirect {
 public:
  explicit StderrRedirect(int fd) : saved_(::dup(STDERR_FILENO)) {
    std::fflush(stderr);
    ::dup2(fd, STDERR_FILENO);
  }
  ~StderrRedirect() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  StderrRedirect(const StderrRedirect&) = delete;
  StderrRedirect& operator=(const StderrRedirect&) = delete;

 private:
  int saved_;
};

std::string drain(int fd) {
  std::string text;
  char buffer[256];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 200) > 0 && (p.revents & POLLIN) != 0) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

TEST(Progress, SilentWhenStderrIsAPipe) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  {
    StderrRedirect redirect(pipe_fds[1]);
    Progress progress;
    progress.start("write_bw", 65536, 3, 24);
    progress.finish();
  }
  ::close(pipe_fds[1]);
  EXPECT_EQ(drain(pipe_fds[0]), "");
  ::close(pipe_fds[0]);
}

TEST(Progress, ShownWhenStderrIsATerminal) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    GTEST_SKIP() << "no pseudo-terminal on this machine";
  }
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  {
    StderrRedirect redirect(slave);
    Progress progress;
    progress.start("write_bw", 65536, 3, 24);
  }
  ::close(slave);
  const std::string text = drain(master);
  ::close(master);
  EXPECT_NE(text.find("\r[ 3/24] write_bw 65536 B  elapsed "), std::string::npos) << text;
}

}  // namespace
}  // namespace uniperf::report
