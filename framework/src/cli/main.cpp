// uniperf command line: run, serve, list, info, validate, report, compare,
// tune, stages, and the one-off forms lat / bw / rate that take perftest-like
// flags instead of a suite file. Each command lives in its own file; this one
// only wires them.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/compare_command.hpp"
#include "cli/exit_codes.hpp"
#include "cli/one_off_command.hpp"
#include "cli/plugin_commands.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/shipped_files.hpp"
#include "cli/stages_command.hpp"
#include "cli/tune_command.hpp"
#include "suite/quick.hpp"
#include "suite/suite.hpp"

using namespace uniperf;
using namespace uniperf::cli;

namespace {

// What --help ends with: the commands a perftest or iperf3 user reaches for.
constexpr const char* kRunExamples = R"(
Examples:
  uniperf run suites/quick.yaml -c configs/ucx-shm.yaml -c configs/tcp.yaml -o results.jsonl
  server$ uniperf serve
  client$ uniperf run suites/quick.yaml -c configs/ucx-tcp.yaml --peer server -o -
  uniperf run suites/quick.yaml -c verbs:device=mlx5_0,port=1,gid_index=3 --fail-on-skip
  mpirun -np 4 --host n1,n2,n3,n4 uniperf run suites/cluster.yaml -c configs/ucx-tcp.yaml

Exit: 0 ok (tests ran or were skipped), 1 a test failed, 2 bad input, 3 no peer or
peer lost, 130 interrupted. Docs: README.md, docs/results.md, docs/ci.md.)";

constexpr const char* kOneOffExamples = R"(
Examples (perftest's -s -a -n -D -t -Q -l -I -q -e -b mean the same here):
  uniperf lat --op write -s 64 -c configs/ucx-shm.yaml
  uniperf bw --op send -a -t 64 -c configs/tcp.yaml -o - | jq .bandwidth.MB_per_s
  uniperf bw --op write -s 64K -D 5s -b -c verbs:device=mlx5_0,port=1,gid_index=3
  server$ uniperf serve
  client$ uniperf lat --op send -c configs/tcp.yaml --peer server

Exit: 0 ok (tests ran or were skipped), 1 a test failed, 2 bad input, 3 no peer or
peer lost, 130 interrupted. Docs: README.md, docs/results.md.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uniperf: one benchmark, every transport (verbs, uDAPL, libfabric, UCX, TCP)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "uniperf " UNIPERF_VERSION);

  std::string suite_path;
  ConnectionOptions connection;
  auto* run = app.add_subcommand("run", "Run a suite over one or more configs, side by side");
  run->add_option("suite", suite_path,
                  "Suite file (YAML), or the name of a shipped one (quick: "
                  "share/uniperf/suites/quick.yaml of the install)")
      ->required();
  bool quick = false;
  run->add_flag("--quick", quick,
                "Run the suite's short form: the keys of its `quick:` mapping (sizes, duration, "
                "...) replace the suite's own");
  run->add_option("--tuning", connection.tuning_files,
                  "Apply tuning files of `uniperf tune`, each to the config it was tuned on: "
                  "its tuned `fragment: auto`, `source: auto` or `inline: auto` tests run the "
                  "chosen setting per size over that config (docs/pipeline.md)")
      ->check(CLI::ExistingFile);
  run->footer(kRunExamples);
  add_connection_options(run, connection);

  OneOffOptions one_off;
  std::string one_off_pattern;
  for (const auto& [name, pattern, help] :
       {std::tuple{"lat", "latency", "One latency test from flags (ping-pong)"},
        std::tuple{"bw", "bandwidth", "One bandwidth test from flags"},
        std::tuple{"rate", "message_rate", "One message-rate test from flags"}}) {
    auto* command = app.add_subcommand(name, help);
    command->footer(kOneOffExamples);
    add_one_off_options(command, one_off, pattern);
    add_connection_options(command, connection);
    command->callback([&one_off_pattern, p = std::string(pattern)] { one_off_pattern = p; });
  }

  auto* list = app.add_subcommand(
      "list",
      "List the plugins found, their versions and availability, and which configs open here");
  bool list_plugins_only = false;
  list->add_flag("--plugins", list_plugins_only,
                 "Only the plugins: do not open the configs (each in a process of its own)");
  std::string info_plugin, info_config;
  auto* info = app.add_subcommand(
      "info", "Show a plugin's options and capabilities, or with no plugin every test knob");
  info->add_option("plugin", info_plugin, "A plugin (omit it for the test knobs and metrics)");
  info->add_option("-c,--config", info_config, "Open with this config's options")
      ->check(CLI::ExistingFile);
  std::vector<std::string> validate_paths;
  auto* validate = app.add_subcommand("validate", "Check suite and config files");
  validate->add_option("files", validate_paths)->required()->check(CLI::ExistingFile);

  cli::ReportCommand report_command;
  cli::add_report_command(app, report_command);

  cli::CompareCommand compare_command;
  cli::add_compare_command(app, compare_command);

  cli::ServeOptions serve;
  cli::add_serve_command(app, serve);

  cli::TuneCommand tune;
  cli::add_tune_command(app, tune);

  cli::StagesCommand stages;
  cli::add_stages_command(app, stages);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); its own codes (105 for a value
    // a check refused, ...) are not uniperf's: a bad flag is bad input.
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (list->parsed()) return list_plugins(!list_plugins_only);
    if (info->parsed()) return plugin_info(info_plugin, info_config);
    if (validate->parsed()) return validate_files(validate_paths);
    if (report_command.command->parsed()) return cli::run_report_command(report_command);
    if (compare_command.command->parsed()) return cli::run_compare_command(compare_command);
    if (serve.command->parsed()) return cli::run_serve_command(serve);
    if (tune.command->parsed()) return cli::run_tune_command(tune);
    if (stages.command->parsed()) return cli::run_stages_command(stages);
    if (run->parsed()) {
      // --quick, then (once the configs are read) --tuning: each a text of
      // the suite's own, so a peer is sent what runs here and the records'
      // suite hash is of it.
      const std::string path = find_shipped(suite_path, ShippedKind::suite);
      std::string text = suite::read_whole_file(path);
      if (quick) text = suite::apply_quick(text, path);
      return execute(suite::parse_suite(text, path), connection, argc, argv);
    }
    return execute(one_off_suite(one_off_pattern, one_off), connection, argc, argv);
  } catch (const suite::SpecError& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  }
}
