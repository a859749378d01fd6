// uniperf command line: run, list, info, validate, and the one-off forms
// lat / bw / rate that take perftest-like flags instead of a suite file.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "bootstrap/bootstrap.hpp"
#include "cli/compare_command.hpp"
#include "cli/local_pair.hpp"
#include "cli/report_command.hpp"
#include "loader/plugin_registry.hpp"
#include "report/table.hpp"
#include "results/jsonl_writer.hpp"
#include "session/provenance.hpp"
#include "session/session.hpp"
#include "suite/option_values.hpp"
#include "suite/suite.hpp"

namespace {

using namespace std::chrono_literals;
using namespace uniperf;

constexpr std::uint16_t kDefaultPort = 18521;

enum ExitCode : int {
  kExitOk = 0,
  kExitTestErrors = 1,  ///< the run finished, some records are errors
  kExitBadInput = 2,    ///< a suite, config or flag is wrong
  kExitNoPeer = 3,      ///< could not connect / handshake / the peer died
};

struct ConnectionOptions {
  std::vector<std::string> configs;
  std::string peer;          // --peer HOST[:PORT]: this side initiates and measures
  std::string listen;        // --listen [HOST:]PORT: this side serves
  std::string pair_connect;  // internal: the responder of a local pair
  std::string output;
  cli::ReportFiles report_files;           // --csv, --junit, --html
  std::vector<CLI::Option*> listen_flags;  // one per subcommand
  int size_timeout_s = 120;
  std::optional<int> cpu;                 // --cpu N: pin this process
  std::optional<int> peer_cpu;            // --peer-cpu N: pin a local pair's responder
  std::optional<std::uint32_t> trials;    // --trials N: overrides every test's trials
  bool run_forever = false;               // --run-infinitely
  std::optional<double> report_interval;  // --report-interval S: run-forever window

  bool listening() const {
    for (const auto* flag : listen_flags) {
      if (flag->count() > 0) return true;
    }
    return false;
  }
  bool quiet = false;
};

void add_connection_options(CLI::App* command, ConnectionOptions& options) {
  command->add_option("-c,--config", options.configs, "Provider config (YAML); repeat to compare")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--peer", options.peer,
                      "Run against a `uniperf ... --listen` on HOST[:PORT] (this side measures)");
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
      ->default_val(120);
  command->add_flag("--quiet", options.quiet, "No live lines, only the final table");
  command
      ->add_option("--trials", options.trials,
                   "Measure each size N times; records get per-trial values and 95% CIs")
      ->check(CLI::Range(1u, 1000u));
  command->add_flag("--run-infinitely", options.run_forever,
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
}

std::pair<std::string, std::uint16_t> split_host_port(const std::string& text,
                                                      const std::string& default_host) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    // A bare number is a port for --listen, a host name for --peer.
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
      return {default_host, static_cast<std::uint16_t>(std::stoi(text))};
    }
    return {text.empty() ? default_host : text, kDefaultPort};
  }
  return {text.substr(0, colon), static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1)))};
}

std::vector<model::ConfigSpec> load_configs(const std::vector<std::string>& paths,
                                            loader::PluginRegistry& plugins) {
  std::vector<model::ConfigSpec> configs;
  for (const auto& path : paths) {
    configs.push_back(suite::load_config(path));
    // Options are checked now, before anything runs, when the plugin is here;
    // a missing plugin is reported per test as unavailable.
    if (Plugin* plugin = plugins.find(configs.back().plugin)) {
      suite::validate_options(configs.back(), plugin->options());
    }
  }
  return configs;
}

int report_and_exit_code(const std::vector<results::Record>& records) {
  for (const auto& r : records) {
    if (r.status == results::Status::error) return kExitTestErrors;
  }
  return kExitOk;
}

/// Connects (or starts a local pair), handshakes, runs, reports.
/// Set by SIGINT in run-forever mode: the current window ends, both sides
/// agree to stop, the final record is written (session::RunSettings).
std::atomic<bool> g_stop_requested{false};

extern "C" void request_stop(int) {
  g_stop_requested.store(true);
}

