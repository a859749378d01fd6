// The per-request trace (FlowSpec::trace, docs/traces.md): a lane's rows
// against known post, post-return and completion sequences, then whole tests over the
// fake transport (one row per traced request, every Nth, the cap), and the
// trace file's rows read back.
#include "engine/trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_session.hpp"
#include "results/trace_file.hpp"
#include "session/peer_trace.hpp"
#include "session/session.hpp"

namespace uniperf {
namespace {

using engine::LaneTrace;
using engine::TraceRow;
using results::Status;

TEST(LaneTrace, ACompletionCoversEveryRequestUpToItsId) {
  std::vector<TraceRow> rows(8);
  LaneTrace trace;
  trace.attach(rows.data(), rows.size(), 3, 1);
  trace.restart();
  // Ids 10..15, every fourth signaled (13), and the last (15).
  for (std::uint64_t id = 10; id < 16; ++id) trace.posted(id, 100 + id, id == 13 || id == 15);
  trace.completed(13, 500);
  trace.completed(15, 600);
  ASSERT_EQ(trace.written(), 6u);
  for (std::uint64_t k = 0; k < 6; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(rows[k].id, 10 + k);
    EXPECT_EQ(rows[k].posted, 110 + k);
    EXPECT_EQ(rows[k].completed, k <= 3 ? 500u : 600u);
    EXPECT_EQ(rows[k].lane, 3u);
    EXPECT_EQ(rows[k].signaled, k == 3 || k == 5 ? 1u : 0u);
  }
}

// A post call carries a chain (post_list): when it returned is every traced
// request's of that chain, and of no other.
TEST(LaneTrace, APostCallsReturnStampsTheRowsOfItsChain) {
  std::vector<TraceRow> rows(8);
  LaneTrace trace;
  trace.attach(rows.data(), rows.size(), 0, 2);  // every second request
  trace.restart();
  for (std::uint64_t id = 0; id < 4; ++id) trace.posted(id, 10, id == 3);  // rows: 0, 2
  trace.post_returned(15);
  for (std::uint64_t id = 4; id < 6; ++id) trace.posted(id, 20, id == 5);  // row: 4
  trace.post_returned(22);
  trace.post_returned(99);  // a chain of no traced request
  ASSERT_EQ(trace.written(), 3u);
  EXPECT_EQ(rows[0].returned, 15u);
  EXPECT_EQ(rows[1].returned, 15u);
  EXPECT_EQ(rows[2].returned, 22u);
  EXPECT_EQ(rows[2].posted, 20u);
  trace.restart();
  trace.posted(6, 30, true);
  trace.post_returned(31);
  EXPECT_EQ(rows[0].id, 6u);
  EXPECT_EQ(rows[0].returned, 31u);
}

TEST(LaneTrace, EveryNthFromTheFirstAndTheCapCountsWhatFoundNoRoom) {
  std::vector<TraceRow> rows(3);
  LaneTrace trace;
  trace.attach(rows.data(), rows.size(), 0, 4);
  trace.restart();
  for (std::uint64_t id = 0; id < 20; ++id) trace.posted(id, id, true);
  // Ids 0, 4, 8 kept; 12 and 16 found the rows full.
  ASSERT_EQ(trace.written(), 3u);
  EXPECT_EQ(rows[0].id, 0u);
  EXPECT_EQ(rows[1].id, 4u);
  EXPECT_EQ(rows[2].id, 8u);
  EXPECT_EQ(trace.dropped(), 2u);
  // A completion of an untraced request covers the traced ones before it.
  trace.completed(5, 77);
  EXPECT_EQ(rows[0].completed, 77u);
  EXPECT_EQ(rows[1].completed, 77u);
  EXPECT_EQ(rows[2].completed, 0u);
  // The next phase starts over.
  trace.restart();
  trace.posted(40, 1, true);
  EXPECT_EQ(trace.written(), 1u);
  EXPECT_EQ(trace.dropped(), 0u);
  EXPECT_EQ(rows[0].id, 40u);
}

std::map<std::uint32_t, std::vector<results::TraceRow>> rows_by_flow(const results::Record& r) {
  std::map<std::uint32_t, std::vector<results::TraceRow>> by_flow;
  for (const auto& row : r.trace) by_flow[row.flow].push_back(row);
  return by_flow;
}

TEST(Trace, AStreamHasOneRowPerRequestOnOneTimeline) {
  const auto run = testing::run_fake_suite(
      "  - {name: bw, op: send, pattern: bandwidth, window: 16, signal_every: 4, trace: 1, "
      "sizes: [64, 4096]}\n"
      "  - {name: plain, op: send, pattern: bandwidth, window: 16, sizes: [64]}\n",
      {});
  ASSERT_EQ(run.records.size(), 3u);
  for (const auto& r : run.records) {
    SCOPED_TRACE(r.test + " " + std::to_string(r.size));
    ASSERT_EQ(r.status, Status::ok) << r.reason;
    if (r.test == "plain") {
      EXPECT_FALSE(r.trace_count);
      EXPECT_TRUE(r.trace.empty());
      continue;
    }
    ASSERT_TRUE(r.trace_count);
    EXPECT_EQ(r.trace_count->rows, 200u);  // the measured phase's 200 requests
    EXPECT_EQ(r.trace_count->dropped, 0u);
    ASSERT_EQ(r.trace.size(), 200u);
    std::size_t signaled = 0;
    for (std::size_t k = 0; k < r.trace.size(); ++k) {
      const auto& row = r.trace[k];
      if (k > 0) {
        EXPECT_EQ(row.id, r.trace[k - 1].id + 1);
        EXPECT_GE(row.posted_ns, r.trace[k - 1].posted_ns);
      }
      EXPECT_GT(row.posted_ns, 0);
      // The post call returned before its completion was polled.
      EXPECT_GE(row.returned_ns, row.posted_ns);
      EXPECT_GE(row.completed_ns, row.returned_ns);
      signaled += row.signaled;
    }
    EXPECT_EQ(signaled, 50u);  // signal_every 4
    ASSERT_TRUE(r.measured);
    // The rows sit inside the record's measured interval (microseconds).
    EXPECT_GE(r.trace.front().posted_ns / 1000, r.measured->from_unix_us - 1);
    EXPECT_LE(r.trace.back().completed_ns / 1000, r.measured->to_unix_us + 1);
  }
}

TEST(Trace, EveryNthAndTheCapWarn) {
  const auto run = testing::run_fake_suite(
      "  - {name: nth, op: send, pattern: latency, trace: 10, sizes: [8]}\n"
      "  - {name: capped, op: send, pattern: bandwidth, window: 8, trace: 1, trace_max: 50, "
      "sizes: [8]}\n",
      {});
  ASSERT_EQ(run.records.size(), 2u);
  const auto* nth = testing::find_record(run, "nth", 8);
  ASSERT_TRUE(nth && nth->trace_count);
  // 200 ping-pongs, 1 in 10: the initiator's pings, then the responder's
  // echoes (shipped over the control connection).
  EXPECT_EQ(nth->trace_count->rows, 40u);
  ASSERT_EQ(nth->trace.size(), 40u);
  for (std::size_t k = 1; k < nth->trace.size(); ++k) {
    EXPECT_EQ(nth->trace[k].responder, k >= 20);
    if (k != 20) {
      EXPECT_EQ(nth->trace[k].id, nth->trace[k - 1].id + 10);
    }
  }
  EXPECT_EQ(nth->trace[20].id, nth->trace[0].id) << "an echo answers the ping of its id";
  EXPECT_TRUE(nth->warnings.empty());
  const auto* capped = testing::find_record(run, "capped", 8);
  ASSERT_TRUE(capped && capped->trace_count);
  EXPECT_EQ(capped->status, Status::ok);
  EXPECT_EQ(capped->trace_count->rows, 50u);
  EXPECT_EQ(capped->trace_count->dropped, 150u);
  ASSERT_EQ(capped->warnings.size(), 1u);
  EXPECT_NE(capped->warnings[0].find("no room for 150 more requests"), std::string::npos);
}

TEST(Trace, ConcurrentFlowsShareOneTimeline) {
  const auto run = testing::run_fake_suite(
      "  - name: two\n"
      "    sizes: [256]\n"
      "    flows:\n"
      "      - {op: send, pattern: bandwidth, window: 8, trace: 1}\n"
      "      - {op: write, pattern: bandwidth, window: 4, trace: 2}\n"
      "      - {op: send, pattern: bandwidth, window: 4}\n",
      {});
  ASSERT_EQ(run.records.size(), 1u);
  const auto& r = run.records.front();
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  const auto by_flow = rows_by_flow(r);
  ASSERT_EQ(by_flow.size(), 2u);  // the third flow is not traced
  EXPECT_EQ(by_flow.at(0).size(), 200u);
  EXPECT_EQ(by_flow.at(1).size(), 100u);
  ASSERT_TRUE(r.trace_count);
  EXPECT_EQ(r.trace_count->rows, 300u);
  // Each flow's rows lie within that flow's own measured interval.
  for (std::uint32_t k = 0; k < 2; ++k) {
    ASSERT_TRUE(r.flows[k].measured);
    const auto& m = *r.flows[k].measured;
    for (const auto& row : by_flow.at(k)) {
      EXPECT_GE(row.posted_ns / 1000, m.from_unix_us - 1);
      EXPECT_LE(row.completed_ns / 1000, m.to_unix_us + 1);
    }
  }
}

TEST(Trace, TheRecordCountsItsRowsAndRoundTrips) {
  results::Record r;
  r.trace_count = results::TraceCount{.rows = 1000, .dropped = 24};
  r.trace = {{.flow = 0, .lane = 0, .id = 1, .posted_ns = 5, .completed_ns = 6}};
  const auto j = results::to_json(r);
  EXPECT_EQ(j.at("trace"), nlohmann::json({{"rows", 1000}, {"dropped", 24}}));
  const auto back = results::record_from_json(j);
  ASSERT_TRUE(back.trace_count);
  EXPECT_EQ(back.trace_count->rows, 1000u);
  EXPECT_EQ(back.trace_count->dropped, 24u);
  EXPECT_TRUE(back.trace.empty());  // the rows are the trace file's
  EXPECT_FALSE(results::to_json(results::Record{}).contains("trace"));
}

TEST(TraceFile, RowsWithTheDocumentedColumnsAndNoPartialFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("uniperf-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = results::trace_path_for((dir / "run.jsonl").string());
  EXPECT_EQ(path, dir / "run.trace.csv");
  EXPECT_EQ(results::trace_path_for(""), "trace.csv");
  EXPECT_EQ(results::trace_path_for("out"), "out.trace.csv");
  {
    results::TraceFile file(path, "suite-a");
    results::Record r;
    r.config = "cfg";
    r.test = "t";
    r.size = 4096;
    r.flow.op = Op::write;
    r.provenance = {{"host", "h"}};
    r.trace = {
        {.flow = 0,
         .lane = 1,
         .id = 7,
         .posted_ns = 100,
         .returned_ns = 104,
         .completed_ns = 250,
         .signaled = true},
        {.flow = 0, .lane = 1, .id = 8, .posted_ns = 120, .returned_ns = 0, .completed_ns = 0},
        {.flow = 0,
         .lane = 1,
         .id = 7,
         .posted_ns = 110,
         .returned_ns = 111,
         .completed_ns = 0,
         .responder = true}};
    file.add(r);
    // A launched job's pair names its ranks.
    r.placement = results::Placement{};
    r.placement->initiator.rank = 0;
    r.placement->responder.rank = 2;
    r.trace.resize(1);
    file.add(r);
    EXPECT_FALSE(std::filesystem::exists(path));  // not before commit
    file.commit();
  }
  std::ifstream in(path);
  std::vector<std::string> data;
  std::string line, provenance;
  while (std::getline(in, line)) {
    if (line.rfind("# provenance: ", 0) == 0) provenance = line;
    if (!line.empty() && line[0] != '#') data.push_back(line);
  }
  ASSERT_EQ(data.size(), 5u);
  EXPECT_EQ(data[0], results::kTraceColumns);
  EXPECT_EQ(data[4], "cfg,t,4096,1,1,7,write,4096,100,250,signaled,initiator,104,0-2");
  EXPECT_EQ(data[1], "cfg,t,4096,1,1,7,write,4096,100,250,signaled,initiator,104,");
  EXPECT_EQ(data[2], "cfg,t,4096,1,1,8,write,4096,120,0,none,initiator,0,");
  EXPECT_EQ(data[3], "cfg,t,4096,1,1,7,write,4096,110,0,none,responder,111,");
  EXPECT_NE(provenance.find("\"host\":\"h\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PeerTrace, TheRespondersRowsArriveOnTheInitiatorsClockMarkedAsItsOwn) {
  // More rows than one frame holds, so the chunking is crossed.
  const std::size_t rows = session::kTraceRowsPerFrame + 5;
  results::Record sent;
  sent.flows.resize(2);
  for (std::size_t i = 0; i < rows; ++i) {
    sent.trace.push_back({.flow = static_cast<std::uint32_t>(i % 2),
                          .lane = 3,
                          .id = i,
                          .posted_ns = 1'000'000 + static_cast<std::int64_t>(i),
                          .returned_ns = i == 1 ? 0 : 1'500'000 + static_cast<std::int64_t>(i),
                          .completed_ns = i == 0 ? 0 : 2'000'000 + static_cast<std::int64_t>(i),
                          .signaled = i % 4 == 0});
  }
  sent.trace_count = results::TraceCount{.rows = rows, .dropped = 7};

  auto [initiator, responder] = bootstrap::make_in_process_pair();
  std::thread serving([&, control = std::move(responder)]() mutable {
    session::exchange_peer_trace(*control, sent, 0, 0);
  });
  results::Record received;
  received.flows.resize(2);
  received.trace.push_back({.flow = 0, .id = 99, .posted_ns = 5, .completed_ns = 6});
  received.trace_count = results::TraceCount{.rows = 1, .dropped = 0};
  session::exchange_peer_trace(*initiator, received, rows, 400);
  serving.join();

  ASSERT_EQ(received.trace.size(), rows + 1);
  EXPECT_FALSE(received.trace[0].responder);
  for (std::size_t i = 0; i < rows; ++i) {
    const results::TraceRow& row = received.trace[i + 1];
    ASSERT_TRUE(row.responder);
    EXPECT_EQ(row.flow, i % 2);
    EXPECT_EQ(row.lane, 3u);
    EXPECT_EQ(row.id, i);
    // The responder's clock ran 400 ns ahead: its times move back by that.
    EXPECT_EQ(row.posted_ns, 1'000'000 + static_cast<std::int64_t>(i) - 400);
    EXPECT_EQ(row.returned_ns, i == 1 ? 0 : 1'500'000 + static_cast<std::int64_t>(i) - 400)
        << "a call that did not return stays 0";
    EXPECT_EQ(row.completed_ns, i == 0 ? 0 : 2'000'000 + static_cast<std::int64_t>(i) - 400)
        << "no completion stays none";
    EXPECT_EQ(row.signaled, i % 4 == 0);
  }
  EXPECT_EQ(received.trace_count->rows, rows + 1);
  EXPECT_EQ(received.trace_count->dropped, 7u);
}

// A launched job: a pair's initiator sends its record's rows, its own and
// its responder's, to rank 0, which keeps each row's side, moves them onto
// its clock and leaves the record's count (read with the record) alone.
TEST(PeerTrace, APairsRowsReachRankZeroOnItsClockWithTheirSides) {
  results::Record sent;
  sent.trace = {{.flow = 0,
                 .id = 1,
                 .posted_ns = 1000,
                 .returned_ns = 1010,
                 .completed_ns = 1500,
                 .signaled = true},
                {.flow = 0,
                 .id = 1,
                 .posted_ns = 1200,
                 .returned_ns = 0,
                 .completed_ns = 0,
                 .responder = true}};
  auto [rank0, rank2] = bootstrap::make_in_process_pair();
  std::thread sending(
      [&, link = std::move(rank2)]() mutable { session::send_pair_trace(*link, sent); });
  results::Record received;
  received.trace_count = results::TraceCount{.rows = 2, .dropped = 3};
  session::receive_pair_trace(*rank0, received, 2, 250);
  sending.join();
  ASSERT_EQ(received.trace.size(), 2u);
  EXPECT_FALSE(received.trace[0].responder);
  EXPECT_TRUE(received.trace[0].signaled);
  EXPECT_EQ(received.trace[0].posted_ns, 750);
  EXPECT_EQ(received.trace[0].returned_ns, 760);
  EXPECT_EQ(received.trace[0].completed_ns, 1250);
  EXPECT_TRUE(received.trace[1].responder);
  EXPECT_EQ(received.trace[1].returned_ns, 0);
  EXPECT_EQ(received.trace[1].completed_ns, 0);
  EXPECT_EQ(received.trace_count->rows, 2u);
  EXPECT_EQ(received.trace_count->dropped, 3u);

  // More rows than the record's flows may keep: refused, naming the pair's trace.
  auto [again0, again2] = bootstrap::make_in_process_pair();
  std::thread again(
      [&, link = std::move(again2)]() mutable { session::send_pair_trace(*link, sent); });
  results::Record small;
  EXPECT_THROW(session::receive_pair_trace(*again0, small, 1, 0), bootstrap::BootstrapError);
  again.join();
}

TEST(PeerTrace, MoreRowsThanTheRespondersTraceMaxAreRefused) {
  results::Record sent;
  sent.flows.resize(1);
  sent.trace.resize(10);
  auto [initiator, responder] = bootstrap::make_in_process_pair();
  std::thread serving([&, control = std::move(responder)]() mutable {
    session::exchange_peer_trace(*control, sent, 0, 0);
  });
  results::Record received;
  EXPECT_THROW(session::exchange_peer_trace(*initiator, received, 9, 0), bootstrap::BootstrapError);
  serving.join();
  EXPECT_TRUE(received.trace.empty());
}

}  // namespace
}  // namespace uniperf

namespace uniperf {
namespace {

TEST(WallClockOffset, OneClockAgreesWithItselfWithinTheRecordedUncertainty) {
  // Both sides read the same clock: the true offset is 0, and the estimate
  // must say so within its own uncertainty (half the least round trip).
  auto [initiator, responder] = bootstrap::make_in_process_pair();
  nlohmann::json on_responder = "not run";
  std::thread serving([&, control = std::move(responder)]() mutable {
    on_responder = session::measure_wall_clock_offset(*control);
  });
  const nlohmann::json estimate = session::measure_wall_clock_offset(*initiator);
  serving.join();
  EXPECT_TRUE(on_responder.is_null());
  ASSERT_TRUE(estimate.is_object()) << estimate.dump();
  const auto offset = estimate.at("offset_ns").get<std::int64_t>();
  const auto uncertainty = estimate.at("uncertainty_ns").get<std::int64_t>();
  EXPECT_GT(uncertainty, 0);
  EXPECT_LE(std::llabs(offset), uncertainty) << estimate.dump();
  EXPECT_EQ(estimate.at("round_trips"), 32);
}

}  // namespace
}  // namespace uniperf

TEST(TraceRowsPerLane, EveryLaneKeepsAnEqualShareAndAtLeastOneRow) {
  EXPECT_EQ(uniperf::engine::trace_rows_per_lane(1000, 4), 250u);
  EXPECT_EQ(uniperf::engine::trace_rows_per_lane(1001, 4), 250u);
  // Fewer rows than lanes: one each, so a side may keep more than trace_max
  // (the bound a receiver checks a peer's rows against is per lane).
  EXPECT_EQ(uniperf::engine::trace_rows_per_lane(2, 8) * 8, 8u);
  EXPECT_EQ(uniperf::engine::trace_rows_per_lane(0, 3), 1u);
  EXPECT_EQ(uniperf::engine::trace_rows_per_lane(100, 0), 0u);
}
