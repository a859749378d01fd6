#include "session/session.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "bootstrap/channel_mux.hpp"
#include "engine/clock.hpp"
#include "engine/runner.hpp"
#include "results/stats.hpp"
#include "session/provenance.hpp"
#include "suite/suite.hpp"

namespace uniperf::session {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

/// Raises `abort` when the peer's control connection closes or the armed
/// deadline passes, so a loop spinning on a transport that will never
/// complete again ends within a fraction of a second.
class Watchdog {
 public:
  explicit Watchdog(int liveness_fd) : fd_(liveness_fd), thread_([this] { watch(); }) {}
  ~Watchdog() {
    stop_ = true;
    thread_.join();
  }

  void arm(std::chrono::seconds limit) {
    deadline_ns_ = (SteadyClock::now() + limit).time_since_epoch().count();
  }
  void disarm() { deadline_ns_ = 0; }
  /// Raised by the engine itself when one of a test's concurrent flows
  /// failed: the others stop at their next idle moment instead of waiting
  /// out their deadlines.
  void trip() { abort_ = true; }
  const std::atomic<bool>& abort() const { return abort_; }
  bool fired() const { return abort_; }

 private:
  void watch() {
    while (!stop_) {
      if (fd_ >= 0) {
        pollfd pfd{fd_, POLLRDHUP, 0};
        if (::poll(&pfd, 1, 50) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
          abort_ = true;
        }
      } else {
        std::this_thread::sleep_for(50ms);
      }
      const auto deadline = deadline_ns_.load();
      if (deadline != 0 && SteadyClock::now().time_since_epoch().count() > deadline) abort_ = true;
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> abort_{false};
  std::atomic<std::int64_t> deadline_ns_{0};
  std::thread thread_;
};

/// Sets a config's environment for as long as it lives, then restores it.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const std::map<std::string, std::string>& variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// Both sides state an outcome; the first failure (ours, else the peer's)
/// wins, so both sides take the same branch.
struct Agreement {
  bool ok = true;
  results::Status status = results::Status::ok;
  std::string reason;
};

Agreement agree(bootstrap::Bootstrap& control, const Agreement& mine) {
  const json message = {{"ok", mine.ok},
                        {"status", std::string(results::to_string(mine.status))},
                        {"reason", mine.reason}};
  const std::string text = message.dump();
  const Bytes reply = control.exchange(std::as_bytes(std::span(text)), control.timeout());
  if (!mine.ok) return mine;
  const json theirs =
      json::parse(std::string(reinterpret_cast<const char*>(reply.data()), reply.size()));
  Agreement result;
  result.ok = theirs.at("ok").get<bool>();
  if (!result.ok) {
    result.status =
        theirs.at("status") == "error" ? results::Status::error : results::Status::skipped;
    result.reason = "peer: " + theirs.at("reason").get<std::string>();
  }
  return result;
}

/// Per-size skip decisions agreed by both sides (an empty string = run it).
std::vector<std::string> agree_sizes(bootstrap::Bootstrap& control, std::vector<std::string> mine) {
  const std::string text = json(mine).dump();
  const Bytes reply = control.exchange(std::as_bytes(std::span(text)), control.timeout());
  const auto theirs =
      json::parse(std::string(reinterpret_cast<const char*>(reply.data()), reply.size()))
          .get<std::vector<std::string>>();
  for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
    if (mine[i].empty() && !theirs[i].empty()) mine[i] = "peer: " + theirs[i];
  }
  return mine;
}

class SuiteRun {
 public:
  SuiteRun(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
           loader::PluginRegistry& plugins, const RunSettings& settings, const Observer& observer)
      : control_(control),
        suite_(suite),
        plugins_(plugins),
        settings_(settings),
        observer_(observer),
        watchdog_(control.liveness_fd()) {}

