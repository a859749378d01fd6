#include "session/session.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <cmath>
#include <iostream>
#include <optional>

#include "bootstrap/epoch_channel.hpp"
#include "engine/plan.hpp"
#include "engine/runner.hpp"
#include "results/stats.hpp"
#include "session/agreement.hpp"
#include "session/alone_baselines.hpp"
#include "session/concurrent_flows.hpp"
#include "session/environment.hpp"
#include "session/peer_trace.hpp"
#include "session/provenance.hpp"
#include "session/record_builder.hpp"
#include "session/trials.hpp"
#include "session/watchdog.hpp"
#include "suite/diagnostics.hpp"
#include "suite/suite.hpp"

namespace uniperf::session {
namespace {

/// The lane buffers of every flow on huge pages, mapped now; where they
/// cannot be had, every size still to run gets the reason instead (and
/// nothing is kept mapped).
std::vector<engine::LaneMemory> map_huge_pages(const std::vector<engine::FlowPlan>& plans,
                                               std::vector<std::string>& reasons) {
  std::vector<engine::LaneMemory> mapped(plans.size());
  try {
    for (std::size_t k = 0; k < plans.size(); ++k) {
      if (plans[k].flow.pages == model::Pages::huge) mapped[k] = engine::map_lane_memory(plans[k]);
    }
  } catch (const Unavailable& e) {
    for (auto& reason : reasons) {
      if (reason.empty()) reason = e.what();
    }
    return {};
  }
  return mapped;
}

/// Where records go: counted as they start (for progress), then to the
/// observer and the run's result, on the measuring side only (the responder
/// keeps none).
class RecordSink {
 public:
  RecordSink(bool measuring, const Observer& observer)
      : measuring_(measuring), observer_(observer) {}

  /// `total` records in the whole run, of which `done` came before this
  /// part of it (a run resumed with a fresh peer).
  void expect(std::size_t total, std::size_t done = 0) {
    total_ = total;
    index_ = done;
  }

  void notify_start(const model::ConfigSpec& config, const model::TestSpec& test,
                    std::uint64_t size) {
    ++index_;
    if (measuring_ && observer_.on_start) observer_.on_start(config, test, size, index_, total_);
  }

  void emit(results::Record record) {
    if (!measuring_) return;
    if (observer_.on_record) observer_.on_record(record);
    // The observer has written the rows; the run's result keeps the count.
    results::release_trace_rows(record);
    records_.push_back(std::move(record));
  }

  /// Every size of `test` recorded with one status and reason (a test that
  /// is skipped or not run as a whole).
  void record_all(const RecordBuilder& builder, const std::vector<engine::FlowPlan>& plans,
                  const model::ConfigSpec& config, const model::TestSpec& test,
                  results::Status status, const std::string& reason) {
    for (const auto size : test.sizes) {
      notify_start(config, test, size);
      results::Record record = builder.make(config, test, plans, size);
      record.status = status;
      record.reason = reason;
      emit(std::move(record));
    }
  }

  std::vector<results::Record> take() { return std::move(records_); }

 private:
  const bool measuring_;
  const Observer& observer_;
  std::size_t index_ = 0;
  std::size_t total_ = 0;
  std::vector<results::Record> records_;
};

class SuiteRun {
 public:
  SuiteRun(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
           loader::PluginRegistry& plugins, const RunSettings& settings, const Observer& observer)
      : control_(control),
        suite_(suite),
        plugins_(plugins),
        settings_(settings),
        observer_(observer),
        channel_(control),
        watchdog_(control.liveness_fd(), [this] { return channel_.take_interrupt(); },
                  settings.stuck, settings.stuck_grace,
                  {control.heartbeat_fd(), settings.heartbeat_period, settings.heartbeat_timeout,
                   // A peer that stopped answering is lost: every wait on the
                   // control connection ends now, as when it closes.
                   [this](const std::string& why) { control_.sever(why); }}) {
    watchdog_.abort_on(settings.stop_requested);
    watchdog_.stall_after(settings.stall_timeout);
  }

