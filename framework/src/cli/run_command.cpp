#include "cli/run_command.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <thread>
#include <utility>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/launcher.hpp"
#include "cli/addresses.hpp"
#include "cli/device_flags.hpp"
#include "cli/exit_codes.hpp"
#include "cli/local_job.hpp"
#include "cli/local_pair.hpp"
#include "cli/rank_job.hpp"
#include "cli/run_output.hpp"
#include "cli/shipped_files.hpp"
#include "cli/stop_signals.hpp"
#include "cli/tuned_suite.hpp"
#include "loader/plugin_registry.hpp"
#include "report/concurrent_pairs.hpp"
#include "report/pair_matrix.hpp"
#include "report/table.hpp"
#include "results/jsonl_writer.hpp"
#include "session/provenance.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

using namespace std::chrono_literals;

/// A test whose `configs:` names none of the run's runs nowhere: a typo,
/// or a suite meant for other configs. Said once, by the measuring side.
void warn_of_tests_over_no_config(const model::SuiteSpec& suite,
                                  const std::vector<model::ConfigSpec>& configs) {
  for (const auto& test : suite.tests) {
    const bool runs = std::any_of(configs.begin(), configs.end(), [&](const auto& config) {
      return model::runs_over(test, config.name);
    });
    if (runs) continue;
    std::cerr << fmt::format(
        "uniperf: warning: {}:{}: test '{}' runs over configs {} only, none of this run's\n",
        suite.file, test.source_line, test.name, suite::join(test.configs));
  }
}

/// Whether a flow of the suite asks for a per-request trace (the run then
/// writes a trace file beside its results).
bool traces(const model::SuiteSpec& suite) {
  for (const auto& test : suite.tests) {
    for (const auto& flow : test.flows) {
      if (flow.trace > 0) return true;
    }
  }
  return false;
}

