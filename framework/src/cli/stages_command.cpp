#include "cli/stages_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/exit_codes.hpp"
#include "cli/run_command.hpp"
#include "engine/stage_costs.hpp"
#include "loader/plugin_registry.hpp"
#include "results/atomic_file.hpp"
#include "results/stats.hpp"
#include "session/environment.hpp"
#include "session/provenance.hpp"
#include "suite/config.hpp"
#include "suite/units.hpp"

namespace uniperf::cli {
namespace {

using nlohmann::json;

/// The stage-cost file's schema (docs/pipeline.md, "Stage costs").
constexpr const char* kStagesSchema = "1.0";

std::vector<engine::Pages> pages_asked(const std::string& pages) {
  if (pages == "normal") return {engine::Pages::normal};
  if (pages == "huge") return {engine::Pages::huge};
  return {engine::Pages::normal, engine::Pages::huge};
}

/// Why pages of this kind cannot be had here ("" when they can): one
/// page mapped and given back.
std::string pages_missing(engine::Pages pages) {
  try {
    engine::MappedBuffer probe(1, pages);
    return {};
  } catch (const Unavailable& e) {
    return e.what();
  }
}

/// One call's statistics over its samples, microseconds.
results::LatencyStats call_times(std::vector<double> samples_us) {
  return results::compute_latency(samples_us, false);
}

json to_json(const results::LatencyStats& s) {
  return {{"p50", s.p50}, {"min", s.min}, {"mean", s.mean}, {"p99", s.p99}, {"max", s.max}};
}

/// The copy stage: one row per (pages, size), printed as measured.
json measure_copies(const StagesCommand& stages, const std::vector<std::uint64_t>& sizes,
                    json& skipped) {
  json rows = json::array();
  for (const engine::Pages pages : pages_asked(stages.pages)) {
    std::cout << fmt::format("memory copy on this host, {} pages: MB/s, mean of {} trials\n",
                             model::to_string(pages), stages.trials);
    if (const std::string why = pages_missing(pages); !why.empty()) {
      std::cout << "  SKIPPED: " << why << "\n";
      skipped.push_back({{"stage", "copy"}, {"pages", model::to_string(pages)}, {"reason", why}});
      continue;
    }
    std::cout << fmt::format("  {:>10} {:>12} {:>25}\n", "size", "MB/s", "95% CI");
    for (const std::uint64_t size : sizes) {
      const auto samples =
          engine::measure_copy(size, pages, stages.trials,
                               std::chrono::microseconds(static_cast<long>(stages.trial_ms * 1e3)));
      const results::Interval ci = results::mean_ci95(samples.mb_per_s);
      std::cout << fmt::format("  {:>10} {:>12.1f} {:>12.1f} .. {:>9.1f}\n", size, ci.mean, ci.low,
                               ci.high);
      rows.push_back({{"size", size},
                      {"pages", model::to_string(pages)},
                      {"MB_per_s", ci.mean},
                      {"ci95", {ci.low, ci.high}},
                      {"trials", samples.mb_per_s.size()},
                      {"copies_per_trial", samples.copies_per_trial}});
    }
  }
  return rows;
}

/// The registration stage of one config: its plugin opened here, one row
/// per (pages, size); {"unavailable": reason} when it cannot be opened.
json measure_registrations(const StagesCommand& stages, const model::ConfigSpec& config,
                           loader::PluginRegistry& plugins, const std::vector<std::uint64_t>& sizes,
                           json& skipped) {
  json section = {{"name", config.name}, {"plugin", config.plugin}};
  Plugin* plugin = plugins.find(config.plugin);
  const auto unavailable = [&](const std::string& why) {
    std::cout << fmt::format("config {}: unavailable: {}\n", config.name, why);
    section["unavailable"] = why;
    return section;
  };
  if (plugin == nullptr) return unavailable(plugins.why_missing(config.plugin));
  const session::ScopedEnvironment environment(config.environment);
  std::unique_ptr<Context> context;
  try {
    context = plugin->open(suite::validate_options(config, plugin->options()));
  } catch (const Unavailable& e) {
    return unavailable(e.what());
  } catch (const TransportError& e) {
    return unavailable(e.what());
  }
  section["plugin_version"] = plugin->version();
  section["library"] = plugin->library_version();
  section["device"] = context->device();
  json rows = json::array();
  for (const engine::Pages pages : pages_asked(stages.pages)) {
    std::cout << fmt::format(
        "config {} ({}, {}), {} pages: register_memory() and release, us (median, min..p99 "
        "of {} fresh buffers); again: the last buffer once more\n",
        config.name, plugin->library_version(), context->device(), model::to_string(pages),
        stages.repeats);
    if (const std::string why = pages_missing(pages); !why.empty()) {
      std::cout << "  SKIPPED: " << why << "\n";
      skipped.push_back({{"stage", "register"},
                         {"config", config.name},
                         {"pages", model::to_string(pages)},
                         {"reason", why}});
      continue;
    }
    std::cout << fmt::format("  {:>10} {:>27} {:>27} {:>10}\n", "size", "register", "release",
                             "again");
    for (const std::uint64_t size : sizes) {
      engine::RegistrationSamples samples;
      try {
        samples = engine::measure_registration(*context, size, pages, stages.repeats);
      } catch (const TransportError& e) {
        std::cout << fmt::format("  {:>10} error: {}\n", size, e.what());
        rows.push_back({{"size", size}, {"pages", model::to_string(pages)}, {"error", e.what()}});
        continue;
      }
      const results::LatencyStats registered = call_times(samples.register_us);
      const results::LatencyStats released = call_times(samples.release_us);
      const results::LatencyStats again = call_times(samples.again_us);
      const auto spread = [](const results::LatencyStats& t) {
        return fmt::format("{:>9.2f} ({:.2f}..{:.2f})", t.p50, t.min, t.p99);
      };
      std::cout << fmt::format("  {:>10} {:>27} {:>27} {:>10.2f}\n", size, spread(registered),
                               spread(released), again.p50);
      rows.push_back({{"size", size},
                      {"pages", model::to_string(pages)},
                      {"repeats", stages.repeats},
                      {"register_us", to_json(registered)},
                      {"release_us", to_json(released)},
                      {"again_us", to_json(again)}});
    }
  }
  section["registration"] = std::move(rows);
  return section;
}

}  // namespace

void add_stages_command(CLI::App& app, StagesCommand& stages) {
  stages.command = app.add_subcommand(
      "stages",
      "Measure a pipeline's stage costs on this host, each on its own (docs/pipeline.md): "
      "memory copy bandwidth per size and, per config, register_memory() and release per size");
  stages.command->add_option(
      "-c,--config", stages.configs,
      "A config whose plugin's registration to time (a file, a shipped name or PLUGIN:KEY=VALUE); "
      "repeatable. Without one, only the copy is measured");
  stages.command->add_option("-s,--sizes", stages.sizes,
                             "Sizes: a list or range as a suite's (256..4M x4, 4K, 1K..64K +1K)");
  stages.command->add_option("--pages", stages.pages, "normal, huge or both")
      ->check(CLI::IsMember({"normal", "huge", "both"}));
  stages.command->add_option("--trials", stages.trials, "Copy trials per size")
      ->check(CLI::Range(2, 1000));
  stages.command->add_option("--repeats", stages.repeats, "Registrations per size")
      ->check(CLI::Range(1, 10000));
  stages.command->add_option("--trial-ms", stages.trial_ms, "The length of one copy trial, ms")
      ->check(CLI::Range(0.1, 10000.0));
  stages.command->add_option("-o,--output", stages.output,
                             "Write the statistics and the provenance to FILE (JSON)");
}

int run_stages_command(const StagesCommand& stages) {
  std::vector<std::uint64_t> sizes;
  try {
    sizes = suite::parse_size_range(stages.sizes);
  } catch (const std::invalid_argument& e) {
    std::cerr << "uniperf: stages: --sizes '" << stages.sizes << "': " << e.what() << "\n";
    return kExitBadInput;
  }
  for (const std::uint64_t size : sizes) {
    if (size == 0 || size > suite::kMaxMessageSize) {
      std::cerr << fmt::format("uniperf: stages: --sizes: {} is not within 1 .. {}\n", size,
                               suite::kMaxMessageSize);
      return kExitBadInput;
    }
  }
  loader::PluginRegistry plugins(loader::default_search_path());
  const std::vector<model::ConfigSpec> configs = load_configs(stages.configs, plugins);

  json skipped = json::array();
  json document = {{"schema", kStagesSchema},
                   {"uniperf", session::build_info()},
                   {"host", session::provenance()},
                   {"sizes", sizes}};
  document["copy"] = measure_copies(stages, sizes, skipped);
  json sections = json::array();
  for (const model::ConfigSpec& config : configs)
    sections.push_back(measure_registrations(stages, config, plugins, sizes, skipped));
  document["configs"] = std::move(sections);
  document["skipped"] = std::move(skipped);
  if (!stages.output.empty())
    results::write_file_atomically(stages.output, document.dump(1) + "\n");
  return kExitOk;
}

}  // namespace uniperf::cli