  std::vector<results::Record> run(const std::vector<model::ConfigSpec>& configs) {
    total_ = 0;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      for (const auto& test : suite_.tests) total_ += test.sizes.size();
    }
    for (const auto& config : configs) {
      if (stopped_) {
        for (const auto& test : suite_.tests)
          record_all(config, test, results::Status::error, stop_reason_);
        continue;
      }
      run_config(config);
    }
    return std::move(records_);
  }

 private:
  void run_config(const model::ConfigSpec& config) {
    ScopedEnvironment environment(config.environment);
    plugin_ = plugins_.find(config.plugin);
    context_.reset();
    caps_ = Capabilities{};
    device_numa_node_.reset();

    Agreement mine;
    if (plugin_ == nullptr) {
      mine = {false, results::Status::skipped,
              "unavailable: " + plugins_.why_missing(config.plugin)};
    } else {
      try {
        options_ = suite::validate_options(config, plugin_->options());
        context_ = plugin_->open(options_);
        caps_ = context_->capabilities();
        device_ = context_->device();
        device_numa_node_ = device_numa_node(device_);
      } catch (const Unavailable& e) {
        mine = {false, results::Status::skipped, std::string("unavailable: ") + e.what()};
      } catch (const std::exception& e) {
        mine = {false, results::Status::error, e.what()};
      }
    }
    const Agreement agreed = guarded([&] { return agree(control_, mine); });
    if (stopped_ || !agreed.ok) {
      for (const auto& test : suite_.tests) {
        record_all(config, test, stopped_ ? results::Status::error : agreed.status,
                   stopped_ ? stop_reason_ : agreed.reason);
      }
      context_.reset();
      return;
    }
    for (const auto& test : suite_.tests) {
      if (stopped_) {
        record_all(config, test, results::Status::error, stop_reason_);
      } else {
        run_test(config, test);
      }
    }
    context_.reset();
  }

  void run_test(const model::ConfigSpec& config, const model::TestSpec& test) {
    // Every flow planned once, from what both sides know alike (the test
    // and the plugin's capabilities); the runners and the records use it.
    const std::vector<engine::FlowPlan> plans = engine::plan_flows(test, caps_);
    std::vector<std::string> reasons;
    for (std::size_t i = 0; i < test.sizes.size(); ++i)
      reasons.push_back(engine::skip_reason(plans, i));
    reasons = guarded([&] { return agree_sizes(control_, reasons); });
    if (stopped_) {
      record_all(config, test, results::Status::error, stop_reason_);
      return;
    }

    bool any = false;
    for (const auto& r : reasons) any |= r.empty();
    ConcurrentFlows flows;
    std::string setup_error;
    if (any) {
      try {
        watchdog_.arm(settings_.size_timeout);
        set_up(plans, flows);
        watchdog_.disarm();
      } catch (const Unsupported& e) {
        // A second Context for a further flow (see plugin.hpp, "Threads"):
        // both sides hit it at the same point, nothing is out of step.
        watchdog_.disarm();
        for (auto& r : reasons) {
          if (r.empty()) r = std::string("concurrent flows need one Context each: ") + e.what();
        }
      } catch (const std::exception& e) {
        stop(test, e.what());
        setup_error = describe_failure(e.what());
      }
    }

    for (std::size_t i = 0; i < test.sizes.size(); ++i) {
      const std::uint64_t size = test.sizes[i];
      notify_start(config, test, size);
      results::Record record = make_record(config, test, plans, size);
      if (!reasons[i].empty()) {
        record.status = results::Status::skipped;
        record.reason = reasons[i];
      } else if (interrupted_) {
        record.status = results::Status::skipped;
        record.reason = "not run: interrupted";
      } else if (!setup_error.empty() || stopped_) {
        record.status = results::Status::error;
        record.reason = setup_error.empty() ? stop_reason_ : setup_error;
        setup_error.clear();
      } else {
        try {
          std::vector<engine::SizeOutcome> outcomes = run_trials(flows, test, plans, size, record);
          watchdog_.disarm();
          fill_results(record, plans, outcomes);
          results::compute_trial_intervals(record);
        } catch (const std::exception& e) {
          stop(test, e.what());
          record.status = results::Status::error;
          record.reason = describe_failure(e.what());
        }
      }
      emit(std::move(record));
    }
  }