/// Whether a flow of the suite keeps its latency samples (the run then
/// writes a samples file beside its results).
bool keeps_samples(const model::SuiteSpec& suite) {
  for (const auto& test : suite.tests) {
    for (const auto& flow : test.flows) {
      if (flow.keep_samples) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<model::ConfigSpec> load_configs(const std::vector<std::string>& paths,
                                            loader::PluginRegistry& plugins) {
  std::vector<model::ConfigSpec> configs;
  const std::vector<std::string> plugin_names = plugins.names();
  for (const auto& given : paths) {
    // A file here, else one the install ships, else a config inline.
    const std::string path = find_shipped(given, ShippedKind::config);
    configs.push_back(suite::is_inline_config(path, plugin_names) ? suite::parse_inline_config(path)
                                                                  : suite::load_config(path));
    // Options are checked now, before anything runs, when the plugin is here;
    // a missing plugin is reported per test as unavailable.
    if (Plugin* plugin = plugins.find(configs.back().plugin)) {
      suite::validate_rails(configs.back(), plugin->options());
    }
  }
  return configs;
}

namespace {

/// --pair-resume CONFIG:TEST, as the local pair's initiator wrote it.
session::SuitePosition parse_resume(const std::string& text) {
  session::SuitePosition at;
  const auto colon = text.find(':');
  const char* end = text.data() + text.size();
  if (colon == std::string::npos ||
      std::from_chars(text.data(), text.data() + colon, at.config).ptr != text.data() + colon ||
      std::from_chars(text.data() + colon + 1, end, at.test).ptr != end)
    throw std::invalid_argument("--pair-resume: expected CONFIG:TEST, got '" + text + "'");
  return at;
}

/// --peer's control connection: one try, then (saying so, once) more tries
/// until `timeout_s`, for a server that is still starting. Throws
/// BootstrapError naming the server and the wait.
std::unique_ptr<bootstrap::Bootstrap> connect_to_server(const std::string& host, std::uint16_t port,
                                                        double timeout_s,
                                                        const std::string& bind_address) {
  try {
    return bootstrap::tcp_connect(host, port, 0, 0ms, bind_address);
  } catch (const bootstrap::UnknownHost&) {
    throw;
  } catch (const bootstrap::CannotBind&) {
    throw;
  } catch (const bootstrap::BootstrapError& e) {
    if (timeout_s <= 0) throw;
    std::cerr << fmt::format("uniperf: {}; trying for {:g} s (--connect-timeout)\n", e.what(),
                             timeout_s);
  }
  const auto timeout = std::chrono::milliseconds(std::llround(timeout_s * 1000));
  try {
    return bootstrap::tcp_connect(host, port, 0, timeout, bind_address);
  } catch (const bootstrap::BootstrapError& e) {
    throw bootstrap::BootstrapError(fmt::format(
        "{} (after {:g} s: is `uniperf serve` or `uniperf ... --listen` running there?)", e.what(),
        timeout_s));
  }
}

/// Whether the connection behind `fd` (Bootstrap::liveness_fd) is closed
/// by its peer, or closes within `wait`. -1: no connection to ask.
bool closes_within(int fd, std::chrono::milliseconds wait) {
  if (fd < 0) return false;
  pollfd watched{fd, POLLRDHUP, 0};
  const auto until = std::chrono::steady_clock::now() + wait;
  do {
    if (::poll(&watched, 1, 50) > 0 && (watched.revents & (POLLRDHUP | POLLHUP | POLLERR)))
      return true;
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

}  // namespace

CLI::Option* add_heartbeat_option(CLI::App* command, double& seconds, const std::string& help) {
  return command->add_option("--heartbeat", seconds, help)
      ->default_val(5)
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            const double s = std::strtod(text.c_str(), nullptr);
            if (s == 0 || (s >= 2 && s <= 3600)) return "";
            return "0 (not watched) or 2 to 3600 seconds (a beat goes out every second)";
          },
          "SECONDS"));
}

void add_connection_options(CLI::App* command, ConnectionOptions& options) {
  command->add_option("-c,--config", options.configs,
                      "Provider config: a YAML file, or inline PLUGIN:KEY=VALUE,... (e.g. "
                      "verbs:device=mlx5_0,port=1,gid_index=3; env.NAME=VALUE sets the "
                      "environment; a bare plugin name takes its defaults); repeat to compare. "
                      "Or the device flags below, which make one more");
  add_device_flags(command, options.device_flags);
  CLI::Option* peer =
      command->add_option("--peer", options.peer,
                          "Run against `uniperf serve` (or `uniperf ... --listen`) on HOST[:PORT], "
                          "[IPV6]:PORT (this side measures; default port " +
                              std::to_string(kDefaultPort) + ")");
  command
      ->add_option("--bind", options.bind,
                   "With --peer: the numeric address of this host that the control connection "
                   "and its heartbeat leave from (a config's data connections: its own option, "
                   "tcp's bind_address)")
      ->needs(peer);
  command->add_option(
      "--coordinator", options.coordinator,
      "Under a launcher without PMIx (mpirun, srun): rank 0's HOST:PORT, where the ranks meet "
      "(default when every rank is on this host: 127.0.0.1 and a port derived from the job)");
  options.listen_flags.push_back(command
                                     ->add_option("--listen", options.listen,
                                                  "Serve a peer on [HOST:]PORT (default port " +
                                                      std::to_string(kDefaultPort) + ")")
                                     ->expected(0, 1));
  command->add_option("-o,--output", options.output,
                      "Write JSON Lines results to FILE (atomically)");
  command
      ->add_option("--timeout", options.size_timeout_s,
                   "Seconds one size may run past its duration before it counts as hung")
      ->default_val(120)
      ->check(CLI::Range(1, 7 * 24 * 3600));
  command
      ->add_option("--stall-timeout", options.stall_timeout_s,
                   "Seconds without a completion while a test waits for one before that test "
                   "ends as stalled (the run goes on); 0: only --timeout applies")
      ->default_val(10)
      ->check(CLI::Range(0, 7 * 24 * 3600));
  command
      ->add_option("--timeline-bin", options.timeline_bin_ms,
                   "Milliseconds per bin of a traced flow's bandwidth over time (docs/traces.md)")
      ->default_val(10)
      ->check(CLI::Range(0.001, 3600e3));
  add_heartbeat_option(command, options.heartbeat_s,
                       "Seconds without a heartbeat from the peer (sent every second on a "
                       "connection of its own) before it counts as lost, exit 3; 0: not watched");
  command
      ->add_option("--connect-timeout", options.connect_timeout_s,
                   "Seconds --peer keeps trying to reach a server that is not up yet (refused, "
                   "unreachable) before the run ends, exit 3; 0: one try")
      ->default_val(10)
      ->check(CLI::Range(0.0, 3600.0));
  command->add_flag("--quiet", options.quiet, "No live lines, only the final table");
  command
      ->add_option("--units", options.units,
                   "Bandwidth in the table and live lines: MB (10^6 B/s) or MiB (2^20 B/s, as "
                   "perftest and ucx_perftest count); records carry both")
      ->check(CLI::IsMember({"MB", "MiB"}))
      ->default_val("MB");
  // perftest's --report_gbits: the table always shows Gb/s beside MB/s, so
  // the flag is accepted and changes nothing.
  command->add_flag("--report_gbits")
      ->description("Accepted for perftest's sake: the table always shows Gb/s");
  command->add_flag("--require-invariant-tsc", options.require_invariant_tsc,
                    "Refuse to run (exit 2) where a side's TSC is not invariant, which times "
                    "cannot be trusted to; without it such a run warns in every record");
  command->add_flag("--fail-on-skip", options.fail_on_skip,
                    "Exit 1 when a record is skipped (a missing device, an unsupported op), as "
                    "for a failed test: a CI gate then fails instead of passing on records that "
                    "measured nothing (the suite key fail_on_skip: true does the same)");
  command
      ->add_option("--trials", options.trials,
                   "Measure each size N times; records get per-trial values and 95% CIs")
      ->check(CLI::Range(1u, 1000u));
  command->add_flag("--run-infinitely,--run_infinitely", options.run_forever,
                    "Run each test until Ctrl-C, reporting every --report-interval seconds");
  command
      ->add_option("--report-interval", options.report_interval,
                   "Seconds per interim report: run-forever windows (default 5); in duration "
                   "mode the duration runs as windows of this length")
      ->check(CLI::PositiveNumber);
  command->add_option("--cpu", options.cpu, "Pin this process to CPU N (recorded)");
  command->add_option("--peer-cpu", options.peer_cpu,
                      "Pin the local pair's responder to CPU N (recorded; on two hosts give "
                      "the server its own --cpu)");
  cli::add_report_file_options(command, options.report_files);
  command->add_option("--pair-connect", options.pair_connect)->group("");  // internal
  command->add_option("--pair-resume", options.pair_resume)->group("");    // internal
}

void apply_run_overrides(model::SuiteSpec& suite, const ConnectionOptions& options) {
  if (options.fail_on_skip) suite.fail_on_skip = true;
  for (auto& test : suite.tests) {
    auto& d = test.duration;
    if (options.trials) d.trials = *options.trials;
    if (options.run_forever) {
      d.forever = true;
      d.iterations = 0;
      d.seconds = 5;
    }
    if (d.forever && options.report_interval) d.seconds = *options.report_interval;
    // Interim results in duration mode: the duration runs as back-to-back
    // windows of the interval (trials), each reported as it ends and pooled
    // in the record, so nothing is sampled inside the timed loop.
    if (!d.forever && d.seconds > 0 && options.report_interval &&
        d.seconds > *options.report_interval) {
      const auto windows =
          static_cast<std::uint32_t>(std::lround(d.seconds / *options.report_interval));
      d.trials *= std::max<std::uint32_t>(1, windows);
      d.seconds = *options.report_interval;
    }
    if (d.seconds > 0 && 2 * d.margin >= d.seconds) d.margin = 0;
  }
}

nlohmann::json offered_overrides(const ConnectionOptions& options) {
  nlohmann::json overrides = {{"fail_on_skip", options.fail_on_skip},
                              {"run_forever", options.run_forever},
                              {"size_timeout_s", options.size_timeout_s},
                              {"stall_timeout_s", options.stall_timeout_s},
                              {"timeline_bin_ms", options.timeline_bin_ms}};
  if (options.trials) overrides["trials"] = *options.trials;
  if (options.report_interval) overrides["report_interval"] = *options.report_interval;
  return overrides;
}

void take_offered_overrides(const nlohmann::json& overrides, ConnectionOptions& options) {
  // A peer's message is input: a value of the wrong type is refused by name.
  auto read = [&overrides](const char* key, auto& into) {
    const auto it = overrides.find(key);
    if (it == overrides.end()) return;
    try {
      into = it->template get<std::remove_reference_t<decltype(into)>>();
    } catch (const nlohmann::json::exception&) {
      throw std::invalid_argument(std::string("the client's override ") + key + " is " +
                                  it->dump());
    }
  };
  read("fail_on_skip", options.fail_on_skip);
  read("run_forever", options.run_forever);
  read("size_timeout_s", options.size_timeout_s);
  read("stall_timeout_s", options.stall_timeout_s);
  read("timeline_bin_ms", options.timeline_bin_ms);
  if (overrides.contains("trials")) read("trials", options.trials.emplace());
  if (overrides.contains("report_interval"))
    read("report_interval", options.report_interval.emplace());
}

session::RunSettings run_settings(const ConnectionOptions& options) {
  session::RunSettings settings;
  settings.size_timeout = std::chrono::seconds(options.size_timeout_s);
  settings.stall_timeout = std::chrono::seconds(options.stall_timeout_s);
  settings.timeline_bin = std::chrono::microseconds(std::llround(options.timeline_bin_ms * 1e3));
  // Beats go out every second whatever the timeout (the peer's timeout may
  // differ from ours), so a timeout is at least two periods.
  settings.heartbeat_period = 1s;
  settings.heartbeat_timeout = std::chrono::milliseconds(std::llround(options.heartbeat_s * 1000));
  settings.stop_requested = &stop_requested();
  return settings;
}

int execute(model::SuiteSpec suite, const ConnectionOptions& options, int argc, char** argv) {
  loader::PluginRegistry plugins(loader::default_search_path());
  std::vector<std::string> given = options.configs;
  if (auto from_flags = inline_config_of(options.device_flags)) given.push_back(*from_flags);
  if (given.empty()) {
    throw std::invalid_argument(
        "no config: give -c FILE, -c PLUGIN:KEY=VALUE,... or a shipped config's name (uniperf "
        "list), or device flags (--plugin, -d/-i/-x, --provider, --endpoint, --tls)");
  }
  const auto configs = load_configs(given, plugins);
  suite = tuned_suite(suite, options.tuning_files, configs);
  apply_run_overrides(suite, options);

  // Addresses are read before anything starts: a bad one is bad input.
  const auto peer_address = options.peer.empty()
                                ? std::pair<std::string, std::uint16_t>{}
                                : split_host_port("--peer", options.peer, "127.0.0.1");
  const auto listen_address = options.listening()
                                  ? split_host_port("--listen", options.listen, "0.0.0.0")
                                  : std::pair<std::string, std::uint16_t>{};

  // Started by a launcher (mpirun, srun): its two ranks are the pair, rank 0
  // measures (docs/architecture.md, "Bootstrap"). A local pair's responder
  // (--pair-connect) is never one, whatever environment it inherited.
  std::optional<bootstrap::LauncherInfo> launcher;
  std::optional<std::pair<std::string, std::uint16_t>> coordinator;
  try {
    if (options.pair_connect.empty())
      launcher = bootstrap::detect_launcher(bootstrap::current_environment());
  } catch (const bootstrap::BootstrapError& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  }
  // A local run of a suite whose flows run in separate processes starts
  // the job a launcher would have (cli/local_job.hpp); this is its rank 0.
  std::optional<LocalJob> local_job;
  if (!launcher && options.pair_connect.empty() && options.peer.empty() && !options.listening() &&
      options.coordinator.empty()) {
    if (const int ranks = local_ranks_needed(suite); ranks > 2) {
      local_job.emplace(ranks);
      launcher = local_job->info();
      coordinator = local_job->coordinator();
    }
  }
  if (launcher && !coordinator && !launcher->coordinator.empty())
    coordinator = split_host_port("UNIPERF_JOB_COORDINATOR", launcher->coordinator, "127.0.0.1");
  if (!options.coordinator.empty()) {
    if (!launcher)
      throw std::invalid_argument(
          "--coordinator is for a run started by a launcher (mpirun, srun); use --peer/--listen");
    coordinator = split_host_port("--coordinator", options.coordinator, "127.0.0.1");
  }
  if (launcher && (!options.peer.empty() || options.listening()))
    std::cerr << "uniperf: warning: started by a launcher (" << launcher->launcher
              << "): --peer/--listen are ignored, the launcher's ranks are the pair\n";
  const bool launched_rank0 = launcher && launcher->rank == 0;
  // With an output on standard output (-o -), the table goes to standard
  // error: a pipe reads the records alone.
  std::ostream& table_out = table_stream(options.report_files, options.output);

  // The measuring side (a local pair's first process, --peer, or rank 0) writes the
  // results file and the report files; they are opened now, so a bad path
  // (a directory, a folder that does not exist) fails before anything runs.
  std::optional<RunOutput> output;
  if (launcher ? launched_rank0 : options.pair_connect.empty() && !options.listening())
    output.emplace(
        options.output, options.report_files, suite.name,
        traces(suite) ? results::trace_path_for(options.output) : std::filesystem::path(),
        keeps_samples(suite) ? results::samples_path_for(options.output) : std::filesystem::path());
  if (output) warn_of_tests_over_no_config(suite, configs);

  // A local pair's responder is this command line re-run with
  // --pair-connect: it takes --peer-cpu as its own pin.
  // A launcher's rank 1 is the responder too: the same command line runs on
  // every rank, so --cpu pins rank 0 and --peer-cpu rank 1. Ranks 2 and up
  // take neither: one CPU for every rank would put them all on it; the
  // launcher's own binding places them.
  const bool responder = !options.pair_connect.empty() || (launcher && launcher->rank == 1);
  const bool beyond_first_pair = launcher && launcher->rank >= 2;
  const std::optional<int> my_cpu = beyond_first_pair ? std::nullopt
                                    : responder       ? options.peer_cpu
                                                      : options.cpu;
  if (my_cpu) session::pin_to_cpu(*my_cpu);
  if (launched_rank0 && launcher->size > 2 && (options.cpu || options.peer_cpu)) {
    std::cerr << "uniperf: --cpu pins rank 0 and --peer-cpu rank 1 only: ranks 2 to "
              << launcher->size - 1
              << (launcher->launcher == "uniperf"
                      ? " run unpinned\n"
                      : " are placed by the launcher's binding (mpirun --bind-to core, srun "
                        "--cpu-bind=cores)\n");
  }
  const nlohmann::json my_facts = session::provenance();
  // This side's clock first, before a peer is started or reached; another
  // host's once the handshake has brought its facts.
  const auto refuse_unsound_clocks = [&](const nlohmann::json& peer) {
    if (!options.require_invariant_tsc) return false;
    const std::vector<std::string> unsound = session::unsound_clocks(my_facts, peer);
    for (const std::string& why : unsound)
      std::cerr << "uniperf: refused: " << why << " (--require-invariant-tsc)\n";
    return !unsound.empty();
  };
  if (refuse_unsound_clocks(nullptr)) return kExitBadInput;
  nlohmann::json peer_facts;

  // Declared before `control`: a PMIx session ends after the connection.
  std::unique_ptr<bootstrap::LauncherConnection> launched;
  std::unique_ptr<bootstrap::Bootstrap> control;
  std::optional<cli::LocalPair> pair;
  bool handshaken = false;
  const auto connect_started = std::chrono::steady_clock::now();
  try {
    if (!options.pair_connect.empty()) {
      const auto [host, port] =
          split_host_port("--pair-connect", options.pair_connect, "127.0.0.1");
      control = bootstrap::tcp_connect(host, port, 1, 10s);
    } else if (launcher) {
      if (local_job) {
        std::cerr << fmt::format(
            "uniperf: a test of this suite runs its flows in separate processes: a job of {} "
            "ranks on this host\n",
            launcher->size);
        local_job->start(argc, argv);
      }
      launched = bootstrap::connect_launcher(*launcher, coordinator, 60s);
      // Two ranks are one pair over their one connection; more are a job
      // of pairs that rank 0 coordinates (cli/rank_job.hpp).
      if (launched->size == 2) control = std::move(launched->links[launched->rank == 0 ? 1 : 0]);
    } else if (!options.peer.empty()) {
      const auto [host, port] = peer_address;
      control = connect_to_server(host, port, options.connect_timeout_s, options.bind);
    } else if (options.listening()) {
      const auto [host, port] = listen_address;
      bootstrap::TcpListener listener(host, port);
      std::cerr << fmt::format("uniperf: waiting for a peer on {}:{}\n", host, listener.port());
      // A connection that is not a uniperf peer of this run (a port scan, a
      // health check, another suite) is refused with a message and the
      // server goes on waiting: only a real peer ends the wait.
      const auto give_up = std::chrono::steady_clock::now() + 3600s;
      while (!peer_facts.is_object()) {
        // The peer's heartbeat comes to this same port (one port for a
        // firewall); the listener lives through the handshake.
        control = listener.accept(1,
                                  std::chrono::duration_cast<std::chrono::milliseconds>(
                                      give_up - std::chrono::steady_clock::now()),
                                  true);
        try {
          peer_facts = session::handshake(*control, suite, configs, my_facts);
          if (!peer_facts.is_object()) peer_facts = nlohmann::json::object();
          handshaken = true;
        } catch (const session::HandshakeError& e) {
          std::cerr << fmt::format("uniperf: refused a connection from {}: {}; still waiting\n",
                                   control->peer_host(), e.what());
          control.reset();
        }
      }
    } else {
      // A responder lost before the run began is replaced as one lost
      // later is (run_replacing): the run starts with a fresh one.
      pair.emplace(argc, argv);
      control = pair->connect([&](bootstrap::Bootstrap& fresh) {
        peer_facts =
            session::handshake(fresh, suite, configs, my_facts, offered_overrides(options));
      });
      handshaken = true;
    }
    if (!handshaken && control)
      peer_facts =
          session::handshake(*control, suite, configs, my_facts, offered_overrides(options));
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitNoPeer;
  }

  const bool initiator = control ? control->rank() == 0 : launched_rank0;
  // Read while the connection is up: once the peer is gone (reset) the
  // socket no longer knows whom it was connected to, and the lost peer is
  // named in the last words below.
  std::string peer_host = control ? control->peer_host() : "";
  const auto connect_ready = std::chrono::steady_clock::now();

  const report::BandwidthUnit unit = report::parse_bandwidth_unit(options.units);
  report::LiveReporter live(table_out, unit);
  report::Progress progress;
  report::ComparisonTable table(unit);
  session::Observer observer;
  observer.on_start = [&](const model::ConfigSpec& config, const model::TestSpec& test,
                          std::uint64_t size, std::size_t index, std::size_t total) {
    progress.start(config.name + " " + test.name, size, index, total);
  };
  observer.on_record = [&](const results::Record& record) {
    progress.finish();
    if (!options.quiet) live.on_record(record);
    table.add(record);
    if (output) output->add(record);
  };
  observer.on_interim = [&](const results::Record& window, std::size_t number) {
    const auto [value, label] = report::headline(window);
    std::string text = fmt::format(
        "{} #{}: {} {:.4g}", window.duration.forever ? "window" : "trial", number, label, value);
    if (window.bandwidth && label != "MB/s")
      text += fmt::format(" ({:.4g} MB/s)", window.bandwidth->mb_per_s);
    // --quiet: only the live line (on a terminal) shows it.
    if (options.quiet) return progress.interim(text);
    progress.finish();
    table_out << fmt::format("  {} {} {} B  {}", window.config, window.test, window.size, text)
              << std::endl;
  };
  session::RunSettings settings = run_settings(options);
  // A second signal, or a transport call that never returns after its loop
  // was aborted: what finished is written and the process ends here.
  auto finish_now = [&output](const std::string& why, int exit_code) {
    if (output) output->finish_now(why, exit_code);
    RunOutput::end_now(why, exit_code);
  };
  settings.stuck = [&finish_now, grace = settings.stuck_grace](const std::string& why,
                                                               bool peer_lost) {
    finish_now(why +
                   "; the step it stopped (a plugin or provider call: connect, post, poll, "
                   "teardown) has not returned for " +
                   std::to_string(grace.count()) + " s since, so uniperf ends here",
               peer_lost ? kExitNoPeer : kExitTestErrors);
  };
  if (initiator && control) {
    const bool remote = !options.peer.empty() && !launcher;
    nlohmann::json how = {{"method", launcher ? launched->facts.method
                                     : remote ? std::string("peer")
                                              : std::string("local-pair")}};
    if (launcher) {
      how["launcher"] = launched->facts.launcher;
      how["ranks"] = launched->facts.ranks;
      how["rendezvous"] = launched->facts.rendezvous;
      if (!launched->facts.pmix_version.empty()) how["pmix_version"] = launched->facts.pmix_version;
    } else if (remote) {
      // Where the server was reached (numeric, as the connection sees it):
      // a record then says which host it measured against.
      if (!peer_host.empty()) how["rendezvous"] = join_host_port(peer_host, peer_address.second);
    }
    how["connect_ms"] =
        std::chrono::duration<double, std::milli>(connect_ready - connect_started).count();
    settings.provenance = {
        {"uniperf", session::build_info()},
        {"bootstrap", how},
        {"suite_sha256", suite.content_hash},
        {"initiator", my_facts},
        {"responder", peer_facts},
        {"cpu",
         {{"initiator", options.cpu ? nlohmann::json(*options.cpu) : nlohmann::json(nullptr)},
          {"responder", !remote && options.peer_cpu ? nlohmann::json(*options.peer_cpu)
                                                    : nlohmann::json(nullptr)}}}};
    settings.tuned_by = suite.tuned_by;
    if (remote && options.peer_cpu)
      settings.warnings.push_back("--peer-cpu is ignored with --peer: give the server --cpu");
    if (refuse_unsound_clocks(peer_facts)) return kExitBadInput;
    for (auto& w : session::preflight(my_facts, peer_facts,
                                      {.hugepages = session::configs_want_hugepages(configs)}))
      settings.warnings.push_back(std::move(w));
    for (const auto& w : settings.warnings) std::cerr << "uniperf: warning: " << w << "\n";
  }
  bool forever = false;
  for (const auto& test : suite.tests) forever |= test.duration.forever;
  // The first signal ends the run cleanly (at once, or at a run-forever
  // window's end); a second one ends it now, keeping what finished. So does
  // a transport library's abort: seen so far from UCX 1.13's tcp transport,
  // asserting on the error path of a connection its peer reset. A peer gone
  // by then is said as a lost peer (exit 3), else the run failed (exit 1).
  std::atomic<int> peer_liveness_fd{control ? control->liveness_fd() : -1};
  StopOnSignals signals(
      [&finish_now] { finish_now("interrupted again: ending now", kExitInterrupted); },
      [&finish_now, &peer_liveness_fd, &peer_host, initiator] {
        const std::string aborted = kAbortedWords;
        if (!closes_within(peer_liveness_fd.load(), 2s)) finish_now(aborted, kExitTestErrors);
        finish_now(fmt::format("lost the peer ({}{}): {} after the peer closed the connection",
                               initiator ? "the responder" : "the initiator",
                               peer_host.empty() ? "" : " on " + peer_host, aborted),
                   kExitNoPeer);
      },
      // A crash keeps what finished; its signal then ends the process.
      [&output](int signal_number) {
        const std::string why = fmt::format(
            "{} (a crash, most likely in a transport library): the process ends with it",
            ::strsignal(signal_number));
        if (output)
          output->keep_finished(why);
        else
          std::cerr << "\nuniperf: " << why << std::endl;
      });
  // How the run ended decides the exit status: the responder keeps no
  // records, so this is how a script on the server's host can tell that it
  // failed; on both sides a lost peer is 3, not just a failed test.
  // A local pair's lost responder is replaced (below), so there a lost
  // peer is a failed test, not the end of the run.
  int failure_exit = kExitOk;
  std::string lost_peer;  // why the peer was lost, the first time
  observer.on_failure = [&](const std::string& why, bool peer_lost) {
    if (failure_exit != kExitNoPeer)
      failure_exit = peer_lost && !pair ? kExitNoPeer : kExitTestErrors;
    if (peer_lost && lost_peer.empty()) lost_peer = why;
  };
  if (!control) {
    RankJob job{.suite = suite,
                .configs = configs,
                .plugins = plugins,
                .job = *launched,
                .launcher = *launcher,
                .settings = settings,
                .observer = observer,
                .output = output ? &*output : nullptr,
                .my_facts = my_facts,
                .suspects = options.report_files.suspects,
                .stop_requested = &stop_requested(),
                .connect_started = connect_started,
                .local = local_job.has_value()};
    const int exit_code = run_rank_job(job);
    if (local_job && launched_rank0 && (configs.size() > 1 || options.quiet)) {
      table_out << "\n";
      table.print(table_out);
    }
    if (launched_rank0 && output)
      report::print_matrices(
          table_out, report::build_matrices(output->records(), options.report_files.suspects),
          options.report_files.suspects);
    if (launched_rank0 && output) report::print_concurrent_pairs(table_out, output->records());
    return bound_teardown(exit_code);
  }
  std::vector<results::Record> records;
  if (pair) {
    records = pair->run_replacing(
        control, suite, configs, plugins, settings, observer,
        [&](bootstrap::Bootstrap& fresh) {
          session::handshake(fresh, suite, configs, my_facts, offered_overrides(options));
          peer_host = fresh.peer_host();
          peer_liveness_fd = fresh.liveness_fd();
        },
        [&lost_peer] { return std::exchange(lost_peer, std::string()); });
    if (!control) failure_exit = kExitNoPeer;
  } else {
    // A fresh local responder starts where its initiator says.
    std::optional<session::SuitePosition> resume;
    if (!options.pair_resume.empty()) resume = parse_resume(options.pair_resume);
    records =
        session::run_from(*control, suite, configs, plugins, settings, observer, resume, false)
            .records;
  }
  if (!control) peer_host.clear();  // a fresh local responder could not be started
  peer_liveness_fd = -1;            // its number is free for reuse from here on
  control.reset();                  // closes the control connection: the peer ends now
  // Exit 3 is said in words on both sides: a peer lost between tests (at a
  // meeting of the control connection) fails no record's test and leaves
  // the responder no record at all.
  if (failure_exit == kExitNoPeer) {
    std::cerr << fmt::format("uniperf: lost the peer ({}{}): {}\n",
                             initiator ? "the responder" : "the initiator",
                             peer_host.empty() ? "" : " on " + peer_host,
                             lost_peer.empty() ? "the control connection closed" : lost_peer);
  }
  if (pair) pair->wait();
  if (!initiator) return bound_teardown(failure_exit);

  if (configs.size() > 1 || options.quiet) {
    table_out << "\n";
    table.print(table_out);
  }
  if (output) output->commit();
  // Ctrl-C is how a run-forever run is meant to end; any other run it cut short.
  if (stop_requested() && !forever) {
    std::cerr << "uniperf: interrupted; the finished records are kept\n";
    return bound_teardown(kExitInterrupted);
  }
  return bound_teardown(failure_exit == kExitNoPeer ? kExitNoPeer
                                                    : exit_code_of(records, suite.fail_on_skip));
}

}  // namespace uniperf::cli
