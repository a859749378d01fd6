#include "cli/plugin_commands.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <vector>

#include "cli/device_flags.hpp"
#include "cli/device_suggestions.hpp"
#include "cli/exit_codes.hpp"
#include "cli/shipped_files.hpp"
#include "loader/plugin_registry.hpp"
#include "model/flow_fields.hpp"
#include "model/metrics.hpp"
#include "session/environment.hpp"
#include "suite/diagnostics.hpp"
#include "suite/option_values.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

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

/// Every Capabilities member but `ops` (printed per op), in declaration
/// order: a member added to plugin.hpp is one row here.
struct CapabilityRow {
  const char* name;
  std::string (*text)(const Capabilities&);
};

const CapabilityRow kCapabilityRows[] = {
    {"selective_completion",
     [](const Capabilities& c) { return std::string(to_string(c.selective_completion)); }},
    {"completion_events",
     [](const Capabilities& c) { return std::string(to_string(c.completion_events)); }},
    {"post_list", [](const Capabilities& c) { return std::string(to_string(c.post_list)); }},
    {"max_inline", [](const Capabilities& c) { return std::to_string(c.max_inline); }},
    {"max_message",
     [](const Capabilities& c) {
       return c.max_message ? std::to_string(c.max_message) : std::string("unlimited");
     }},
    {"target_progress", [](const Capabilities& c) { return fmt::format("{}", c.target_progress); }},
    {"ordered_write_visibility",
     [](const Capabilities& c) { return fmt::format("{}", c.ordered_write_visibility); }},
    {"thread_safe_endpoints",
     [](const Capabilities& c) { return fmt::format("{}", c.thread_safe_endpoints); }},
    {"max_send_depth",
     [](const Capabilities& c) {
       return c.max_send_depth ? std::to_string(c.max_send_depth) : std::string("unlimited");
     }},
    {"max_recv_depth",
     [](const Capabilities& c) {
       return c.max_recv_depth ? std::to_string(c.max_recv_depth) : std::string("unlimited");
     }},
    {"reliable_delivery",
     [](const Capabilities& c) { return fmt::format("{}", c.reliable_delivery); }},
    {"delivery_fence", [](const Capabilities& c) { return fmt::format("{}", c.delivery_fence); }},
};

}  // namespace

namespace {

/// A config opened as a run would open it: the device it found, or why not.
struct Opened {
  std::string device;
  std::string why;  ///< "" when it opened
};

/// Opens the config `read` gives in a child process of its own: transport
/// libraries read their environment once per process (libfabric's FI_*),
/// print to the terminal (UCX's warnings) and may hang on a missing device,
/// none of which may leak into the next config's answer or the listing. The
/// child has 10 s.
Opened open_in_child(loader::PluginRegistry& plugins,
                     const std::function<model::ConfigSpec()>& read) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {"", "cannot make a pipe"};
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return {"", "cannot fork"};
  }
  if (child == 0) {
    ::close(pipe_fds[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    std::string answer;
    try {
      const model::ConfigSpec config = read();
      // Its environment before the transport's first call, as in a run.
      const session::ScopedEnvironment environment(config.environment);
      Plugin* plugin = plugins.find(config.plugin);
      if (plugin == nullptr) {
        answer = "1no plugin '" + config.plugin + "'";
      } else if (const std::string why = plugin->probe(); !why.empty()) {
        answer = "1" + why;
      } else {
        const Options options = suite::validate_options(config, plugin->options());
        answer = "0" + plugin->open(options)->device();
      }
    } catch (const std::exception& e) {
      answer = std::string("1") + e.what();
    }
    [[maybe_unused]] const auto written = ::write(pipe_fds[1], answer.data(), answer.size());
    ::_exit(0);  // no teardown: the transport's atexit handlers are not ours to run
  }
  ::close(pipe_fds[1]);
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd ready{pipe_fds[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
      ::kill(child, SIGKILL);
      answer = "1did not open within 10 s";
      break;
    }
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  ::waitpid(child, nullptr, 0);
  if (answer.empty()) return {"", "the process opening it died"};
  if (answer[0] == '0') return {answer.substr(1), ""};
  return {"", answer.substr(1)};
}

/// The configs at hand (the working directory's configs/, then the
/// install's), each opened as a run would open it: the ones that open here
/// are the -c values that work on this machine, with the device each found;
/// the others say why not. Before this process calls any plugin: the
/// children inherit what a transport library remembers of its first use.
std::string list_configs(loader::PluginRegistry& plugins) {
  std::map<std::string, std::filesystem::path> found;  // by name: the first shelf wins
  for (const auto& shelf : shelves(ShippedKind::config)) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(shelf, error)) {
      if (entry.path().extension() == ".yaml") found.emplace(entry.path().stem(), entry.path());
    }
  }
  if (found.empty()) return "";
  std::vector<std::string> here, elsewhere;
  for (const auto& [name, path] : found) {
    const Opened opened = open_in_child(plugins, [&] { return suite::load_config(path.string()); });
    if (opened.why.empty()) {
      here.push_back(fmt::format("  -c {:<14} {}", name, opened.device));
    } else {
      elsewhere.push_back(fmt::format("  {:<17} {}", name, opened.why));
    }
  }
  std::string text = fmt::format(
      "\nconfigs that open here ({}; or inline, -c PLUGIN:KEY=VALUE,... with the options of "
      "uniperf info PLUGIN):\n",
      here.empty() ? "none" : "run with -c NAME");
  for (const auto& line : here) text += line + "\n";
  if (!elsewhere.empty()) {
    text += "\nconfigs that do not:\n";
    for (const auto& line : elsewhere) text += line + "\n";
  }
  return text;
}