  /// A test's flows, each with its own runner (and, for plugins whose
  /// endpoints are not thread-safe, its own Context) and, when there are
  /// several, its own control channel and thread.
  struct ConcurrentFlows {
    std::vector<std::unique_ptr<Context>> extra_contexts;
    std::unique_ptr<bootstrap::ChannelMux> channels;
    std::vector<std::unique_ptr<engine::TestRunner>> runners;
  };

  void set_up(const std::vector<engine::FlowPlan>& plans, ConcurrentFlows& flows) {
    const std::size_t count = plans.size();
    if (count > 1) flows.channels = std::make_unique<bootstrap::ChannelMux>(control_, count);
    // Flows are set up one after the other, the same order on both sides;
    // only their measured phases run at once.
    for (std::size_t k = 0; k < count; ++k) {
      Context* context = context_.get();
      if (k > 0 && !caps_.thread_safe_endpoints) {
        flows.extra_contexts.push_back(plugin_->open(options_));
        context = flows.extra_contexts.back().get();
      }
      bootstrap::Bootstrap& channel = count > 1 ? flows.channels->channel(k) : control_;
      flows.runners.push_back(
          std::make_unique<engine::TestRunner>(*context, channel, plans[k], watchdog_.abort()));
      flows.runners.back()->setup();
    }
  }

  /// One size of every flow, each on its own thread (the first on this one),
  /// started together by their first barriers. The first failure stops the
  /// others and is rethrown.
  std::vector<engine::SizeOutcome> run_size(ConcurrentFlows& flows, std::uint64_t size) {
    const std::size_t count = flows.runners.size();
    std::vector<engine::SizeOutcome> outcomes(count);
    if (count == 1) {
      outcomes[0] = flows.runners[0]->run(size);
      return outcomes;
    }
    std::vector<std::string> failures(count);
    std::vector<bool> aborted(count, false);
    auto run_one = [&](std::size_t k) {
      try {
        outcomes[k] = flows.runners[k]->run(size);
      } catch (const std::exception& e) {
        failures[k] = "flow " + std::to_string(k + 1) + ": " + e.what();
        aborted[k] = dynamic_cast<const engine::Aborted*>(&e) != nullptr;
        watchdog_.trip();
      }
    };
    {
      std::vector<std::jthread> threads;
      for (std::size_t k = 1; k < count; ++k) threads.emplace_back(run_one, k);
      run_one(0);
    }
    // The flow that failed first says why; the others only saw the abort.
    for (std::size_t k = 0; k < count; ++k) {
      if (!failures[k].empty() && !aborted[k]) throw TransportError(failures[k]);
    }
    for (const auto& failure : failures) {
      if (!failure.empty()) throw TransportError(failure);
    }
    return outcomes;
  }

