#include "cli/rank_job.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <iterator>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "cli/exit_codes.hpp"
#include "engine/trace.hpp"
#include "report/pair_matrix.hpp"
#include "session/alone_baselines.hpp"
#include "session/environment.hpp"
#include "session/pair_samples.hpp"
#include "session/peer_trace.hpp"
#include "session/provenance.hpp"
#include "session/rank_pairs.hpp"
#include "session/remote_flow_gate.hpp"
#include "session/separate_flows_record.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// How long a pair's two ends may take to find each other.
constexpr auto kPairConnectTimeout = 30s;

/// What rank 0 knows of each rank.
struct Member {
  std::string host;  ///< host name
  std::optional<int> local_rank;
  std::string node;          ///< the launcher's node name; "" if none
  std::string pair_address;  ///< HOST:PORT of its pair listener
  json facts;                ///< session::provenance() there
  /// Its wall clock against rank 0's (session::measure_wall_clock_offset:
  /// {offset_ns, uncertainty_ns, round_trips}), measured at the job's start
  /// so its pairs' times go onto rank 0's timeline; rank 0's own is 0.
  json clock = {{"offset_ns", 0}, {"uncertainty_ns", 0}, {"round_trips", 0}};
};

/// The most trace rows a record of `record`'s flows may carry, both sides':
/// each traced flow's share per lane (engine::trace_rows_per_lane) on each
/// of its lanes, an endpoint's on every rail at most.
std::uint64_t most_trace_rows(const results::Record& record) {
  const std::uint64_t rails = std::max<std::uint64_t>(1, record.rails.size());
  auto of = [rails](const model::FlowSpec& flow) -> std::uint64_t {
    if (flow.trace == 0) return 0;
    const std::uint64_t lanes = std::uint64_t{flow.endpoints} * rails;
    return engine::trace_rows_per_lane(flow.trace_max, lanes) * lanes;
  };
  std::uint64_t most = 0;
  if (record.flows.empty()) most = of(record.flow);
  for (const auto& flow : record.flows) most += of(flow.flow);
  return 2 * most;
}

