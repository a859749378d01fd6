#include "cli/plugin_commands.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <iostream>

#include "cli/exit_codes.hpp"
#include "loader/plugin_registry.hpp"
#include "model/flow_fields.hpp"
#include "model/metrics.hpp"
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
};

}  // namespace

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

int suite_vocabulary() {
  std::cout << "test knobs (a suite's flow keys; every record echoes them in params):\n";
  for (const model::FlowField& field : model::kFlowFields) {
    std::string values = field.kind == model::FieldKind::choice     ? field.choice_list(" | ")
                         : field.kind == model::FieldKind::flag     ? "true | false"
                         : field.kind == model::FieldKind::fraction ? "0..1 or 0%..100%"
                         : field.kind == model::FieldKind::seconds  ? "a time (200ms, 1s)"
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
          suite::validate_options(config, plugin->options());
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