  RunOutcome run(const std::vector<model::ConfigSpec>& configs, std::optional<SuitePosition> resume,
                 bool replaceable_peer) {
    configs_ = &configs;
    const SuitePosition start = resume.value_or(SuitePosition{});
    start_ = start;
    resumed_ = resume.has_value();
    replaceable_ = replaceable_peer;
    // Records: a size each of every test over each config it runs over.
    std::size_t total = 0, before = 0;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      for (std::size_t t = 0; t < suite_.tests.size(); ++t) {
        if (!model::runs_over(suite_.tests[t], configs[c].name)) continue;
        const std::size_t sizes = suite_.tests[t].sizes.size();
        total += sizes;
        if (c < start.config || (c == start.config && t < start.test)) before += sizes;
      }
    }
    sink_.expect(total, before);
    for (std::size_t c = start.config; c < configs.size(); ++c) {
      if (stopped_ || interrupted()) {
        if (replacing()) break;
        for (const auto& test : suite_.tests) record_not_run(configs[c], test);
        continue;
      }
      run_config(configs[c], c, c == start.config ? start.test : 0);
    }
    // A last meeting, so both sides learn alike whether the peer is still
    // there: a peer that died in the last test's final moments (its loop
    // failed on the transport before the watchdog saw the control
    // connection close) counts as lost, not as a failed test.
    here_ = {configs.size(), 0};
    begin_epoch();
    if (replacing() && !resume_at_) resume_at_ = here_;  // lost at the end: nothing to resume
    return {sink_.take(), resume_at_};
  }

 private:
  /// The peer is lost and a fresh one will take over (a local pair): this
  /// run stops where it is, and resume_at_ says where the next one starts.
  bool replacing() const { return stopped_ && replaceable_; }

  /// The peer was lost before the test at here_ started. The next run
  /// starts there, unless this run was itself resumed there and ran
  /// nothing: then the fresh peer was lost again at the same point (a
  /// responder that dies opening this config, say), so that test is
  /// recorded as not run and the next run starts after it. Either way the
  /// suite moves on.
  void lost_before_here() {
    if (!resumed_ || ran_any_ || here_.config != start_.config || here_.test != start_.test ||
        here_.config >= configs_->size()) {
      resume_at_ = here_;
      return;
    }
    const model::ConfigSpec& config = (*configs_)[here_.config];
    record_all(config, suite_.tests.at(here_.test), results::Status::error,
               "not run: a fresh local responder was lost again before this test started (" +
                   stop_reason_ + ")");
    resume_at_ = after(here_);
  }

  SuitePosition after(SuitePosition p) const {
    return p.test + 1 < suite_.tests.size() ? SuitePosition{p.config, p.test + 1}
                                            : SuitePosition{p.config + 1, 0};
  }

  void run_config(const model::ConfigSpec& config, std::size_t config_index,
                  std::size_t first_test) {
    here_ = {config_index, first_test};
    begin_epoch();
    ScopedEnvironment environment(config.environment);
    plugin_ = plugins_.find(config.plugin);
    close_contexts();
    caps_ = Capabilities{};
    device_.clear();
    device_numa_node_.reset();
    baselines_.clear();

    Agreement mine;
    if (plugin_ == nullptr) {
      mine = {false, results::Status::skipped,
              "unavailable: " + plugins_.why_missing(config.plugin) +
                  suite::suggestion(config.plugin, plugins_.names()) + " (config " + config.file +
                  ")"};
    } else {
      try {
        rail_options_ = suite::validate_rails(config, plugin_->options());
        context_ = plugin_->open(rail_options_.front());
        caps_ = context_->capabilities();
        device_ = context_->device();
        // Every further rail: the same plugin on its own device or address.
        for (std::size_t r = 1; r < rail_options_.size(); ++r) {
          rail_contexts_.push_back(plugin_->open(rail_options_[r]));
          device_ += " | " + rail_contexts_.back()->device();
        }
        device_numa_node_ = device_numa_node(device_);
      } catch (const Unavailable& e) {
        mine = {false, results::Status::skipped, std::string("unavailable: ") + e.what()};
      } catch (const std::exception& e) {
        mine = {false, results::Status::error, e.what()};
      }
    }
    record_builder_.set_config(plugin_, device_, device_numa_node_);
    const Agreement agreed = guarded([&] { return agree(channel_, mine); });
    if (replacing()) {
      lost_before_here();
      close_contexts();
      return;
    }
    if (stopped_ || interrupted() || !agreed.ok) {
      for (std::size_t t = first_test; t < suite_.tests.size(); ++t) {
        const auto& test = suite_.tests[t];
        if (stopped_ || interrupted())
          record_not_run(config, test);
        else
          record_all(config, test, agreed.status, agreed.reason);
      }
      close_contexts();
      return;
    }
    for (std::size_t t = first_test; t < suite_.tests.size(); ++t) {
      if (replacing()) break;
      if (!model::runs_over(suite_.tests[t], config.name)) continue;
      if (stopped_ || interrupted()) {
        record_not_run(config, suite_.tests[t]);
      } else {
        here_ = {config_index, t};
        run_test(config, suite_.tests[t]);
      }
    }
    close_contexts();
  }