/// --trials, --run-infinitely and --report-interval over every test.
void apply_run_overrides(model::SuiteSpec& suite, const ConnectionOptions& options) {
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

int execute(model::SuiteSpec suite, const ConnectionOptions& options, int argc, char** argv) {
  apply_run_overrides(suite, options);
  loader::PluginRegistry plugins(loader::default_search_path());
  const auto configs = load_configs(options.configs, plugins);

  // The measuring side (a local pair's first process, or --peer) writes the
  // report files; they are opened now, so a bad path fails before a peer waits.
  std::optional<cli::PendingReports> report_files;
  if (options.pair_connect.empty() && !options.listening()) {
    report_files.emplace(options.report_files);
  }

  // A local pair's responder is this command line re-run with
  // --pair-connect: it takes --peer-cpu as its own pin.
  const std::optional<int> my_cpu = options.pair_connect.empty() ? options.cpu : options.peer_cpu;
  if (my_cpu) session::pin_to_cpu(*my_cpu);
  const nlohmann::json my_facts = session::provenance();
  nlohmann::json peer_facts;

  std::unique_ptr<bootstrap::Bootstrap> control;
  std::optional<cli::LocalPair> pair;
  try {
    if (!options.pair_connect.empty()) {
      const auto [host, port] = split_host_port(options.pair_connect, "127.0.0.1");
      control = bootstrap::tcp_connect(host, port, 1, 10s);
    } else if (!options.peer.empty()) {
      const auto [host, port] = split_host_port(options.peer, "127.0.0.1");
      control = bootstrap::tcp_connect(host, port, 0, 30s);
    } else if (options.listening()) {
      const auto [host, port] = split_host_port(options.listen, "0.0.0.0");
      bootstrap::TcpListener listener(host, port);
      std::cerr << fmt::format("uniperf: waiting for a peer on {}:{}\n", host, listener.port());
      control = listener.accept(1, 3600s);
    } else {
      pair.emplace(argc, argv);
      control = pair->accept();
    }
    peer_facts = session::handshake(*control, suite, configs, my_facts);
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitNoPeer;
  }

  const bool initiator = control->rank() == 0;
  std::optional<results::JsonlWriter> jsonl;
  if (initiator && !options.output.empty()) jsonl.emplace(options.output);

  report::LiveReporter live(std::cout);
  report::Progress progress;
  report::ComparisonTable table;
  session::Observer observer;
  observer.on_start = [&](const model::ConfigSpec& config, const model::TestSpec& test,
                          std::uint64_t size, std::size_t index, std::size_t total) {
    progress.start(config.name + " " + test.name, size, index, total);
  };
  observer.on_record = [&](const results::Record& record) {
    progress.finish();
    if (!options.quiet) live.on_record(record);
    table.add(record);
    if (jsonl) jsonl->add(record);
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
    std::cout << fmt::format("  {} {} {} B  {}", window.config, window.test, window.size, text)
              << std::endl;
  };
  session::RunSettings settings;
  settings.size_timeout = std::chrono::seconds(options.size_timeout_s);
  settings.stop_requested = &g_stop_requested;
  if (initiator) {
    const bool remote = !options.peer.empty();
    settings.provenance = {
        {"uniperf", session::build_info()},
        {"suite_sha256", suite.content_hash},
        {"initiator", my_facts},
        {"responder", peer_facts},
        {"cpu",
         {{"initiator", options.cpu ? nlohmann::json(*options.cpu) : nlohmann::json(nullptr)},
          {"responder", !remote && options.peer_cpu ? nlohmann::json(*options.peer_cpu)
                                                    : nlohmann::json(nullptr)}}}};
    if (remote && options.peer_cpu)
      settings.warnings.push_back("--peer-cpu is ignored with --peer: give the server --cpu");
    for (auto& w : session::preflight(my_facts, peer_facts,
                                      {.hugepages = session::configs_want_hugepages(configs)}))
      settings.warnings.push_back(std::move(w));
    for (const auto& w : settings.warnings) std::cerr << "uniperf: warning: " << w << "\n";
  }
  bool forever = false;
  for (const auto& test : suite.tests) forever |= test.duration.forever;
  if (forever) {
    // The first Ctrl-C ends the run cleanly at the next window boundary; the
    // handler is reset after it, so a second one kills as usual. Installed
    // after the plugins loaded: some transport libraries install their own
    // SIGINT handler when loaded (libinfinipath, under libfabric, exits).
    struct sigaction action {};
    action.sa_handler = request_stop;
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
  }
  const auto records = session::run(*control, suite, configs, plugins, settings, observer);
  control.reset();  // closes the control connection: the peer ends now
  if (pair) pair->wait();
  if (!initiator) return kExitOk;

  if (configs.size() > 1 || options.quiet) {
    std::cout << "\n";
    table.print(std::cout);
  }
  if (jsonl) {
    jsonl->commit();
    std::cerr << "uniperf: results written to " << options.output << "\n";
  }
  if (report_files) report_files->commit(records, suite.name);
  return report_and_exit_code(records);
}

// ---------------------------------------------------------------------------
// One-off tests from flags (perftest-like)
// ---------------------------------------------------------------------------

struct OneOffOptions {
  std::string op = "send";
  std::vector<std::string> sizes;
  bool all_sizes = false;
  std::optional<std::uint64_t> iterations, warmup, window, signal_every, cq_moderation, rx_depth,
      rx_replenish, post_list, inline_size, endpoints;
  std::optional<std::string> duration, margin, window_mode, preset, buffers;
  bool events = false, bidirectional = false, validate = false;
};

void add_one_off_options(CLI::App* command, OneOffOptions& o) {
  command->add_option("--op", o.op, "send | write | write_imm | read | fetch_add | cswap")
      ->default_val("send");
  command->add_option("-s,--size", o.sizes, "Message size(s): 64, 4K, or a range 2..8M x2")
      ->delimiter(',');
  command->add_flag("-a,--all", o.all_sizes, "All sizes 2..8M in powers of two");
  command->add_option("-n,--iters", o.iterations, "Measured iterations");
  command->add_option("-D,--duration", o.duration, "Run for a time instead (e.g. 5s)");
  command->add_option("-f,--margin", o.margin, "Untimed lead-in in duration mode (e.g. 1s)");
  command->add_option("-w,--warmup", o.warmup, "Warm-up iterations");
  command->add_option("-t,--tx-depth,--window", o.window, "Ops in flight per endpoint");
  command->add_option("--window-mode", o.window_mode, "streaming | window_ack");
  command->add_option("--signal-every", o.signal_every, "Request a completion every N posts");
  command->add_option("-Q,--cq-mod", o.cq_moderation, "Completions per poll / wake-up");
  command->add_flag("-e,--events", o.events, "Sleep on completion events instead of polling");
  command->add_option("-r,--rx-depth", o.rx_depth, "Receives pre-posted");
  command->add_option("--rx-replenish", o.rx_replenish, "Re-post receives in batches of N");
  command->add_option("-l,--post-list", o.post_list, "Work requests chained per post");
  command->add_option("-I,--inline", o.inline_size, "Inline threshold in bytes");
  command->add_option("-q,--qps,--endpoints", o.endpoints, "Endpoints (QPs) per flow");
  command->add_flag("-b,--bidirectional", o.bidirectional, "Both directions at once");
  command->add_option("--preset", o.preset, "perftest | osu | itperf");
  command->add_option("--buffers", o.buffers,
                      "cycle (a ring of window slots, perftest) | single (one slot, "
                      "ucx_perftest / OSU)");
  command->add_flag("--validate", o.validate, "Fill and check payloads");
}

model::SuiteSpec one_off_suite(const std::string& pattern, const OneOffOptions& o) {
  YAML::Node test;
  test["name"] = o.op + "_" + pattern;
  test["op"] = o.op;
  test["pattern"] = pattern;
  if (o.all_sizes) {
    test["sizes"] = "2..8M x2";
  } else if (o.sizes.size() == 1) {
    test["sizes"] = o.sizes.front();
  } else if (!o.sizes.empty()) {
    for (const auto& s : o.sizes) test["sizes"].push_back(s);
  }
  auto set = [&](const char* key, const auto& value) {
    if (value) test[key] = *value;
  };
  set("iterations", o.iterations);
  set("warmup", o.warmup);
  set("window", o.window);
  set("signal_every", o.signal_every);
  set("cq_moderation", o.cq_moderation);
  set("rx_depth", o.rx_depth);
  set("rx_replenish", o.rx_replenish);
  set("post_list", o.post_list);
  set("inline", o.inline_size);
  set("endpoints", o.endpoints);
  set("duration", o.duration);
  set("margin", o.margin);
  set("window_mode", o.window_mode);
  set("preset", o.preset);
  set("buffers", o.buffers);
  if (o.events) test["completion"] = "event";
  if (o.bidirectional) test["direction"] = "bi";
  if (o.validate) test["validate"] = true;

  model::SuiteSpec suite;
  suite.name = "command-line";
  suite.file = "<command line>";
  suite.tests.push_back(suite::parse_test(test, suite.file));
  YAML::Emitter emitter;
  emitter << test;
  suite.content_hash = suite::sha256_hex(emitter.c_str());
  return suite;
}

// ---------------------------------------------------------------------------
// list / info / validate
// ---------------------------------------------------------------------------

int list_plugins() {
  loader::PluginRegistry plugins(loader::default_search_path());
  if (plugins.plugins().empty()) {
    std::cout << "no plugins found in:";
    for (const auto& dir : loader::default_search_path()) std::cout << " " << dir.string();
    std::cout << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{:<8} {:<8} {:<22} {}\n", "PLUGIN", "VERSION", "LIBRARY", "STATUS");
  for (const auto& p : plugins.plugins()) {
    if (!p.ok()) {
      std::cout << fmt::format("{:<8} {:<8} {:<22} broken: {}\n", p.name, "-", "-", p.load_error);
      continue;
    }
    const std::string why = p.plugin->probe();
    std::cout << fmt::format("{:<8} {:<8} {:<22} {}\n", p.name, p.plugin->version(),
                             p.plugin->library_version(),
                             why.empty() ? "available" : "unavailable: " + why);
  }
  return kExitOk;
}

std::string_view type_name(OptionType type) {
  switch (type) {
    case OptionType::string:
      return "string";
    case OptionType::integer:
      return "integer";
    case OptionType::boolean:
      return "boolean";
    case OptionType::size:
      return "size";
  }
  return "?";
}

int plugin_info(const std::string& name, const std::string& config_path) {
  loader::PluginRegistry plugins(loader::default_search_path());
  Plugin* plugin = plugins.find(name);
  if (plugin == nullptr) {
    std::cerr << "uniperf: " << plugins.why_missing(name) << "\n";
    return kExitBadInput;
  }
  std::cout << fmt::format("{} {} — {}\nlibrary: {}\n\noptions:\n", plugin->name(),
                           plugin->version(), plugin->description(), plugin->library_version());
  for (const auto& o : plugin->options()) {
    std::cout << fmt::format("  {:<16} {:<8} default {:<10} {}{}\n", o.name, type_name(o.type),
                             o.default_value.empty() ? "(unset)" : o.default_value, o.help,
                             suite::describe_option_values(o));
  }
  model::ConfigSpec config;
  config.plugin = name;
  config.file = "<defaults>";
  if (!config_path.empty()) config = suite::load_config(config_path);
  try {
    const auto context = plugin->open(suite::validate_options(config, plugin->options()));
    const Capabilities caps = context->capabilities();
    std::cout << fmt::format("\ncapabilities ({}):\n", context->device());
    for (std::size_t i = 0; i < kOpCount; ++i) {
      std::cout << fmt::format("  op {:<19} {}\n", to_string(static_cast<Op>(i)),
                               to_string(caps.ops[i]));
    }
    std::cout << fmt::format("  {:<22} {}\n", "selective_completion",
                             to_string(caps.selective_completion));
    std::cout << fmt::format("  {:<22} {}\n", "completion_events",
                             to_string(caps.completion_events));
    std::cout << fmt::format("  {:<22} {}\n", "post_list", to_string(caps.post_list));
    std::cout << fmt::format("  {:<22} {}\n", "max_inline", caps.max_inline);
    std::cout << fmt::format("  {:<22} {}\n", "max_message",
                             caps.max_message ? std::to_string(caps.max_message) : "unlimited");
    std::cout << fmt::format("  {:<22} {}\n", "target_progress", caps.target_progress);
    std::cout << fmt::format("  {:<22} {}\n", "ordered_write_visibility",
                             caps.ordered_write_visibility);
  } catch (const Unavailable& e) {
    std::cout << "\ncapabilities: unavailable: " << e.what() << "\n";
  }
  return kExitOk;
}

int validate_files(const std::vector<std::string>& files) {
  loader::PluginRegistry plugins(loader::default_search_path());
  int status = kExitOk;
  for (const auto& file : files) {
    try {
      const YAML::Node root = YAML::LoadFile(file);
      if (root.IsMap() && root["plugin"]) {
        const auto config = suite::load_config(file);
        if (Plugin* plugin = plugins.find(config.plugin)) {
          suite::validate_options(config, plugin->options());
          std::cout << fmt::format("ok      {} (config for plugin {})\n", file, config.plugin);
        } else {
          std::cout << fmt::format("ok      {} (config; options not checked: {})\n", file,
                                   plugins.why_missing(config.plugin));
        }
      } else {
        const auto suite = suite::load_suite(file);
        std::cout << fmt::format("ok      {} (suite '{}', {} tests)\n", file, suite.name,
                                 suite.tests.size());
      }
    } catch (const std::exception& e) {
      std::cout << "invalid " << e.what() << "\n";
      status = kExitBadInput;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uniperf: one benchmark, every transport (verbs, uDAPL, libfabric, UCX, TCP)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "uniperf " UNIPERF_VERSION);

  std::string suite_path;
  ConnectionOptions connection;
  auto* run = app.add_subcommand("run", "Run a suite over one or more configs, side by side");
  run->add_option("suite", suite_path, "Suite file (YAML)")->required()->check(CLI::ExistingFile);
  add_connection_options(run, connection);

  OneOffOptions one_off;
  std::string one_off_pattern;
  for (const auto& [name, pattern, help] :
       {std::tuple{"lat", "latency", "One latency test from flags (ping-pong)"},
        std::tuple{"bw", "bandwidth", "One bandwidth test from flags"},
        std::tuple{"rate", "message_rate", "One message-rate test from flags"}}) {
    auto* command = app.add_subcommand(name, help);
    add_one_off_options(command, one_off);
    add_connection_options(command, connection);
    command->callback([&one_off_pattern, p = std::string(pattern)] { one_off_pattern = p; });
  }

  auto* list =
      app.add_subcommand("list", "List the plugins found, their versions and availability");
  std::string info_plugin, info_config;
  auto* info = app.add_subcommand("info", "Show a plugin's options and capabilities");
  info->add_option("plugin", info_plugin)->required();
  info->add_option("-c,--config", info_config, "Open with this config's options")
      ->check(CLI::ExistingFile);
  std::vector<std::string> validate_paths;
  auto* validate = app.add_subcommand("validate", "Check suite and config files");
  validate->add_option("files", validate_paths)->required()->check(CLI::ExistingFile);

  cli::ReportCommand report_command;
  cli::add_report_command(app, report_command);

  cli::CompareCommand compare_command;
  cli::add_compare_command(app, compare_command);

  CLI11_PARSE(app, argc, argv);

  try {
    if (list->parsed()) return list_plugins();
    if (info->parsed()) return plugin_info(info_plugin, info_config);
    if (validate->parsed()) return validate_files(validate_paths);
    if (report_command.command->parsed()) return cli::run_report_command(report_command);
    if (compare_command.command->parsed()) return cli::run_compare_command(compare_command);
    if (run->parsed()) return execute(suite::load_suite(suite_path), connection, argc, argv);
    return execute(one_off_suite(one_off_pattern, one_off), connection, argc, argv);
  } catch (const suite::SpecError& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitBadInput;
  }
}