  /// Runs one size `trials` times (both sides loop alike: the count is part
  /// of the suite both hashed in the handshake). With more than one trial,
  /// each trial's summary goes into record.trials and a single flow's
  /// outcomes are pooled (samples appended, bytes, messages and seconds
  /// summed), so the record's statistics cover every trial; several
  /// concurrent flows keep the last trial's outcomes.
  std::vector<engine::SizeOutcome> run_trials(ConcurrentFlows& flows, const model::TestSpec& test,
                                              const std::vector<engine::FlowPlan>& plans,
                                              std::uint64_t size, results::Record& record) {
    const bool forever = test.duration.forever;
    const std::uint32_t trials = std::max<std::uint32_t>(1, test.duration.trials);
    std::vector<engine::SizeOutcome> pooled = run_window(flows, test, size);
    if (trials == 1 && !forever) return pooled;
    auto summarize = [&](std::vector<engine::SizeOutcome> outcomes) {
      results::Record trial = record;
      trial.trials.clear();
      fill_results(trial, plans, outcomes);
      record.trials.push_back(results::summarize_trial(trial));
      if (control_.rank() == 0 && observer_.on_interim)
        observer_.on_interim(trial, record.trials.size());
    };
    summarize(pooled);
    // Run-forever pools at most this many latency samples (128 MiB) into the
    // final record; every window's own summary is still kept.
    constexpr std::size_t kMaxPooledSamples = std::size_t{16} << 20;
    for (std::uint32_t t = 1; forever || t < trials; ++t) {
      if (forever && !keep_going()) break;
      std::vector<engine::SizeOutcome> outcomes = run_window(flows, test, size);
      summarize(outcomes);
      if (outcomes.size() != 1) {
        pooled = std::move(outcomes);
        continue;
      }
      engine::SizeOutcome& sum = pooled.front();
      const engine::SizeOutcome& one = outcomes.front();
      if (sum.latency_us.size() < kMaxPooledSamples)
        sum.latency_us.insert(sum.latency_us.end(), one.latency_us.begin(), one.latency_us.end());
      sum.bytes += one.bytes;
      sum.messages += one.messages;
      sum.seconds += one.seconds;
      sum.iterations += one.iterations;
      sum.corrupted_bytes += one.corrupted_bytes;
    }
    return pooled;
  }

  /// One trial / window, under the watchdog's per-size deadline.
  std::vector<engine::SizeOutcome> run_window(ConcurrentFlows& flows, const model::TestSpec& test,
                                              std::uint64_t size) {
    const auto& d = test.duration;
    watchdog_.arm(settings_.size_timeout +
                  std::chrono::seconds(static_cast<std::int64_t>(d.seconds + 2 * d.margin)));
    return run_size(flows, size);
  }

  /// Run-forever's window boundary: both sides say whether they were asked to
  /// stop; either one stopping ends the test on both. The windows run the
  /// timed loop untouched: this check is between them, never inside.
  bool keep_going() {
    Agreement mine;
    if (settings_.stop_requested != nullptr && settings_.stop_requested->load()) {
      mine = {false, results::Status::skipped, "interrupted"};
    }
    const Agreement agreed = agree(control_, mine);
    if (!agreed.ok) interrupted_ = true;
    return agreed.ok;
  }

  /// A failure inside a test leaves the two sides at unknown points of the
  /// control protocol: the run stops here and says why.
  void stop(const model::TestSpec& test, const std::string& what) {
    watchdog_.disarm();
    // The responder keeps no records: its own view of a failure goes to
    // stderr, where the user of a two-host run sees it.
    if (control_.rank() != 0)
      std::cerr << "uniperf: test '" << test.name << "' failed here: " << what << "\n";
    stopped_ = true;
    stop_reason_ = "not run: the run stopped after test '" + test.name + "' failed (" + what + ")";
  }

  std::string describe_failure(const std::string& what) const {
    if (watchdog_.fired()) return "peer gone or deadline passed: " + what;
    return what;
  }

  template <class F>
  auto guarded(F&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::exception& e) {
      stopped_ = true;
      stop_reason_ = std::string("not run: lost the peer: ") + e.what();
      return {};
    }
  }

