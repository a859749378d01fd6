#include "cli/tune_command.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "cli/exit_codes.hpp"
#include "cli/local_pair.hpp"
#include "cli/shipped_files.hpp"
#include "results/atomic_file.hpp"
#include "results/jsonl_writer.hpp"
#include "results/setting_search.hpp"
#include "suite/config.hpp"
#include "suite/suite.hpp"
#include "suite/tuning.hpp"

namespace uniperf::cli {
namespace {

namespace fs = std::filesystem;

using Goal = results::SettingSearch::Goal;

/// One (test, size) being tuned.
struct Tuning {
  std::string test;           ///< the suite's name for it (before the sweep's suffix)
  suite::AutoSettings swept;  ///< what it leaves to the tuner
  std::uint64_t size = 0;
  std::vector<suite::TunedSetting> candidates;
  results::SettingSearch search;
  std::string unavailable;  ///< why no candidate could be measured ("" when one could)
  /// The candidates whose run was skipped or failed (excluded from the
  /// search), each with the record's status and reason.
  std::map<std::size_t, std::string> not_run;
  /// `inline: auto` where the plugin posts no message of this size inline
  /// (its max_inline, which the "on" candidate's record showed): "on"
  /// would measure "off" again, so "off" is the choice, unmeasured.
  std::optional<std::uint32_t> max_inline;
};

/// The candidates for a message of `size`: each auto fragment up to the
/// first that sends it whole (larger ones would send it whole again), each
/// auto source, each inline choice; a setting the test does not leave to
/// the tuner is its own.
std::vector<suite::TunedSetting> candidates_for(std::uint64_t size, suite::AutoSettings swept) {
  std::vector<suite::TunedSetting> candidates;
  for (const suite::TunedSetting& point : suite::sweep_points(swept)) {
    if (!candidates.empty() && candidates.back().fragment != point.fragment &&
        candidates.back().fragment >= size)
      break;
    candidates.push_back(point);
  }
  return candidates;
}

/// A candidate as the tuning file and the console name it: "8192",
/// "staged", "8192/staged", "inline on".
std::string label(const suite::TunedSetting& setting) {
  std::string text;
  const auto add = [&](const std::string& part) { text += (text.empty() ? "" : "/") + part; };
  if (setting.fragment != 0) add(std::to_string(setting.fragment));
  if (!setting.source.empty()) add(setting.source);
  if (!setting.inlining.empty()) add("inline " + setting.inlining);
  return text;
}

std::string measured_name(const Tuning& t, const suite::TunedSetting& setting) {
  return fmt::format("{}.size_{}", suite::sweep_point_name(t.test, t.swept, setting), t.size);
}

/// What the tuner optimises and how it is written: a latency test's p50
/// (lower is better), else bandwidth.
struct Objective {
  const char* key;   ///< the tuning file's: "p50_us" or "MB_per_s"
  const char* unit;  ///< the console's: "us p50" or "MB/s"
};
Objective objective_of(Goal goal) {
  return goal == Goal::lowest ? Objective{"p50_us", "us p50"} : Objective{"MB_per_s", "MB/s"};
}

/// The figure a record gives the search; none when it has none.
std::optional<double> figure(const results::Record& r, Goal goal) {
  if (goal == Goal::lowest) {
    if (!r.latency) return std::nullopt;
    return r.latency->p50;
  }
  if (!r.bandwidth) return std::nullopt;
  return r.bandwidth->mb_per_s;
}

/// The flags of `uniperf tune` each round's run takes as they were given:
/// --peer PEER, --cpu N, --peer-cpu N.
std::vector<std::string> round_flags(const TuneCommand& tune) {
  std::vector<std::string> flags;
  if (!tune.peer.empty()) flags.insert(flags.end(), {"--peer", tune.peer});
  if (tune.cpu) flags.insert(flags.end(), {"--cpu", std::to_string(*tune.cpu)});
  if (tune.peer_cpu) flags.insert(flags.end(), {"--peer-cpu", std::to_string(*tune.peer_cpu)});
  return flags;
}

/// Runs `uniperf run SUITE -c CONFIG -o RECORDS --quiet FLAGS...` (this
/// executable: a local pair of its own, or a client of the server at
/// --peer) and waits; its output goes to `log`. A round that comes while the
/// server still ends the last one's run is served next (cli/serve_command.cpp).
int run_child(const fs::path& suite, const std::string& config,
              const std::vector<std::string>& flags, const fs::path& records, const fs::path& log) {
  std::vector<std::string> args = {"uniperf", "run",      suite.string(),   "-c",
                                   config,    "--output", records.string(), "--quiet"};
  args.insert(args.end(), flags.begin(), flags.end());
  const pid_t child = start_self(args, log.string());
  if (child < 0)
    throw std::runtime_error(std::string("cannot start a run: ") + std::strerror(errno));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_lines(const fs::path& log) {
  std::string text;
  try {
    text = suite::read_whole_file(log.string());
  } catch (const std::exception&) {
    return {};
  }
  std::size_t at = text.size();
  for (int lines = 0; lines < 6 && at > 0; ++lines) at = text.rfind('\n', at - 1);
  return text.substr(at == std::string::npos ? 0 : at);
}

std::string tuning_file(const std::vector<Tuning>& tunings, const std::string& suite_path,
                        const std::string& config, const TuneCommand& tune) {
  const std::string& peer = tune.peer;
  std::string flags;
  for (const std::string& flag : round_flags(tune)) flags += " " + flag;
  YAML::Emitter out;
  out.SetDoublePrecision(6);  // MB/s to a few parts per million: more is noise
  out << YAML::Comment(fmt::format(
      "uniperf tune {} -c {}{}: the fragment, source or inline choice that moved the most bytes "
      "per second (a latency test: the lowest p50), per test and size (docs/pipeline.md)",
      suite_path, config, flags));
  out << YAML::BeginMap << YAML::Key << "tuning" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "suite" << YAML::Value << suite_path;
  out << YAML::Key << "config" << YAML::Value << config;
  // The server tuned against: the choices are for the path to that host.
  if (!peer.empty()) out << YAML::Key << "peer" << YAML::Value << peer;
  out << YAML::Key << "tests" << YAML::Value << YAML::BeginMap;
  for (std::size_t i = 0; i < tunings.size();) {
    const std::string& test = tunings[i].test;
    out << YAML::Key << test << YAML::Value << YAML::BeginSeq;
    for (; i < tunings.size() && tunings[i].test == test; ++i) {
      const Tuning& t = tunings[i];
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "size" << YAML::Value << t.size;
      if (!t.unavailable.empty()) {
        out << YAML::Key << "unavailable" << YAML::Value << t.unavailable << YAML::EndMap;
        continue;
      }
      if (t.max_inline) {
        out << YAML::Key << "inline" << YAML::Value << "off";
        out << YAML::Key << "max_inline" << YAML::Value << *t.max_inline << YAML::EndMap;
        continue;
      }
      const auto o = t.search.outcome();
      const Objective objective = objective_of(t.search.goal());
      const auto& best = o.curve[o.best];
      const suite::TunedSetting& chosen = t.candidates[o.best];
      if (t.swept.fragment) out << YAML::Key << "fragment" << YAML::Value << chosen.fragment;
      if (t.swept.source) out << YAML::Key << "source" << YAML::Value << chosen.source;
      if (t.swept.inlining) out << YAML::Key << "inline" << YAML::Value << chosen.inlining;
      out << YAML::Key << objective.key << YAML::Value << best.ci95.mean;
      out << YAML::Key << "ci95" << YAML::Value << YAML::Flow << YAML::BeginSeq << best.ci95.low
          << best.ci95.high << YAML::EndSeq;
      out << YAML::Key << "runner_up" << YAML::Value << label(t.candidates[o.runner_up]);
      out << YAML::Key << fmt::format("runner_up_{}", objective.key) << YAML::Value
          << o.curve[o.runner_up].ci95.mean;
      out << YAML::Key << "separated" << YAML::Value << o.separated;
      out << YAML::Key << "measurements" << YAML::Value << o.measurements;
      out << YAML::Key << "curve" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (std::size_t k = 0; k < t.candidates.size(); ++k) {
        if (!o.curve[k].excluded)
          out << YAML::Key << label(t.candidates[k]) << YAML::Value << o.curve[k].ci95.mean;
      }
      out << YAML::EndMap;
      // The candidates that could not run here, and why: no choice, not a
      // slow one.
      if (!t.not_run.empty()) {
        out << YAML::Key << "not_run" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto& [k, why] : t.not_run)
          out << YAML::Key << label(t.candidates[k]) << YAML::Value << why;
        out << YAML::EndMap;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

void add_tune_command(CLI::App& app, TuneCommand& tune) {
  tune.command = app.add_subcommand(
      "tune",
      "Find the best fragment, source or inline choice per size for the suite's `fragment: "
      "auto`, `source: auto` and `inline: auto` tests on this host (or to a --peer) and config "
      "(docs/pipeline.md): the most MB/s, or a latency test's lowest p50; writes a tuning file");
  tune.command->add_option("suite", tune.suite, "Suite file (YAML), or a shipped suite's name")
      ->required();
  tune.command->add_option("-c,--config", tune.config, "Provider config (a YAML file)")->required();
  tune.command->add_option("-o,--output", tune.output, "Write the tuning file (YAML) to FILE");
  tune.command->add_option("--peer", tune.peer,
                           "Tune against `uniperf serve` on HOST[:PORT] (each round a run of its "
                           "own there) instead of a local pair");
  tune.command->add_option("--cpu", tune.cpu,
                           "Pin each round's initiating process to CPU N (as `uniperf run --cpu`)");
  tune.command->add_option("--peer-cpu", tune.peer_cpu,
                           "Pin each round's local responder to CPU N (as `uniperf run "
                           "--peer-cpu`; against a --peer, give the server its own --cpu)");
  tune.command
      ->add_option("--budget", tune.budget,
                   "Measurements per test and size, at most (every candidate twice first; "
                   "default: 4 per candidate, at least 40)")
      ->check(CLI::Range(1, 10000));
}

int run_tune_command(const TuneCommand& tune) {
  const std::string suite_path = find_shipped(tune.suite, ShippedKind::suite);
  const std::string config_path = find_shipped(tune.config, ShippedKind::config);
  const std::string text = suite::read_whole_file(suite_path);
  const model::SuiteSpec parsed = suite::parse_suite(text, suite_path);  // names any error
  const YAML::Node root = YAML::Load(text);
  const YAML::Node defaults = root["defaults"];

  // What to tune: every size of every auto test that runs over the config.
  const std::string config_name = suite::load_config(config_path).name;
  std::vector<Tuning> tunings;
  std::map<std::string, YAML::Node> nodes;
  for (const YAML::Node& node : root["tests"]) {
    const suite::AutoSettings swept = suite::auto_settings(node, defaults);
    if (!swept.any()) continue;
    const std::vector<std::string> configs = suite::test_configs(node, defaults, suite_path);
    if (!model::runs_over(configs, config_name)) continue;
    const std::string name = node["name"].Scalar();
    nodes[name] = node;
    const std::vector<std::uint64_t>* sizes = suite::auto_sweep_sizes(parsed, name, swept, configs);
    if (sizes == nullptr) {
      std::cerr << "uniperf: " << suite_path << ": test " << name
                << " sweeps several fragments beside `source: auto`: give it one fragment or "
                   "`fragment: auto` to tune\n";
      return kExitBadInput;
    }
    // A latency test is tuned for its p50, any other for its bandwidth.
    const std::string first = suite::sweep_point_name(name, swept, suite::sweep_points(swept)[0]);
    const auto point = std::find_if(parsed.tests.begin(), parsed.tests.end(),
                                    [&](const model::TestSpec& t) { return t.name == first; });
    const Goal goal = point != parsed.tests.end() && !point->flows.empty() &&
                              point->flows.front().pattern == model::Pattern::latency
                          ? Goal::lowest
                          : Goal::highest;
    for (const std::uint64_t size : *sizes) {
      auto candidates = candidates_for(size, swept);
      const std::size_t count = candidates.size();
      tunings.push_back(
          {name, swept, size, std::move(candidates),
           results::SettingSearch(count, tune.first_round,
                                  tune.budget != 0
                                      ? tune.budget
                                      : std::max(TuneCommand::kLeastBudget,
                                                 TuneCommand::kMeasurementsPerCandidate * count),
                                  goal),
           "", {}, std::nullopt});
    }
  }
  if (tunings.empty()) {
    std::cerr << "uniperf: " << suite_path
              << ": no test asks for `fragment: auto`, `source: auto` or `inline: auto`: there "
                 "is nothing to tune\n";
    return kExitBadInput;
  }

  const fs::path work = fs::temp_directory_path() / fmt::format("uniperf-tune.{}", ::getpid());
  fs::create_directories(work);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{work};

  if (!tune.peer.empty())
    std::cerr << "tune: each round against the server at " << tune.peer << "\n";
  for (int round = 1;; ++round) {
    // Every measurement the searches ask for, as a test each (a candidate
    // asked for n times: n trials of one test).
    YAML::Node generated = YAML::Clone(root);
    YAML::Node tests(YAML::NodeType::Sequence);
    std::map<std::string, std::pair<std::size_t, std::size_t>> measuring;  // name -> tuning, k
    for (std::size_t i = 0; i < tunings.size(); ++i) {
      Tuning& t = tunings[i];
      if (!t.unavailable.empty() || t.max_inline) continue;
      std::map<std::size_t, int> counts;
      for (const std::size_t k : t.search.next()) ++counts[k];
      for (const auto& [k, n] : counts) {
        YAML::Node test = YAML::Clone(nodes.at(t.test));
        const std::string name = measured_name(t, t.candidates[k]);
        test["name"] = name;
        if (t.swept.fragment) test["fragment"] = t.candidates[k].fragment;
        if (t.swept.source) test["source"] = t.candidates[k].source;
        if (t.swept.inlining)
          test["inline"] = t.candidates[k].inlining == "on" ? suite::kInlineAsPluginAllows : 0;
        test["sizes"] = std::vector<std::uint64_t>{t.size};
        test["trials"] = n;
        test.remove("baseline");
        tests.push_back(test);
        measuring[name] = {i, k};
      }
    }
    if (tests.size() == 0) break;
    generated["tests"] = tests;
    const fs::path suite_file = work / fmt::format("round{}.yaml", round);
    const fs::path records_file = work / fmt::format("round{}.jsonl", round);
    const fs::path log = work / fmt::format("round{}.log", round);
    {
      YAML::Emitter out;
      out << generated;
      results::write_file_atomically(suite_file, std::string(out.c_str()) + "\n");
    }
    std::cerr << fmt::format("tune: round {}: {} measurements\n", round, [&] {
      std::size_t n = 0;
      for (const auto& test : tests) n += test["trials"].as<std::size_t>();
      return n;
    }());
    const int status = run_child(suite_file, config_path, round_flags(tune), records_file, log);
    if (status == kExitNoPeer || status == kExitBadInput || status >= 100 ||
        !fs::exists(records_file)) {
      std::cerr << fmt::format("uniperf: tune: round {} failed (exit {}):{}\n", round, status,
                               last_lines(log));
      return status == 0 ? kExitTestErrors : status;
    }
    for (const results::Record& r : results::read_jsonl(records_file)) {
      const auto at = measuring.find(r.test);
      if (at == measuring.end()) continue;
      Tuning& t = tunings[at->second.first];
      const suite::TunedSetting& candidate = t.candidates[at->second.second];
      const Goal goal = t.search.goal();
      const std::optional<double> value = figure(r, goal);
      if (r.status != results::Status::ok || !value) {
        // A setting this transport refuses (a ring too large, say) is no
        // choice; the others are still compared. With none left the size
        // cannot be tuned.
        const std::size_t k = at->second.second;
        t.not_run[k] = fmt::format("{}: {}", results::to_string(r.status), r.reason);
        t.search.exclude(k);
        if (!t.search.any_left())
          t.unavailable = fmt::format("candidate {} {}", label(candidate), t.not_run[k]);
        continue;
      }
      // Inline "on" that the plugin capped below this size posted nothing
      // inline: it was "off" again.
      if (candidate.inlining == "on" && r.flow.inline_size < t.size) {
        t.max_inline = r.flow.inline_size;
        continue;
      }
      if (r.trials.empty()) {
        t.search.add(at->second.second, *value);
      } else {
        for (const auto& trial : r.trials)
          t.search.add(at->second.second, goal == Goal::lowest ? trial.p50_us : trial.mb_per_s);
      }
    }
  }

  for (const Tuning& t : tunings) {
    if (!t.unavailable.empty()) {
      std::cout << fmt::format("{} {:>9} B: not tuned: {}\n", t.test, t.size, t.unavailable);
      continue;
    }
    if (t.max_inline) {
      std::cout << fmt::format("{} {:>9} B: inline off: the plugin posts at most {} B inline\n",
                               t.test, t.size, *t.max_inline);
      continue;
    }
    const auto o = t.search.outcome();
    const Objective objective = objective_of(t.search.goal());
    const auto& best = o.curve[o.best].ci95;
    std::cout << fmt::format(
        "{} {:>9} B: {} at {:.4g} {} (95% CI {:.4g} .. {:.4g}); runner-up {} at {:.4g}; {} after "
        "{} measurements\n",
        t.test, t.size, label(t.candidates[o.best]), best.mean, objective.unit, best.low, best.high,
        label(t.candidates[o.runner_up]), o.curve[o.runner_up].ci95.mean,
        o.separated ? "clear of the rest" : "not separated within the budget", o.measurements);
    std::string curve = "    curve:";
    for (std::size_t k = 0; k < t.candidates.size(); ++k) {
      if (!o.curve[k].excluded)
        curve += fmt::format(" {}:{:.4g}", label(t.candidates[k]), o.curve[k].ci95.mean);
    }
    std::cout << curve << "\n";
    for (const auto& [k, why] : t.not_run)
      std::cout << fmt::format("    not run: {} ({})\n", label(t.candidates[k]), why);
  }
  if (!tune.output.empty())
    results::write_file_atomically(tune.output,
                                   tuning_file(tunings, suite_path, tune.config, tune));
  return kExitOk;
}

}  // namespace uniperf::cli