/// Moves a record of a pair whose initiator's wall clock runs `offset_ns`
/// ahead of rank 0's onto rank 0's: its measured intervals (its trace rows
/// moved as they came, session::receive_pair_trace), and says by how much.
void onto_rank0_clock(results::Record& record, const json& clock) {
  const std::int64_t offset_us = clock.at("offset_ns").get<std::int64_t>() / 1000;
  const auto shift = [&](std::optional<results::MeasuredInterval>& interval) {
    if (!interval) return;
    interval->from_unix_us -= offset_us;
    interval->to_unix_us -= offset_us;
  };
  shift(record.measured);
  for (auto& flow : record.flows) shift(flow.measured);
  if (record.iterations) record.iterations->started_ns -= clock.at("offset_ns").get<std::int64_t>();
  record.provenance["rank0_clock"] = clock;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

/// How long rank 0 waits for a rank's report of one round of `test`, and a
/// rank for its next step: the test's own length, a size's deadline per
/// size, and a minute for the pair to connect and open its plugin.
std::chrono::milliseconds round_budget(const model::TestSpec& test,
                                       const session::RunSettings& settings) {
  const double per_size =
      model::longest_timed_seconds(test) * std::max<std::uint32_t>(1, test.duration.trials);
  const auto sizes = static_cast<double>(test.sizes.size());
  const double seconds =
      sizes * (per_size + static_cast<double>(settings.size_timeout.count())) + 60;
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

/// Watches the star's connections from a thread of its own, so that a rank
/// that is gone ends this rank's own pair session at once (through the
/// session's stop flag) rather than when the session ends; and mirrors the
/// run's own stop request (a signal) into the same flag. Once the
/// heartbeats are open (start_heartbeats), a byte goes to every watched rank
/// each period, and a rank silent for the timeout (SIGSTOP, a hung host
/// whose kernel still answers) is lost as if its connection had closed.
class LinkWatch {
 public:
  LinkWatch(bootstrap::LauncherConnection& job, const std::atomic<bool>* external)
      : job_(job), external_(external) {
    thread_ = std::thread([this] { watch(); });
  }
  ~LinkWatch() { halt(); }
  /// Ends the watch (before the links it watches go).
  void halt() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
  }
  LinkWatch(const LinkWatch&) = delete;
  LinkWatch& operator=(const LinkWatch&) = delete;

  /// Every link's heartbeat connection is open: beat every `period`, and
  /// lose a rank silent for `timeout` (0: beat, but do not watch).
  void start_heartbeats(std::chrono::milliseconds period, std::chrono::milliseconds timeout) {
    period_ = period;
    timeout_ = timeout;
    beating_ = true;
  }

  /// The session's stop flag.
  const std::atomic<bool>* stop_flag() const { return &stop_; }
  /// The first rank seen gone, if any.
  std::optional<int> lost() const {
    const int rank = lost_.load();
    return rank < 0 ? std::nullopt : std::optional<int>(rank);
  }
  /// How that rank was lost.
  std::string why_lost() const {
    return silent_.load() ? "it stopped answering (no heartbeat for " +
                                std::to_string(timeout_.count() / 1000) + " s)"
                          : "its connection to rank 0 closed";
  }
  bool interrupted() const { return external_ != nullptr && external_->load(); }

 private:
  struct Watched {
    int rank;
    int fd;         ///< the control connection's, for its hang-up
    int heartbeat;  ///< -1 until the heartbeats start
    Clock::time_point heard;
  };

  void lose(Watched& w, bool silent) {
    int expected = -1;
    if (lost_.compare_exchange_strong(expected, w.rank)) silent_ = silent;
    stop_ = true;
    // A wait on a silent rank's connection (rank 0's next step, a rank's
    // report) ends now too.
    if (silent) job_.links[link_of(w)]->sever(why_lost());
    w.fd = -1;
    w.heartbeat = -1;
  }

  std::size_t link_of(const Watched& w) const {
    return job_.rank == 0 ? static_cast<std::size_t>(w.rank) : 0;
  }

  /// Reads whatever the rank sent on its heartbeat; true when it sent any.
  static bool drain(int fd) {
    char bytes[64];
    bool heard = false;
    while (::recv(fd, bytes, sizeof bytes, MSG_DONTWAIT) > 0) heard = true;
    return heard;
  }

  void watch() {
    std::vector<Watched> watched;
    for (std::size_t r = 0; r < job_.links.size(); ++r) {
      if (!job_.links[r]) continue;
      const int rank = job_.rank == 0 ? static_cast<int>(r) : 0;
      watched.push_back({rank, job_.links[r]->liveness_fd(), -1, Clock::now()});
    }
    bool beats_open = false;
    auto last_beat = Clock::now();
    std::vector<pollfd> fds;
    while (!done_) {
      if (interrupted()) stop_ = true;
      if (beating_ && !beats_open) {
        beats_open = true;
        for (Watched& w : watched) {
          if (w.fd >= 0) w.heartbeat = job_.links[link_of(w)]->heartbeat_fd();
          w.heard = Clock::now();
        }
      }
      fds.clear();
      for (const Watched& w : watched) {
        fds.push_back({w.fd, POLLRDHUP, 0});  // a negative fd is ignored
        fds.push_back({w.heartbeat, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 100) < 0) continue;
      const auto now = Clock::now();
      const bool beat = beats_open && now - last_beat >= period_;
      if (beat) last_beat = now;
      for (std::size_t i = 0; i < watched.size(); ++i) {
        Watched& w = watched[i];
        if (w.fd < 0) continue;
        if ((fds[2 * i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
          lose(w, false);
          continue;
        }
        if (w.heartbeat < 0) continue;
        if ((fds[2 * i + 1].revents & POLLIN) != 0 && drain(w.heartbeat)) w.heard = now;
        if (beat) {
          const char byte = 1;
          [[maybe_unused]] const auto sent =
              ::send(w.heartbeat, &byte, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        // Silent for the timeout: read once more before blaming it (this
        // thread may not have been scheduled for a while on a busy host).
        if (timeout_.count() > 0 && now - w.heard > timeout_) {
          if (drain(w.heartbeat))
            w.heard = now;
          else
            lose(w, true);
        }
      }
    }
  }

  bootstrap::LauncherConnection& job_;
  const std::atomic<bool>* external_;
  std::atomic<bool> beating_{false};
  std::chrono::milliseconds period_{1000};
  std::chrono::milliseconds timeout_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> lost_{-1};
  std::atomic<bool> silent_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// A rank that is gone: the job ends.
struct RankLost : std::runtime_error {
  RankLost(int which, const std::string& why) : std::runtime_error(why), rank(which) {}
  int rank;
};

/// One pair a rank is in, in one round.
struct Leg {
  bool initiator = false;       ///< this rank measures (else it serves)
  int partner = 0;              ///< the other rank
  std::string partner_address;  ///< an initiator's: the responder's pair listener
  results::Placement placement;
  std::uint32_t slot = 0;  ///< the pair's place in its round: its bound flows' first rail
  /// A test whose flows run in process pairs of their own: the flow this
  /// pair runs (-1: every flow of the test, as threads).
  int flow = -1;
};

/// One rank's part in one round of one test: the pairs it is in, each run
/// on a thread of its own when there are several; none when it sits out.
struct Part {
  std::size_t config = 0;
  std::size_t test = 0;
  std::size_t round = 0;
  double connect_ms = 0;  ///< the job's bootstrap time, for the records
  std::vector<Leg> legs;
  /// A test whose flows run in process pairs of their own: HOST:PORT of
  /// rank 0's session::FlowGateCoordinator; "" otherwise.
  std::string gate;
};

json to_json(const Part& part) {
  json legs = json::array();
  for (const Leg& leg : part.legs) {
    legs.push_back({{"initiator", leg.initiator},
                    {"partner", leg.partner},
                    {"address", leg.partner_address},
                    {"placement", results::to_json(leg.placement)},
                    {"slot", leg.slot},
                    {"flow", leg.flow}});
  }
  return {{"step", "round"},     {"config", part.config},         {"test", part.test},
          {"round", part.round}, {"connect_ms", part.connect_ms}, {"legs", legs},
          {"gate", part.gate}};
}

Part part_from_json(const json& j) {
  Part part;
  part.config = j.at("config").get<std::size_t>();
  part.test = j.at("test").get<std::size_t>();
  part.round = j.at("round").get<std::size_t>();
  part.connect_ms = j.at("connect_ms").get<double>();
  for (const json& leg : j.at("legs")) {
    part.legs.push_back({.initiator = leg.at("initiator").get<bool>(),
                         .partner = leg.at("partner").get<int>(),
                         .partner_address = leg.at("address").get<std::string>(),
                         .placement = results::placement_from_json(leg.at("placement")),
                         .slot = leg.at("slot").get<std::uint32_t>(),
                         .flow = leg.at("flow").get<int>()});
  }
  part.gate = j.at("gate").get<std::string>();
  return part;
}

/// The first message on a pair's connection: which rank connects, for
/// which round. A responder in several pairs of a round tells its
/// connections apart by it, and drops one meant for another round.
json introduction(int rank, const Part& part) {
  return {{"from", rank}, {"config", part.config}, {"test", part.test}, {"round", part.round}};
}

/// What a rank's part of a round left: the records it measured (as an
/// initiator) and whether a test of its own failed.
struct PartResult {
  std::vector<results::Record> records;
  std::vector<std::string> failures;  ///< why steps outside the sessions failed
  bool test_failed = false;

  void add(PartResult&& other) {
    std::move(other.records.begin(), other.records.end(), std::back_inserter(records));
    std::move(other.failures.begin(), other.failures.end(), std::back_inserter(failures));
    test_failed |= other.test_failed;
  }
};

class RankRunner {
 public:
  explicit RankRunner(RankJob& job)
      : job_(job),
        listener_(job.launcher.all_local ? "127.0.0.1" : "0.0.0.0", 0),
        watch_(job.job, job.stop_requested) {}

  int run() { return job_.job.rank == 0 ? coordinate() : serve(); }

 private:
  // ------------------------------------------------------------ rank 0

  int coordinate() {
    const int ranks = job_.job.size;
    std::vector<Member> members(static_cast<std::size_t>(ranks));
    members[0] = me();
    int exit_code = kExitOk;
    try {
      for (int r = 1; r < ranks; ++r) {
        const json hello = receive(r, 60s);
        Member& m = members[static_cast<std::size_t>(r)];
        try {
          m.host = hello.at("host").get<std::string>();
          if (hello.contains("local_rank")) m.local_rank = hello.at("local_rank").get<int>();
          m.node = hello.value("node", "");
          m.pair_address = hello.at("pair").get<std::string>();
          m.facts = hello.at("facts");
        } catch (const json::exception& e) {
          throw RankLost(r, std::string("its hello is not this build's: ") + e.what());
        }
      }
      for (int r = 1; r < ranks; ++r) open_heartbeat(r, 30s);
      watch_.start_heartbeats(job_.settings.heartbeat_period, job_.settings.heartbeat_timeout);
      // Every rank's clock against this one, a rank at a time (each waits
      // for its turn), so that every pair's times land on one timeline.
      for (int r = 1; r < ranks; ++r) {
        try {
          members[static_cast<std::size_t>(r)].clock =
              session::measure_wall_clock_offset(*job_.job.links[static_cast<std::size_t>(r)]);
        } catch (const bootstrap::BootstrapError& e) {
          throw RankLost(r, std::string("measuring its clock: ") + e.what());
        }
      }
      connect_ms_ =
          std::chrono::duration<double, std::milli>(Clock::now() - job_.connect_started).count();
      open_every_config();
      for (std::size_t c = 0; c < job_.configs.size() && !stopping(); ++c) {
        baselines_.clear();  // measured again per config
        for (std::size_t t = 0; t < job_.suite.tests.size() && !stopping(); ++t) {
          const model::TestSpec& test = job_.suite.tests[t];
          if (!model::runs_over(test, job_.configs[c].name)) continue;
          if (test.process == model::FlowProcesses::separate) {
            run_separate_flows(c, t, members);
            continue;
          }
          const model::RankPairs pairing = job_.local ? model::RankPairs::first : test.pairs;
          const auto rounds = session::rounds_of(pairing, ranks);
          const std::size_t first_record = gathered_.size();
          for (std::size_t k = 0; k < rounds.size() && !stopping(); ++k)
            run_round(c, t, k, rounds[k], false, members);
          if (pairing != model::RankPairs::all) continue;
          // The second pass: every suspect pair of the first, measured again
          // on its own, so that one pair's neighbours in its round (a shared
          // switch, an oversubscribed host) do not name it.
          const std::vector<results::Record> first_pass(gathered_.begin() + first_record,
                                                        gathered_.end());
          std::set<std::pair<int, int>> suspects;
          for (const auto& m : report::build_matrices(first_pass, job_.suspects))
            suspects.insert(m.suspect_pairs.begin(), m.suspect_pairs.end());
          std::size_t k = rounds.size();
          for (const auto& [i, j] : suspects) {
            if (stopping() || k - rounds.size() >= most_retests(ranks)) break;
            run_round(c, t, k++, {{i, j}}, true, members);
          }
        }
      }
      if (const auto lost = watch_.lost()) throw RankLost(*lost, watch_.why_lost());
      for (int r = 1; r < ranks; ++r) send(r, {{"step", "done"}});
    } catch (const RankLost& e) {
      const Member& m = members[static_cast<std::size_t>(e.rank)];
      std::cerr << fmt::format(
          "uniperf: lost rank {}{}: {}; ending the job (the records that finished are kept)\n",
          e.rank, m.host.empty() ? "" : " on " + m.host, e.what());
      exit_code = kExitNoPeer;
    }
    watch_.halt();
    job_.job.links.clear();  // the other ranks end now
    if (job_.output != nullptr) job_.output->commit();
    if (exit_code == kExitNoPeer) return exit_code;
    if (watch_.interrupted()) {
      std::cerr << "uniperf: interrupted; the finished records are kept\n";
      return kExitInterrupted;
    }
    const int of_records = exit_code_of(gathered_, job_.suite.fail_on_skip);
    return test_failed_ ? kExitTestErrors : of_records;
  }

  /// A test whose flows run in process pairs of their own: one round, flow
  /// k on ranks 2k and 2k+1, their measured phases gated by a coordinator
  /// here; each pair's record of its flow is held back, and the test's
  /// record of every flow is built from them (session/separate_flows_record.hpp).
  void run_separate_flows(std::size_t config, std::size_t test_index,
                          const std::vector<Member>& members) {
    const model::TestSpec& test = job_.suite.tests[test_index];
    session::Round pairs;
    for (std::size_t k = 0; k < test.flows.size(); ++k)
      pairs.push_back(
          {.initiator = static_cast<int>(2 * k), .responder = static_cast<int>(2 * k + 1)});
    std::vector<model::Role> roles;
    for (const auto& flow : test.flows) roles.push_back(flow.role);
    // Where the ranks reach this one: the host of its pair listener.
    const std::string reach = bootstrap::split_host_port(members[0].pair_address).first;
    std::optional<session::FlowGateCoordinator> gate;
    try {
      gate.emplace(job_.launcher.all_local ? "127.0.0.1" : "0.0.0.0", reach, std::move(roles),
                   test.until);
    } catch (const bootstrap::BootstrapError& e) {
      test_failed_ = true;
      std::cerr << fmt::format("uniperf: test '{}': its flows' gate: {}\n", test.name, e.what());
      return;
    }
    std::vector<results::Record> held;
    held_ = &held;
    run_round(config, test_index, 0, pairs, false, members, gate->address());
    held_ = nullptr;
    gate.reset();
    // Each pair's records, by flow and size.
    for (const std::uint64_t size : test.sizes) {
      std::vector<results::Record> flows;
      for (std::size_t k = 0; k < test.flows.size(); ++k) {
        const auto of_flow = std::find_if(held.begin(), held.end(), [&](const auto& r) {
          return r.size == size && r.placement &&
                 r.placement->initiator.rank == static_cast<int>(2 * k);
        });
        if (of_flow == held.end()) break;
        flows.push_back(std::move(*of_flow));
      }
      // A pair that did not report (its failure is said) leaves no record.
      if (flows.size() != test.flows.size()) continue;
      gather(session::separate_flows_record(
          std::move(flows), static_cast<double>(job_.settings.timeline_bin.count())));
    }
  }

  /// One round: every rank told its part, rank 0's own played, every
  /// report heard. `gate`: a test whose flows run in process pairs of their
  /// own (pair k runs flow k), gated by the coordinator there.
  void run_round(std::size_t config, std::size_t test_index, std::size_t round,
                 const session::Round& pairs, bool retest, const std::vector<Member>& members,
                 const std::string& gate = {}) {
    const int ranks = job_.job.size;
    const model::TestSpec& test = job_.suite.tests[test_index];
    std::vector<Part> parts(static_cast<std::size_t>(ranks));
    for (Part& p : parts) {
      p.config = config;
      p.test = test_index;
      p.round = round;
      p.connect_ms = connect_ms_;
      p.gate = gate;
    }
    const bool separate = !gate.empty();  // pair k runs flow k
    for (std::uint32_t slot = 0; slot < pairs.size(); ++slot) {
      const session::RankPair& pair = pairs[slot];
      const results::Placement placement{.pairs = std::string(model::to_string(test.pairs)),
                                         .round = round,
                                         .ranks = ranks,
                                         .initiator = place(members, pair.initiator),
                                         .responder = place(members, pair.responder),
                                         .retest = retest};
      parts[static_cast<std::size_t>(pair.initiator)].legs.push_back(
          {.initiator = true,
           .partner = pair.responder,
           .partner_address = members[static_cast<std::size_t>(pair.responder)].pair_address,
           .placement = placement,
           .slot = slot,
           .flow = separate ? static_cast<int>(slot) : -1});
      parts[static_cast<std::size_t>(pair.responder)].legs.push_back(
          {.initiator = false,
           .partner = pair.initiator,
           .partner_address = "",
           .placement = placement,
           .slot = slot,
           .flow = separate ? static_cast<int>(slot) : -1});
    }
    for (int r = 1; r < ranks; ++r) send(r, to_json(parts[static_cast<std::size_t>(r)]));
    PartResult own = play(parts[0]);
    note(own, 0, members[0]);
    for (auto& record : own.records) {
      onto_rank0_clock(record, members[0].clock);  // no shift: says the clock is rank 0's
      gather(std::move(record));
    }
    const auto deadline = Clock::now() + round_budget(test, job_.settings);
    for (int r = 1; r < ranks; ++r) collect(r, deadline, members);
  }

  /// The second pass's cap: beyond one retest per rank, so many pairs stand
  /// out that the fabric (or the machine) is the suspect, not a pair; the
  /// rest stay suspects, unconfirmed.
  static std::size_t most_retests(int ranks) { return static_cast<std::size_t>(ranks); }

  /// What the preflight of this rank's pair with `partner` should know:
  /// --cpu pins rank 0 and --peer-cpu rank 1 alone (cli/run_command.cpp),
  /// whichever side of a pair they are, so each unpinned side is told what
  /// would pin it.
  session::PreflightNeeds preflight_needs(const std::vector<model::ConfigSpec>& configs,
                                          int partner) const {
    const auto advice = [this](int rank) -> std::string {
      if (rank == 0) return "pin it with --cpu N";
      if (rank == 1) return "pin it with --peer-cpu N";
      return job_.launcher.launcher == "uniperf"
                 ? "a local job does not pin ranks past 1 (run it under a launcher that binds)"
                 : "ranks past 1 are placed by the launcher's binding (mpirun --bind-to core, "
                   "srun --cpu-bind=cores)";
    };
    return {.hugepages = session::configs_want_hugepages(configs),
            .pin_initiator = advice(job_.job.rank),
            .pin_responder = advice(partner)};
  }

  static results::RankPlace place(const std::vector<Member>& members, int rank) {
    const Member& m = members[static_cast<std::size_t>(rank)];
    return {.rank = rank, .host = m.host, .local_rank = m.local_rank, .node = m.node};
  }

  /// A rank's report of its round: its records, then the end.
  void collect(int rank, Clock::time_point deadline, const std::vector<Member>& members) {
    while (true) {
      const json message = receive(rank, deadline);
      if (message.contains("record")) {
        results::Record record;
        try {
          record = results::record_from_json(message.at("record"));
        } catch (const std::exception& e) {
          throw RankLost(rank, std::string("it sent a record this build cannot read: ") + e.what());
        }
        const json& clock = members[static_cast<std::size_t>(rank)].clock;
        if (message.value("trace_rows", std::uint64_t{0}) > 0) {
          try {
            session::receive_pair_trace(*job_.job.links[static_cast<std::size_t>(rank)], record,
                                        most_trace_rows(record),
                                        clock.at("offset_ns").get<std::int64_t>());
          } catch (const bootstrap::BootstrapError& e) {
            throw RankLost(rank, std::string("its trace rows: ") + e.what());
          }
        }
        if (message.value("kept_series", std::uint64_t{0}) > 0) {
          try {
            session::receive_pair_samples(*job_.job.links[static_cast<std::size_t>(rank)], record);
          } catch (const bootstrap::BootstrapError& e) {
            throw RankLost(rank, std::string("its kept samples: ") + e.what());
          }
        }
        if (message.value("iterations", false)) {
          try {
            session::receive_pair_iterations(*job_.job.links[static_cast<std::size_t>(rank)],
                                             record);
          } catch (const bootstrap::BootstrapError& e) {
            throw RankLost(rank, std::string("its latency iterations: ") + e.what());
          }
        }
        onto_rank0_clock(record, clock);
        gather(std::move(record));
        continue;
      }
      PartResult result;
      result.failures = message.value("failures", std::vector<std::string>{});
      result.test_failed = message.value("test_failed", false);
      note(result, rank, members[static_cast<std::size_t>(rank)]);
      return;
    }
  }

  void note(const PartResult& result, int rank, const Member& member) {
    if (result.test_failed) test_failed_ = true;
    for (const std::string& failure : result.failures) {
      test_failed_ = true;
      std::cerr << fmt::format("uniperf: rank {} on {}: {}\n", rank, member.host, failure);
    }
  }

  void gather(results::Record record) {
    if (held_ != nullptr) {
      held_->push_back(std::move(record));  // one flow's: the test's record is built later
      return;
    }
    // Each pair's session runs one test: the latency flows beside others
    // are compared with their flows alone here, where every test's records
    // come (the last pair's alone record of a config and size is the one).
    const auto test = std::find_if(
        job_.suite.tests.begin(), job_.suite.tests.end(),
        [&](const auto& t) { return t.name == record.test && model::runs_over(t, record.config); });
    if (test != job_.suite.tests.end()) {
      baselines_.compare(*test, record);
      baselines_.remember(*test, record);
    }
    if (job_.observer.on_record) job_.observer.on_record(record);
    // The trace file has the rows now; the job keeps every record to its end.
    results::release_trace_rows(record);
    gathered_.push_back(std::move(record));
  }

  bool stopping() const { return watch_.interrupted() || watch_.lost(); }

  void open_heartbeat(int rank, std::chrono::milliseconds timeout) {
    try {
      job_.job.links[static_cast<std::size_t>(rank)]->open_heartbeat(timeout);
    } catch (const bootstrap::BootstrapError& e) {
      throw RankLost(rank, std::string("its heartbeat connection: ") + e.what());
    }
  }

  void send(int rank, const json& message) {
    try {
      job_.job.links[static_cast<std::size_t>(rank)]->send_text(message.dump());
    } catch (const bootstrap::BootstrapError& e) {
      throw RankLost(rank, e.what());
    }
  }

  json receive(int rank, std::chrono::milliseconds timeout) {
    return receive(rank, Clock::now() + timeout);
  }

  /// The next message from `rank`, waiting no later than `deadline`; a rank
  /// seen gone or silent meanwhile (by the watch: any rank, not only this
  /// one) ends the wait at once.
  json receive(int rank, Clock::time_point deadline) {
    bootstrap::Bootstrap& link = *job_.job.links[static_cast<std::size_t>(rank)];
    try {
      while (!link.message_ready()) {
        if (const auto lost = watch_.lost()) throw RankLost(*lost, watch_.why_lost());
        if (Clock::now() >= deadline) {
          throw RankLost(rank,
                         "its report did not come within the round's budget (its test's length, "
                         "plus --size-timeout per size, plus a minute)");
        }
        std::this_thread::sleep_for(20ms);
      }
      return json::parse(link.receive_text(10s));
    } catch (const bootstrap::BootstrapError& e) {
      throw RankLost(rank, e.what());
    } catch (const json::exception& e) {
      throw RankLost(rank, std::string("it sent a message that is not JSON: ") + e.what());
    }
  }

  // ------------------------------------------------------------ ranks 1..n-1

  int serve() {
    bootstrap::Bootstrap& rank0 = *job_.job.links[0];
    const std::string rank0_host = rank0.peer_host();
    bool test_failed = false;
    std::chrono::milliseconds longest = 60s;
    for (const auto& test : job_.suite.tests)
      longest = std::max(longest, round_budget(test, job_.settings));
    try {
      const Member self = me();
      json hello = {{"host", self.host}, {"pair", self.pair_address}, {"facts", self.facts}};
      if (self.local_rank) hello["local_rank"] = *self.local_rank;
      if (!self.node.empty()) hello["node"] = self.node;
      rank0.send_text(hello.dump());
      // Rank 0 opens the heartbeats once it heard every rank's hello.
      rank0.open_heartbeat(90s);
      watch_.start_heartbeats(job_.settings.heartbeat_period, job_.settings.heartbeat_timeout);
      // Rank 0 measures every rank's clock against its own, in turn.
      session::measure_wall_clock_offset(rank0);
      open_every_config();
      while (true) {
        // Rank 0 may be in a round of its own as long as the longest test.
        const json step = json::parse(rank0.receive_text(2 * longest));
        if (step.value("step", "") == "done") break;
        PartResult result = play(part_from_json(step));
        test_failed |= result.test_failed || !result.failures.empty();
        for (const auto& record : result.records) {
          // Its trace rows follow it (session::send_pair_trace): rank 0
          // writes every pair's, on its own clock.
          rank0.send_text(json{{"record", results::to_json(record)},
                               {"trace_rows", record.trace.size()},
                               {"kept_series", record.kept_samples.size()},
                               {"iterations", record.iterations.has_value()}}
                              .dump());
          if (!record.trace.empty()) session::send_pair_trace(rank0, record);
          // And its kept latency samples: rank 0 writes the samples file.
          if (!record.kept_samples.empty()) session::send_pair_samples(rank0, record);
          // A separate flow's iterations: rank 0 takes its percentiles
          // while every flow ran.
          if (record.iterations) session::send_pair_iterations(rank0, record);
        }
        json end = {{"step", "end"}, {"test_failed", result.test_failed}};
        if (!result.failures.empty()) end["failures"] = result.failures;
        rank0.send_text(end.dump());
      }
    } catch (const bootstrap::BootstrapError& e) {
      std::cerr << fmt::format("uniperf: rank {}: lost rank 0 (the coordinator) on {}: {}\n",
                               job_.job.rank, rank0_host, e.what());
      return kExitNoPeer;
    } catch (const json::exception& e) {
      std::cerr << fmt::format("uniperf: rank {}: rank 0 sent what this build cannot read: {}\n",
                               job_.job.rank, e.what());
      return kExitNoPeer;
    }
    if (watch_.interrupted()) return kExitInterrupted;
    return test_failed ? kExitTestErrors : kExitOk;
  }

  // ------------------------------------------------------------ every rank

  /// Each config's plugin opened once (and closed), on every rank, before
  /// the first round, once the heartbeats run (a collective start waits on
  /// every rank, which must not hold the star's setup) and after the
  /// bootstrap's time was taken. A library whose start is collective over the job
  /// (MPI_Init: the mpi plugin) thus starts on every rank at once, not when
  /// a rank's first pair comes, which for a rank idle in the first rounds
  /// would hold the others' start; it then stays up for the job. What
  /// fails here is said again, with its reason, by the pairs that use it.
  void open_every_config() {
    for (const model::ConfigSpec& config : job_.configs) {
      Plugin* plugin = job_.plugins.find(config.plugin);
      if (plugin == nullptr) continue;
      const session::ScopedEnvironment environment(config.environment);
      try {
        plugin->open(suite::validate_options(config, plugin->options()));
      } catch (const std::exception&) {
        // unavailable, or a bad option: the pairs' records say so
      }
    }
  }

  Member me() const {
    // The address rank 0 reached this rank at is the one to give the others
    // (a host name may resolve elsewhere, or alike for every namespace).
    const auto& link = job_.job.rank == 0 ? job_.job.links[1] : job_.job.links[0];
    const std::string address = job_.launcher.all_local ? "127.0.0.1" : link->local_host();
    Member m;
    m.host = host_name();
    if (job_.launcher.local_rank >= 0) m.local_rank = job_.launcher.local_rank;
    m.node = job_.launcher.node;
    m.pair_address = fmt::format("{}:{}", address, listener_.port());
    m.facts = job_.my_facts;
    return m;
  }

  /// This rank's part of a round: its pairs met, then run at once, each on
  /// a thread of its own when there are several; nothing when it sits out.
  PartResult play(const Part& part) {
    PartResult result;
    if (part.legs.empty()) return result;
    std::vector<std::unique_ptr<bootstrap::Bootstrap>> links = meet(part, result);
    // Set here, once, for the pairs' threads: their sessions' own scopes
    // then find it set and write nothing (setenv is no thread's to race).
    const session::ScopedEnvironment environment(job_.configs.at(part.config).environment);
    std::vector<PartResult> each(part.legs.size());
    if (part.legs.size() == 1) {
      if (links[0]) each[0] = run_leg(part, part.legs[0], *links[0]);
    } else {
      std::vector<std::jthread> threads;
      for (std::size_t i = 0; i < part.legs.size(); ++i) {
        if (!links[i]) continue;
        threads.emplace_back([&, i] { each[i] = run_leg(part, part.legs[i], *links[i]); });
      }
    }  // the threads join here
    for (PartResult& leg : each) result.add(std::move(leg));
    return result;
  }

  /// Why a pair's two ends did not get as far as their session.
  std::string could_not_meet(const Part& part, const Leg& leg, const std::string& why) const {
    return fmt::format("the pair {} -> {} of test '{}' could not meet: {}",
                       leg.placement.initiator.rank, leg.placement.responder.rank,
                       job_.suite.tests.at(part.test).name, why);
  }

  /// The connection of each of the part's pairs, in the order of its legs;
  /// null for a pair whose ends did not meet (why, in result.failures).
  /// Every initiator connects first, and only then does its rank accept:
  /// a listener queues a connection until its rank accepts it, so ranks
  /// that both connect and accept in one round (neighbors, all_to_all)
  /// never wait on each other.
  std::vector<std::unique_ptr<bootstrap::Bootstrap>> meet(const Part& part, PartResult& result) {
    std::vector<std::unique_ptr<bootstrap::Bootstrap>> links(part.legs.size());
    auto failed = [&](const Leg& leg, const std::string& why) {
      result.failures.push_back(could_not_meet(part, leg, why));
    };
    const json intro = introduction(job_.job.rank, part);
    std::size_t awaited = 0;
    for (std::size_t i = 0; i < part.legs.size(); ++i) {
      const Leg& leg = part.legs[i];
      if (!leg.initiator) {
        ++awaited;
        continue;
      }
      try {
        const auto [host, port] = bootstrap::split_host_port(leg.partner_address);
        links[i] = bootstrap::tcp_connect(host, port, 0, kPairConnectTimeout);
        links[i]->send_text(intro.dump());
      } catch (const std::exception& e) {
        links[i].reset();
        failed(leg, e.what());
      }
    }
    const auto deadline = Clock::now() + kPairConnectTimeout;
    while (awaited > 0 && Clock::now() < deadline && !stopping()) {
      std::unique_ptr<bootstrap::Bootstrap> link;
      json theirs;
      try {
        // In slices, so that a rank lost meanwhile ends the wait.
        link = listener_.accept(1, 500ms);
        theirs = json::parse(link->receive_text(5s));
      } catch (const std::exception&) {
        continue;  // no one yet, or a connection that never introduced itself
      }
      for (std::size_t i = 0; i < part.legs.size(); ++i) {
        const Leg& leg = part.legs[i];
        if (leg.initiator || links[i] || theirs.value("from", -1) != leg.partner) continue;
        if (theirs != introduction(leg.partner, part)) break;  // another round's: dropped
        links[i] = std::move(link);
        --awaited;
        break;
      }
    }
    for (std::size_t i = 0; i < part.legs.size(); ++i) {
      const Leg& leg = part.legs[i];
      if (leg.initiator || links[i]) continue;
      failed(leg, stopping() ? std::string("the job is ending")
                             : fmt::format("rank {} did not connect within {} s", leg.partner,
                                           kPairConnectTimeout.count()));
    }
    return links;
  }

  /// One pair session of one test, as either end, over its met connection.
  PartResult run_leg(const Part& part, const Leg& leg, bootstrap::Bootstrap& link) {
    PartResult result;
    try {
      model::SuiteSpec suite = job_.suite;
      suite.tests = {job_.suite.tests.at(part.test)};
      // Its baselines are other tests': rank 0 compares (gather()).
      suite.tests.front().baselines.clear();
      // A test whose flows run in process pairs of their own: this pair's
      // flow alone, its measured phases gated with the other pairs'.
      std::optional<session::RemoteFlowGate> gate;
      if (leg.flow >= 0) {
        model::TestSpec& test = suite.tests.front();
        test.flows = {test.flows.at(static_cast<std::size_t>(leg.flow))};
        try {
          gate.emplace(part.gate,
                       leg.initiator ? session::GateSide::initiator : session::GateSide::responder,
                       static_cast<std::size_t>(leg.flow), kPairConnectTimeout);
        } catch (const std::exception& e) {
          result.failures.push_back(
              could_not_meet(part, leg, std::string("its flows' gate: ") + e.what()));
          return result;
        }
      }
      const std::vector<model::ConfigSpec> configs = {job_.configs.at(part.config)};
      json peer_facts;
      try {
        peer_facts = session::handshake(link, suite, configs, job_.my_facts);
      } catch (const std::exception& e) {
        result.failures.push_back(could_not_meet(part, leg, e.what()));
        return result;
      }
      session::RunSettings settings = job_.settings;
      settings.stop_requested = watch_.stop_flag();
      settings.why_stopped = [this] {
        const auto lost = watch_.lost();
        if (!lost) return std::string("interrupted");
        return *lost == 0 ? std::string("rank 0 (the coordinator) was lost")
                          : "rank " + std::to_string(*lost) + " was lost";
      };
      // A local job's pair of ranks 0 and 1 is the local pair: no placement.
      if (!job_.local || leg.flow >= 0) settings.placement = leg.placement;
      settings.first_rail = leg.slot;
      settings.flow_gate = gate ? &*gate : nullptr;
      if (gate) settings.separate_test = &job_.suite.tests.at(part.test);
      if (leg.initiator) {
        settings.provenance = {{"uniperf", session::build_info()},
                               {"bootstrap",
                                {{"method", job_.job.facts.method},
                                 {"launcher", job_.job.facts.launcher},
                                 {"ranks", job_.job.facts.ranks},
                                 {"rendezvous", job_.job.facts.rendezvous},
                                 {"connect_ms", part.connect_ms}}},
                               {"suite_sha256", job_.suite.content_hash},
                               {"initiator", job_.my_facts},
                               {"responder", peer_facts}};
        if (!job_.job.facts.pmix_version.empty())
          settings.provenance["bootstrap"]["pmix_version"] = job_.job.facts.pmix_version;
        settings.tuned_by = job_.suite.tuned_by;
        // This pair's own: its two ranks' CPUs, clocks and load, as a
        // single pair's records carry them.
        settings.warnings =
            session::preflight(job_.my_facts, peer_facts, preflight_needs(configs, leg.partner));
      }
      session::Observer observer;
      if (job_.job.rank == 0) {
        // Rank 0's live lines, from each of its pairs' threads in turn.
        if (job_.observer.on_start) {
          observer.on_start = [this](const auto&... args) {
            const std::lock_guard lock(live_lines_);
            job_.observer.on_start(args...);
          };
        }
        if (job_.observer.on_interim) {
          observer.on_interim = [this](const auto&... args) {
            const std::lock_guard lock(live_lines_);
            job_.observer.on_interim(args...);
          };
        }
      }
      // One flow of a test of separate flows: the test's record, built at
      // rank 0 from every flow's, says whether it failed (a flow the gate
      // stopped for another's skip is no failure of the test).
      if (leg.flow < 0)
        observer.on_failure = [&result](const std::string&, bool) { result.test_failed = true; };
      // The records as the session made them, trace rows and all (those it
      // returns have given their rows to the observer), for rank 0's files.
      observer.on_record = [&result](const results::Record& record) {
        result.records.push_back(record);
      };
      session::run_from(link, suite, configs, job_.plugins, settings, observer, std::nullopt,
                        false);
    } catch (const std::exception& e) {
      // On a thread of its own nothing may escape; said as the pair's failure.
      result.failures.push_back(fmt::format("the pair {} -> {} failed: {}",
                                            leg.placement.initiator.rank,
                                            leg.placement.responder.rank, e.what()));
    }
    return result;
  }

  RankJob& job_;
  bootstrap::TcpListener listener_;
  LinkWatch watch_;
  std::vector<results::Record> gathered_;
  std::mutex live_lines_;  ///< rank 0: its pairs' threads take turns at the observer
  bool test_failed_ = false;
  double connect_ms_ = 0;  ///< rank 0: from connecting to having heard every rank
  /// While a test whose flows run in process pairs of their own runs: where
  /// its pairs' records wait for the test's record to be built of them.
  std::vector<results::Record>* held_ = nullptr;
  /// Rank 0: the flows measured alone, for the tests that name them
  /// (`baseline:`), per config.
  session::AloneBaselines baselines_{job_.suite};
};

}  // namespace

int run_rank_job(RankJob& job) {
  for (const auto& test : job.suite.tests) {
    if (test.process == model::FlowProcesses::separate &&
        2 * test.flows.size() > static_cast<std::size_t>(job.job.size)) {
      throw std::invalid_argument(fmt::format(
          "test '{}': process: separate runs its {} flows in {} process pairs: the job needs at "
          "least {} ranks, it has {}",
          test.name, test.flows.size(), test.flows.size(), 2 * test.flows.size(), job.job.size));
    }
    if (test.duration.forever) {
      throw std::invalid_argument("test '" + test.name +
                                  "': a run-forever test needs a single pair; a job of " +
                                  std::to_string(job.job.size) + " ranks runs its tests in rounds");
    }
  }
  RankRunner runner(job);
  return runner.run();
}

}  // namespace uniperf::cli