  results::Record make_record(const model::ConfigSpec& config, const model::TestSpec& test,
                              const std::vector<engine::FlowPlan>& plans,
                              std::uint64_t size) const {
    results::Record r;
    r.suite = suite_.name;
    r.config = config.name;
    r.plugin = config.plugin;
    if (plugin_ != nullptr) {
      r.plugin_version = plugin_->version();
      r.library_version = plugin_->library_version();
    }
    r.device = device_;
    r.device_numa_node = device_numa_node_;
    r.test = test.name;
    r.size = size;
    r.flow = plans.front().flow;
    r.duration = test.duration;
    r.preset = test.preset;
    if (test.flows.size() > 1) {
      // Every flow's parameters, also when the test does not run.
      for (const auto& plan : plans) {
        results::FlowResult parameters;
        parameters.flow = plan.flow;
        r.flows.push_back(std::move(parameters));
      }
    }
    for (const auto& plan : plans) {
      for (const auto& feature : plan.emulated) {
        if (std::find(r.emulated.begin(), r.emulated.end(), feature) == r.emulated.end()) {
          r.emulated.push_back(std::move(feature));
        }
      }
    }
    const auto& clock = engine::clock_info();
    r.clock_source = clock.source;
    r.clock_ghz = clock.ticks_per_us / 1e3;
    r.host = host_;
    r.timestamp = utc_timestamp();
    r.provenance = settings_.provenance;
    r.warnings = settings_.warnings;
    return r;
  }

  /// Sorts the outcome's samples in place.
  static results::FlowResult flow_result(const model::FlowSpec& flow,
                                         engine::SizeOutcome& outcome) {
    results::FlowResult result;
    result.flow = flow;
    result.iterations_run = outcome.iterations;
    result.corrupted_bytes = outcome.corrupted_bytes;
    if (flow.pattern == model::Pattern::latency) {
      result.latency = results::compute_latency(outcome.latency_us, outcome.one_way);
    }
    result.bandwidth = results::compute_bandwidth(outcome.bytes, outcome.messages, outcome.seconds);
    return result;
  }

  void fill_results(results::Record& record, const std::vector<engine::FlowPlan>& plans,
                    std::vector<engine::SizeOutcome>& outcomes) const {
    if (outcomes.size() == 1) {
      results::FlowResult only = flow_result(plans.front().flow, outcomes.front());
      record.iterations_run = only.iterations_run;
      record.corrupted_bytes = only.corrupted_bytes;
      record.latency = std::move(only.latency);
      record.bandwidth = std::move(only.bandwidth);
    } else {
      // Every flow's bytes over the union of their intervals (all measured
      // on this side's clock).
      std::uint64_t bytes = 0, messages = 0;
      engine::Ticks first = std::numeric_limits<engine::Ticks>::max(), last = 0;
      for (std::size_t k = 0; k < outcomes.size(); ++k) {
        auto& outcome = outcomes[k];
        record.flows[k] = flow_result(plans[k].flow, outcome);
        record.iterations_run += outcome.iterations;
        record.corrupted_bytes += outcome.corrupted_bytes;
        bytes += outcome.bytes;
        messages += outcome.messages;
        first = std::min(first, outcome.started);
        last = std::max(last, outcome.finished);
      }
      const double seconds = last > first ? engine::ticks_to_us(last - first) / 1e6 : 0;
      record.bandwidth = results::compute_bandwidth(bytes, messages, seconds);
    }
    if (record.corrupted_bytes != 0) {
      record.status = results::Status::error;
      record.reason = "payload validation failed: " + std::to_string(record.corrupted_bytes) +
                      " corrupted bytes";
    }
  }

  void record_all(const model::ConfigSpec& config, const model::TestSpec& test,
                  results::Status status, const std::string& reason) {
    const std::vector<engine::FlowPlan> plans = engine::plan_flows(test, caps_);
    for (const auto size : test.sizes) {
      notify_start(config, test, size);
      results::Record record = make_record(config, test, plans, size);
      record.status = status;
      record.reason = reason;
      emit(std::move(record));
    }
  }

  void notify_start(const model::ConfigSpec& config, const model::TestSpec& test,
                    std::uint64_t size) {
    ++index_;
    if (control_.rank() == 0 && observer_.on_start)
      observer_.on_start(config, test, size, index_, total_);
  }

  void emit(results::Record record) {
    if (control_.rank() != 0) return;
    if (observer_.on_record) observer_.on_record(record);
    records_.push_back(std::move(record));
  }