  void run_test(const model::ConfigSpec& config, const model::TestSpec& test) {
    begin_epoch();
    if (replacing()) {
      lost_before_here();
      return;
    }
    if (stopped_ || interrupted()) {
      record_not_run(config, test);
      return;
    }
    // A Ctrl-C ends a run-forever test at its next window boundary, any
    // other test at once.
    watchdog_.abort_on(test.duration.forever ? nullptr : settings_.stop_requested);
    if (test.process == model::FlowProcesses::separate && settings_.flow_gate == nullptr) {
      // Both sides alike: neither has a gate.
      record_all(config, test, results::Status::skipped, separate_processes_needed(test));
      return;
    }
    // Every flow planned once, from what both sides know alike (the test
    // and the plugin's capabilities); the runners and the records use it.
    const std::vector<engine::FlowPlan> plans = engine::plan_flows(
        test, caps_, static_cast<std::uint32_t>(config.rail_count()), settings_.first_rail);
    // One flow of a test whose flows run in separate processes skips a size
    // any of the test's flows cannot run, as the threads' flows would: every
    // pair then runs, and gathers for, the same sizes.
    const std::vector<engine::FlowPlan> every_flow =
        settings_.separate_test != nullptr
            ? engine::plan_flows(*settings_.separate_test, caps_,
                                 static_cast<std::uint32_t>(config.rail_count()),
                                 settings_.first_rail)
            : std::vector<engine::FlowPlan>{};
    std::vector<std::string> reasons;
    for (std::size_t i = 0; i < test.sizes.size(); ++i)
      reasons.push_back(engine::skip_reason(every_flow.empty() ? plans : every_flow, i));
    // Huge pages are had (or not) before the sides agree what runs, so a
    // side that cannot have them SKIPs the test on both, naming why.
    std::vector<engine::LaneMemory> mapped = map_huge_pages(plans, reasons);
    reasons = guarded([&] { return agree_sizes(channel_, reasons); });
    if (stopped_) {
      // Lost while the test began: it is not run again.
      record_not_run(config, test);
      if (replaceable_) resume_at_ = after(here_);
      return;
    }
    ran_any_ = true;

    bool any = false;
    for (const auto& r : reasons) any |= r.empty();
    ConcurrentFlows flows(channel_, watchdog_);
    // A failure ends this test on both sides (each tears its endpoints down
    // and meets the other at the next epoch); its later sizes are not run.
    std::string setup_error;
    std::string not_run;
    if (any) {
      try {
        watchdog_.arm(settings_.size_timeout);
        std::vector<Context*> rails{context_.get()};
        for (const auto& rail : rail_contexts_) rails.push_back(rail.get());
        flows.set_up(plans, test.until, rails, *plugin_, rail_options_, std::move(mapped),
                     settings_.flow_gate);
        watchdog_.disarm();
      } catch (const Unsupported& e) {
        // A plugin that cannot set a flow up (a connect-time limit, or a
        // second Context for a further flow: see plugin.hpp, "Threads")
        // says so on both sides at the same point (the connect outcome is
        // exchanged), so nothing is out of step: its sizes are SKIPPED.
        watchdog_.disarm();
        for (auto& r : reasons) {
          if (r.empty()) r = e.what();
        }
      } catch (const std::exception& e) {
        setup_error = fail_test(test, e.what());
        not_run = "not run: the test's setup failed";
      }
    }

    for (std::size_t i = 0; i < test.sizes.size(); ++i) {
      const std::uint64_t size = test.sizes[i];
      sink_.notify_start(config, test, size);
      results::Record record = record_builder_.make(config, test, plans, size);
      if (!reasons[i].empty()) {
        record.status = results::Status::skipped;
        record.reason = reasons[i];
      } else if (interrupted_) {
        record.status = results::Status::skipped;
        record.reason = "not run: " + why_stopped();
      } else if (!setup_error.empty()) {
        record.status = results::Status::error;
        record.reason = std::move(setup_error);
        setup_error.clear();
      } else if (!not_run.empty()) {
        record.status = results::Status::error;
        record.reason = not_run;
      } else {
        try {
          std::vector<engine::SizeOutcome> outcomes = run_trials(flows, test, plans, size, record);
          watchdog_.disarm();
          fill_results(record, plans, outcomes, settings_.timeline_bin);
          // Rank 0 takes this flow's percentiles while every flow ran.
          if (settings_.separate_test != nullptr && outcomes.size() == 1)
            keep_iterations(record, outcomes.front());
          results::compute_trial_intervals(record);
          if (const std::uint64_t most = most_trace_rows(plans); most > 0)
            exchange_peer_trace(channel_, record, most, responder_clock_offset_ns());
        } catch (const std::exception& e) {
          // Interrupted here (a local pair's two processes both get the
          // terminal's Ctrl-C; whichever stops first, the other sees it).
          if (watchdog_.cause() == Watchdog::Cause::interrupted || interrupted()) {
            watchdog_.disarm();
            channel_.stop(why_stopped());
            interrupted_ = true;
            record.status = results::Status::skipped;
            record.reason = "not run: " + why_stopped();
          } else if (std::string reason = fail_test(test, e.what()); peer_stopped()) {
            record.status = results::Status::skipped;
            record.reason = "not run: " + reason;
          } else {
            record.status = results::Status::error;
            record.reason = std::move(reason);
            // A stall, seen here or by the peer first (its reason in its
            // words): the test ends, the run goes on.
            if (record.reason.find(kStalledWords) != std::string::npos) record.failure = "stalled";
            not_run = "not run: size " + std::to_string(size) + " of this test failed";
          }
        }
      }
      baselines_.compare(test, record);
      baselines_.remember(test, record);
      sink_.emit(std::move(record));
    }
  }