/// The device flags worth trying here (this host's RDMA ports, network
/// interfaces and shared memory), each opened as a run would open the
/// config they compose: only those that open are shown, with the device
/// each found.
std::string list_device_flags(loader::PluginRegistry& plugins) {
  std::vector<std::string> lines;
  for (const DeviceSuggestion& suggestion : device_suggestions()) {
    if (plugins.find(suggestion.plugin) == nullptr) continue;
    const auto text = inline_config_of(suggestion.flags);
    const Opened opened = open_in_child(plugins, [&] { return suite::parse_inline_config(*text); });
    if (!opened.why.empty()) continue;
    lines.push_back(fmt::format("  {:<38} {}", suggestion.command_line(), opened.device));
  }
  if (lines.empty()) return "";
  std::string text =
      "\ndevice flags that open here (lat, bw, rate and run take them as a config inline):\n";
  for (const auto& line : lines) text += line + "\n";
  return text;
}

}  // namespace

int list_plugins(bool configs_too) {
  loader::PluginRegistry plugins(loader::default_search_path());
  if (plugins.plugins().empty()) {
    std::cout << "no plugins found in:";
    for (const auto& dir : loader::default_search_path()) std::cout << " " << dir.string();
    std::cout << "\n";
    return kExitOk;
  }
  const std::string configs = configs_too ? list_configs(plugins) + list_device_flags(plugins) : "";
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
  std::cout << configs;
  return kExitOk;
}

int suite_vocabulary() {
  std::cout << "test knobs (a suite's flow keys; every record echoes them in params):\n";
  for (const model::FlowField& field : model::kFlowFields) {
    std::string values = field.kind == model::FieldKind::choice     ? field.choice_list(" | ")
                         : field.kind == model::FieldKind::flag     ? "true | false"
                         : field.kind == model::FieldKind::fraction ? "0..1 or 0%..100%"
                         : field.kind == model::FieldKind::seconds  ? "a time (200ms, 1s, 10us)"
                         : field.kind == model::FieldKind::rate     ? "a rate (10Gb/s, 100K/s)"
                         : field.maximum == UINT32_MAX
                             ? ">= " + std::to_string(field.minimum)
                             : std::to_string(field.minimum) + ".." + std::to_string(field.maximum);
    const std::string preset = field.required  ? "(required)"
                               : field.derived ? "(derived)"
                                               : field.default_text();
    std::cout << fmt::format("  {:<14} {:<51} default {:<10} {}\n", field.name, values, preset,
                             field.help);
  }
  std::cout << "\nrun length (a test's keys):\n";
  for (const model::RunField& field : model::kRunFields) {
    if (field.suite_key.empty()) continue;
    std::cout << fmt::format("  {:<14} {}\n", field.suite_key, field.help);
  }
  std::cout << "\nover which configs (a test's key):\n";
  std::cout << fmt::format("  {:<14} {}\n", "configs",
                           "a config's name, or a list of them: the test runs over those configs "
                           "of a run only, and has no records over the others (default: every "
                           "config)");
  std::cout << "\nplacement (a test's key, for a launched job of more than two ranks):\n";
  std::cout << fmt::format(
      "  {:<14} {}\n", "pairs",
      "first (default: ranks 0 and 1) | all (every pair, n-1 rounds of n/2 "
      "pairs at once) | ring (each rank to the next) | bisection (the lower half with the "
      "upper, all at once) | incast (every rank into rank 0 at once) | fanout (rank 0 to "
      "every rank at once) | neighbors (each rank to the next, all at once) | all_to_all "
      "(every ordered pair at once)");
  std::cout << "\nmetrics (tolerances: and uniperf compare --tolerance):\n";
  for (const model::MetricInfo& metric : model::kMetrics) {
    std::cout << fmt::format("  {:<14} {} is better, {} tests{}\n", metric.name,
                             metric.lower_is_better ? "lower" : "higher",
                             model::to_string(metric.pattern),
                             metric.default_tolerance > 0
                                 ? fmt::format(", default tolerance {}%", metric.default_tolerance)
                                 : std::string());
  }
  return kExitOk;
}

int plugin_info(const std::string& name, const std::string& config_path) {
  if (name.empty()) return suite_vocabulary();
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
  std::cout << "\nrails: a config may list `rails:`, two or more, each setting options above "
               "over the config's own (a device, port, domain or address per rail; "
               "docs/rails.md)\n";
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
    for (const CapabilityRow& row : kCapabilityRows) {
      std::cout << fmt::format("  {:<22} {}\n", row.name, row.text(caps));
    }
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
      // Read through the suite reader's loader, so a syntax error or an
      // unreadable file is named with file and line like every other error.
      const YAML::Node root = suite::load_yaml(suite::read_whole_file(file), file);
      if (root.IsMap() && root["plugin"]) {
        const auto config = suite::load_config(file);
        if (Plugin* plugin = plugins.find(config.plugin)) {
          suite::validate_rails(config, plugin->options());
          std::cout << fmt::format("ok      {} (config for plugin {})\n", file, config.plugin);
        } else {
          std::cout << fmt::format("ok      {} (config; options not checked: {})\n", file,
                                   plugins.why_missing(config.plugin) +
                                       suite::suggestion(config.plugin, plugins.names()));
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

}  // namespace uniperf::cli