  bootstrap::Bootstrap& control_;
  const model::SuiteSpec& suite_;
  loader::PluginRegistry& plugins_;
  const RunSettings& settings_;
  const Observer& observer_;
  Watchdog watchdog_;
  std::string host_ = hostname();

  Plugin* plugin_ = nullptr;
  Options options_;
  std::unique_ptr<Context> context_;
  Capabilities caps_;
  std::string device_;
  std::optional<int> device_numa_node_;

  bool stopped_ = false;
  bool interrupted_ = false;  ///< run-forever ended by a Ctrl-C on either side
  std::string stop_reason_;
  std::size_t index_ = 0;
  std::size_t total_ = 0;
  std::vector<results::Record> records_;
};

/// Each test's trial count: `--trials` overrides the suite file, so the
/// file's hash alone would not show that the two sides loop differently.
std::vector<std::uint32_t> trial_counts(const model::SuiteSpec& suite) {
  std::vector<std::uint32_t> counts;
  // 0: run-forever (windows until interrupted).
  for (const auto& test : suite.tests)
    counts.push_back(test.duration.forever ? 0 : test.duration.trials);
  return counts;
}

}  // namespace

json handshake(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
               const std::vector<model::ConfigSpec>& configs, const json& provenance) {
  json mine = {
      {"magic", "uniperf"},
      {"protocol", kProtocolVersion},
      {"version", UNIPERF_VERSION},
      {"suite",
       {{"name", suite.name}, {"hash", suite.content_hash}, {"trials", trial_counts(suite)}}},
      {"configs", json::array()},
      {"provenance", provenance}};
  for (const auto& c : configs)
    mine["configs"].push_back({{"name", c.name}, {"hash", c.content_hash}});
  const std::string text = mine.dump();
  Bytes reply;
  try {
    reply = control.exchange(std::as_bytes(std::span(text)), control.timeout());
  } catch (const bootstrap::BootstrapError& e) {
    throw HandshakeError(std::string("handshake with the peer failed: ") + e.what());
  }
  json theirs;
  try {
    theirs = json::parse(std::string(reinterpret_cast<const char*>(reply.data()), reply.size()));
  } catch (const json::exception&) {
    throw HandshakeError("the peer is not a uniperf process (unreadable handshake)");
  }
  if (theirs.value("magic", "") != "uniperf") {
    throw HandshakeError("the peer is not a uniperf process");
  }
  if (theirs.value("protocol", -1) != kProtocolVersion) {
    throw HandshakeError(
        "the peer speaks control protocol " + std::to_string(theirs.value("protocol", -1)) +
        " (uniperf " + theirs.value("version", "?") + "), this side speaks " +
        std::to_string(kProtocolVersion) +
        " (uniperf " UNIPERF_VERSION "): run the same uniperf version on both hosts");
  }
  if (theirs["suite"] != mine["suite"]) {
    throw HandshakeError("the peer runs another suite: here '" + suite.name + "' (" +
                         suite.content_hash.substr(0, 12) + "), there '" +
                         theirs["suite"].value("name", "?") + "' (" +
                         theirs["suite"].value("hash", "?").substr(0, 12) +
                         "): give both sides the same suite file");
  }
  if (theirs["configs"] != mine["configs"]) {
    throw HandshakeError("the peer runs other configs: here " + mine["configs"].dump() +
                         ", there " + theirs["configs"].dump() +
                         ": give both sides the same --config files in the same order");
  }
  return theirs.value("provenance", json(nullptr));
}

std::vector<results::Record> run(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                                 const std::vector<model::ConfigSpec>& configs,
                                 loader::PluginRegistry& plugins, const RunSettings& settings,
                                 const Observer& observer) {
  SuiteRun suite_run(control, suite, plugins, settings, observer);
  return suite_run.run(configs);
}

}  // namespace uniperf::session