  /// Why one pair of processes cannot run a test whose flows run in
  /// process pairs of their own.
  static std::string separate_processes_needed(const model::TestSpec& test) {
    const std::size_t ranks = 2 * test.flows.size();
    return fmt::format(
        "process: separate runs each of the test's {} flows in a process pair of its own: a job "
        "of at least {} ranks runs it (mpirun -np {} uniperf run ..., or a local run, which "
        "starts its ranks itself)",
        test.flows.size(), ranks, ranks);
  }

  /// The most trace rows one side keeps for a size of these flows (0: none
  /// is traced): each traced flow's trace_max, split evenly over its lanes.
  static std::uint64_t most_trace_rows(const std::vector<engine::FlowPlan>& plans) {
    std::uint64_t most = 0;
    for (const engine::FlowPlan& plan : plans) {
      if (plan.flow.trace > 0)
        most +=
            engine::trace_rows_per_lane(plan.flow.trace_max, plan.lane_count()) * plan.lane_count();
    }
    return most;
  }

  /// The responder's wall clock minus the initiator's, as the handshake
  /// measured it (0 when it could not: the same clock is then assumed).
  std::int64_t responder_clock_offset_ns() const {
    const auto& facts = settings_.provenance;
    if (!facts.contains("responder") || !facts["responder"].is_object()) return 0;
    const auto& clock = facts["responder"].value("wall_clock", nlohmann::json::object());
    return clock.is_object() ? clock.value("offset_ns", std::int64_t{0}) : 0;
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
      fill_results(trial, plans, outcomes, settings_.timeline_bin);
      record.trials.push_back(results::summarize_trial(trial));
      if (control_.rank() == 0 && observer_.on_interim)
        observer_.on_interim(trial, record.trials.size());
    };
    summarize(pooled);
    for (std::uint32_t t = 1; forever || t < trials; ++t) {
      if (forever && !keep_going()) break;
      std::vector<engine::SizeOutcome> outcomes = run_window(flows, test, size);
      summarize(outcomes);
      pool_window(pooled, std::move(outcomes));
    }
    return pooled;
  }

  /// One trial / window, under the watchdog's per-size deadline.
  std::vector<engine::SizeOutcome> run_window(ConcurrentFlows& flows, const model::TestSpec& test,
                                              std::uint64_t size) {
    watchdog_.arm(settings_.size_timeout + std::chrono::seconds(static_cast<std::int64_t>(
                                               std::ceil(model::longest_timed_seconds(test)))));
    return flows.run_size(size);
  }

