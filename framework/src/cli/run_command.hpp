// `uniperf run SUITE` and the connection every run shares with the one-off
// forms: a launcher's two ranks, --peer or --listen, or a local pair, then the
// session and the reports.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/device_flags.hpp"
#include "cli/report_command.hpp"
#include "loader/plugin_registry.hpp"
#include "model/suite_spec.hpp"
#include "session/session.hpp"

namespace uniperf::cli {

struct ConnectionOptions {
  std::vector<std::string> configs;
  std::vector<std::string> tuning_files;  // --tuning FILE...: `uniperf run` only
  DeviceFlags device_flags;  // --plugin, -d, -i, -x, --provider, --endpoint, --tls: one config more
  std::string peer;          // --peer HOST[:PORT]: this side initiates and measures
  std::string listen;        // --listen [HOST:]PORT: this side serves
  std::string coordinator;   // --coordinator HOST:PORT: rank 0's rendezvous under a launcher
  std::string pair_connect;  // internal: the responder of a local pair
  std::string pair_resume;   // internal: a fresh responder starts at CONFIG:TEST
  std::string output;
  cli::ReportFiles report_files;           // --csv, --junit, --html
  std::vector<CLI::Option*> listen_flags;  // one per subcommand
  int size_timeout_s = 120;
  double heartbeat_s = 5;         // --heartbeat S: a peer silent this long is lost (0: not watched)
  double connect_timeout_s = 10;  // --connect-timeout S: how long --peer tries to reach its server
  std::string bind;               // --bind ADDR: the address --peer's connections leave from
  int stall_timeout_s = 10;       // --stall-timeout S: no completion this long ends a test (0: off)
  double timeline_bin_ms = 10;    // --timeline-bin MS: a traced flow's bandwidth-over-time bins
  std::optional<int> cpu;         // --cpu N: pin this process
  std::optional<int> peer_cpu;    // --peer-cpu N: pin a local pair's responder
  std::optional<std::uint32_t> trials;    // --trials N: overrides every test's trials
  bool run_forever = false;               // --run-infinitely
  bool fail_on_skip = false;              // --fail-on-skip: a skipped record fails the run
  bool require_invariant_tsc = false;     // --require-invariant-tsc: refuse an unsound clock
  std::optional<double> report_interval;  // --report-interval S: run-forever window

  bool listening() const {
    for (const auto* flag : listen_flags) {
      if (flag->count() > 0) return true;
    }
    return false;
  }
  bool quiet = false;
  std::string units = "MB";  // --units MB|MiB: the table's and live lines' bandwidth unit
};

/// The configs -c named, in order: each a file here, else one the install
/// ships, else a config inline (PLUGIN:KEY=VALUE,...). Options are checked
/// against the plugin when it is found (a missing plugin is left for the
/// run to report as unavailable); bad input throws SpecError naming it.
std::vector<model::ConfigSpec> load_configs(const std::vector<std::string>& given,
                                            loader::PluginRegistry& plugins);

/// Adds -c, --peer, --listen, -o, the run overrides and the report files.
void add_connection_options(CLI::App* command, ConnectionOptions& options);

/// --heartbeat SECONDS (default 5), `help` said of whose beats it watches:
/// 0 (not watched) or 2 to 3600, as a beat goes out every second. Both a
/// run and a bare server take it.
CLI::Option* add_heartbeat_option(CLI::App* command, double& seconds, const std::string& help);

/// --fail-on-skip over the suite; --trials, --run-infinitely and
/// --report-interval over every test.
void apply_run_overrides(model::SuiteSpec& suite, const ConnectionOptions& options);

/// The settings of a client's command line a bare server (`uniperf serve`)
/// must share to run the same tests the same way: the overrides
/// apply_run_overrides() takes, and the timeouts both sides watch
/// (session::Offer::overrides). take_offered_overrides() reads them back,
/// throwing std::invalid_argument for a value of the wrong type.
nlohmann::json offered_overrides(const ConnectionOptions& options);
void take_offered_overrides(const nlohmann::json& overrides, ConnectionOptions& options);

/// The session settings of these options: timeouts, heartbeat, timeline
/// bins, and the stop flag the signals raise (cli/stop_signals.hpp).
session::RunSettings run_settings(const ConnectionOptions& options);

/// Connects (or starts a local pair), handshakes, runs, reports; the exit
/// code (cli/exit_codes.hpp).
int execute(model::SuiteSpec suite, const ConnectionOptions& options, int argc, char** argv);

}  // namespace uniperf::cli