  /// Run-forever's window boundary: both sides say whether they were asked to
  /// stop; either one stopping ends the test on both. The windows run the
  /// timed loop untouched: this check is between them, never inside.
  bool keep_going() {
    Agreement mine;
    if (settings_.stop_requested != nullptr && settings_.stop_requested->load()) {
      mine = {false, results::Status::skipped, why_stopped()};
    }
    const Agreement agreed = agree(channel_, mine);
    if (!agreed.ok) interrupted_ = true;
    return agreed.ok;
  }

  /// Every config and every test is an epoch of the control connection:
  /// both sides count them alike and meet at each one's start, so whatever
  /// a failed test left in flight is dropped there. Only a peer that does
  /// not arrive ends the run.
  void begin_epoch() {
    if (stopped_ || interrupted()) return;
    ++epoch_;
    guarded([&] {
      channel_.begin(epoch_, channel_.timeout());
      return true;
    });
    watchdog_.begin_epoch(channel_.interrupt_tag());
  }

  /// A failure inside a test leaves the two sides at unknown points of the
  /// test's control conversation. The side that failed first tells the
  /// other (EpochChannel::abort); the other takes that side's reason as the
  /// test's. Both then go on with the next test. Returns the reason.
  std::string fail_test(const model::TestSpec& test, const std::string& what) {
    watchdog_.disarm();
    std::string reason;
    // The peer may have ended the epoch before its transport's close
    // failed this side (it says why first, then tears down): its word, not
    // the close, is the reason.
    const bool peer_first = channel_.peer_failure().has_value() ||
                            watchdog_.cause() == Watchdog::Cause::peer_failed ||
                            channel_.peer_ended_epoch();
    if (peer_first) {
      // Its interrupt stopped us; its reason follows in band.
      const auto theirs = channel_.await_peer_failure(kPeerReasonWait);
      const std::string peer = control_.rank() == 0 ? "the responder" : "the initiator";
      if (channel_.peer_stopped()) {
        // Its user stopped the run: nothing failed, and this side stops too.
        peer_stop_ = peer + " stopped the run: " + *theirs;
        interrupted_ = true;
        if (control_.rank() != 0)
          std::cerr << "uniperf: " << peer_stop_ << " (in test '" << test.name << "')\n";
        if (observer_.on_peer_stop) observer_.on_peer_stop(peer_stop_);
        return peer_stop_;
      }
      reason = peer + " failed: " + (theirs ? *theirs : what);
    } else {
      reason = watchdog_.fired() ? watchdog_.why() + ": " + what : what;
      // This side's user stopping the run in its setup is no failure either.
      if (watchdog_.cause() == Watchdog::Cause::interrupted || interrupted())
        channel_.stop(why_stopped());
      else
        channel_.abort(reason);
    }
    // The responder keeps no records: its own view of a failure goes to
    // stderr, where the user of a two-host run sees it.
    if (control_.rank() != 0)
      std::cerr << "uniperf: test '" << test.name << "' failed here: " << reason << "\n";
    // A peer that died mid-test is often seen first through its transport
    // (a connection reset, a shared-memory peer gone) rather than the
    // watchdog: its control connection tells which it was.
    const bool peer_lost = watchdog_.peer_lost() || control_hung_up(kHangUpWait);
    if (observer_.on_failure) observer_.on_failure(reason, peer_lost);
    return reason;
  }

  /// How long a failed test waits for the peer's control connection to
  /// show a death the transport reported first (the kernel closes a dead
  /// process's sockets as it exits: the hang-up is there within
  /// milliseconds).
  static constexpr std::chrono::milliseconds kHangUpWait{50};

  /// Whether the peer closed the control connection (its process ended),
  /// waiting at most `wait` for it.
  bool control_hung_up(std::chrono::milliseconds wait) const {
    const int fd = control_.liveness_fd();
    if (fd < 0) return false;
    pollfd hang_up{fd, POLLRDHUP, 0};
    return ::poll(&hang_up, 1, static_cast<int>(wait.count())) > 0 &&
           (hang_up.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  template <class F>
  auto guarded(F&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::exception& e) {
      if (!stopped_) std::cerr << "uniperf: lost the peer: " << e.what() << "\n";
      stopped_ = true;
      stop_reason_ = std::string("not run: lost the peer: ") + e.what();
      if (observer_.on_failure) observer_.on_failure(e.what(), true);
      return {};
    }
  }

  /// A Ctrl-C (or SIGTERM), or the peer's side at a run-forever window's
  /// end (interrupted_), asked this side to stop: the test it was in, or
  /// the next one, is the last to start. The stop flag is only ever raised.
  bool interrupted() const {
    return interrupted_ ||
           (settings_.stop_requested != nullptr && settings_.stop_requested->load());
  }

  /// Why the run's stop flag was raised, for the records it leaves.
  std::string why_stopped() const {
    if (!peer_stop_.empty()) return peer_stop_;
    return settings_.why_stopped ? settings_.why_stopped() : std::string("interrupted");
  }

  /// Whether the peer's user stopped the run (fail_test saw its "stop").
  bool peer_stopped() const { return !peer_stop_.empty(); }

  void record_not_run(const model::ConfigSpec& config, const model::TestSpec& test) {
    if (stopped_)
      record_all(config, test, results::Status::error, stop_reason_);
    else
      record_all(config, test, results::Status::skipped, "not run: " + why_stopped());
  }

  /// Every size of `test` over `config` (none when the test does not run
  /// over it) gets a record of `status`.
  void record_all(const model::ConfigSpec& config, const model::TestSpec& test,
                  results::Status status, const std::string& reason) {
    if (!model::runs_over(test, config.name)) return;
    sink_.record_all(
        record_builder_,
        engine::plan_flows(test, caps_, static_cast<std::uint32_t>(config.rail_count()),
                           settings_.first_rail),
        config, test, status, reason);
  }

  bootstrap::Bootstrap& control_;
  const model::SuiteSpec& suite_;
  loader::PluginRegistry& plugins_;
  const RunSettings& settings_;
  const Observer& observer_;
  bootstrap::EpochChannel channel_;  // every message of the run but the handshake
  Watchdog watchdog_;
  std::uint32_t epoch_ = 0;
  /// How long a side stopped by its peer's interrupt waits for the peer's
  /// reason (sent just before the interrupt).
  static constexpr std::chrono::seconds kPeerReasonWait{5};
  RecordBuilder record_builder_{suite_, settings_};
  AloneBaselines baselines_{suite_};

  Plugin* plugin_ = nullptr;
  std::vector<Options> rail_options_;  ///< the config's, one per rail
  std::unique_ptr<Context> context_;   ///< the first rail's (the config's own without rails)
  std::vector<std::unique_ptr<Context>> rail_contexts_;  ///< the further rails'

  void close_contexts() {
    rail_contexts_.clear();
    context_.reset();
  }
  Capabilities caps_;
  std::string device_;
  std::optional<int> device_numa_node_;

  const std::vector<model::ConfigSpec>* configs_ = nullptr;
  SuitePosition start_;   ///< where this run began
  bool resumed_ = false;  ///< with a fresh peer, after the last one was lost
  SuitePosition here_;    ///< the config and test under way
  bool replaceable_ = false;
  bool ran_any_ = false;  ///< a test of this run got as far as its sizes
  std::optional<SuitePosition> resume_at_;

  bool stopped_ = false;      ///< the control connection is lost: nothing more runs
  bool interrupted_ = false;  ///< a Ctrl-C on this side (or, run-forever, either side)
  /// The peer's user stopped the run in a test: its reason, in our words.
  std::string peer_stop_;
  std::string stop_reason_;
  RecordSink sink_{control_.rank() == 0, observer_};
};

}  // namespace

std::vector<results::Record> run(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                                 const std::vector<model::ConfigSpec>& configs,
                                 loader::PluginRegistry& plugins, const RunSettings& settings,
                                 const Observer& observer) {
  SuiteRun suite_run(control, suite, plugins, settings, observer);
  return suite_run.run(configs, std::nullopt, false).records;
}

RunOutcome run_from(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                    const std::vector<model::ConfigSpec>& configs, loader::PluginRegistry& plugins,
                    const RunSettings& settings, const Observer& observer,
                    std::optional<SuitePosition> resume, bool replaceable_peer) {
  SuiteRun suite_run(control, suite, plugins, settings, observer);
  return suite_run.run(configs, resume, replaceable_peer);
}

}  // namespace uniperf::session
