#include "cli/serve_command.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>

#include "bootstrap/bootstrap.hpp"
#include "cli/addresses.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run_command.hpp"
#include "cli/run_output.hpp"
#include "cli/stop_signals.hpp"
#include "loader/plugin_registry.hpp"
#include "session/provenance.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf::cli {
namespace {

using namespace std::chrono_literals;

/// What a client offers, built into the run it asks for, exactly as its own
/// command line built it; throws (SpecError, std::invalid_argument) for
/// what cannot be run here.
struct OfferedRun {
  model::SuiteSpec suite;
  std::vector<model::ConfigSpec> configs;
  ConnectionOptions client;  // the client's overrides and timeouts
};

OfferedRun build_offered_run(const session::Offer& offer, loader::PluginRegistry& plugins) {
  OfferedRun run;
  run.suite = suite::parse_suite(offer.suite.text, offer.suite.label);
  for (const auto& config : offer.configs) {
    run.configs.push_back(config.given_inline ? suite::parse_inline_config(config.text)
                                              : suite::parse_config(config.text, config.label));
    // As the client checked them: a plugin missing here is reported per
    // test as unavailable, an option this plugin refuses ends the offer.
    if (Plugin* plugin = plugins.find(run.configs.back().plugin))
      suite::validate_rails(run.configs.back(), plugin->options());
  }
  take_offered_overrides(offer.overrides, run.client);
  apply_run_overrides(run.suite, run.client);
  return run;
}

std::string config_names(const std::vector<model::ConfigSpec>& configs) {
  std::string names;
  for (const auto& c : configs) names += (names.empty() ? "" : ", ") + c.name;
  return names;
}

/// A connection whose offer has been read: a client to serve or refuse.
struct Arrival {
  std::unique_ptr<bootstrap::Bootstrap> control;
  session::Offer offer;
};

/// Refuses the offer with `why`, as far as the client is still there to hear it.
void turn_away(Arrival& arrival, const std::string& why) {
  try {
    session::refuse_offer(*arrival.control, why);
  } catch (const std::exception&) {
    // The client is gone already: nothing to tell.
  }
}

/// How long a client that comes while a run is ending waits to be served
/// next rather than told "busy": a client exits as soon as its records are
/// written, while this side may still be tearing its side of the run down,
/// so the next client of a script (`uniperf tune --peer`, a CI loop) often
/// comes in that moment.
constexpr auto kHandOverGrace = 3s;

/// While one client runs, the others are told so ("busy") rather than left
/// waiting in the listen queue for their handshake to time out: after
/// kHandOverGrace, or at once for one that sends no offer.
class BusyRefusals {
 public:
  BusyRefusals(bootstrap::TcpListener& listener, std::string serving)
      : thread_([this, &listener, serving = std::move(serving)](std::stop_token stop) {
          refuse_until(stop, listener, serving);
        }) {}

  /// The run has ended: the client that came while it was ending, if any,
  /// to be served next.
  std::optional<Arrival> end() {
    thread_.request_stop();
    thread_.join();
    return std::move(handed_over_);
  }

 private:
  void refuse_until(std::stop_token stop, bootstrap::TcpListener& listener,
                    const std::string& serving) {
    while (!stop.stop_requested()) {
      Arrival other;
      try {
        other.control = listener.try_accept(1, 200ms, true);
        if (!other.control) continue;
        const auto usual = other.control->timeout();
        other.control->set_timeout(5s);  // a silent stranger holds this thread no longer
        other.offer = session::receive_offer(*other.control);
        other.control->set_timeout(usual);
      } catch (const std::exception&) {
        continue;  // a stranger, or a client gone already: nothing to tell
      }
      std::unique_lock lock(mutex_);
      // Nothing notifies it but the stop: wakes when the run ends, or after the grace.
      run_ended_.wait_for(lock, stop, kHandOverGrace, [] { return false; });
      if (stop.stop_requested()) {
        handed_over_ = std::move(other);
        return;
      }
      turn_away(other, "busy: serving " + serving + "; try again when that run is done");
      std::cerr << fmt::format("uniperf: told {} that the server is busy\n",
                               other.control->peer_host());
    }
  }

  std::mutex mutex_;
  std::condition_variable_any run_ended_;
  std::optional<Arrival> handed_over_;  // written by the thread, read after join()
  std::jthread thread_;                 // last: it uses the members above
};

/// What serving one client left: the run's exit code as a `--listen`
/// responder's would be, and the client that came as it ended, to serve next.
struct Served {
  int exit_code;
  std::optional<Arrival> next;
};

/// One client, from its offer to the end of its run.
Served serve_client(Arrival& arrival, bootstrap::TcpListener& listener,
                    loader::PluginRegistry& plugins, const ServeOptions& options) {
  bootstrap::Bootstrap& control = *arrival.control;
  const session::Offer& offer = arrival.offer;
  const std::string client = control.peer_host();
  OfferedRun run;
  try {
    run = build_offered_run(offer, plugins);
  } catch (const std::exception& e) {
    std::cerr << fmt::format("uniperf: refused the run of {}: {}\n", client, e.what());
    turn_away(arrival, e.what());
    return {kExitBadInput, std::nullopt};
  }
  try {
    session::answer_offer(control, offer, run.suite, run.configs, session::provenance());
  } catch (const std::exception& e) {
    std::cerr << fmt::format("uniperf: lost the client {} in its handshake: {}\n", client,
                             e.what());
    return {kExitNoPeer, std::nullopt};
  }
  std::cerr << fmt::format("uniperf: serving {}: suite '{}' ({} tests) over {}\n", client,
                           run.suite.name, run.suite.tests.size(), config_names(run.configs));

  // The client's timeouts, so both sides give up on a size alike; the
  // heartbeat is this side's own watch on the client.
  run.client.heartbeat_s = options.heartbeat_s;
  session::RunSettings settings = run_settings(run.client);
  settings.stuck = [grace = settings.stuck_grace](const std::string& why, bool peer_lost) {
    RunOutput::end_now(why + "; the step it stopped has not returned for " +
                           std::to_string(grace.count()) + " s since, so the server ends here",
                       peer_lost ? kExitNoPeer : kExitTestErrors);
  };
  int exit_code = kExitOk;
  std::string lost;
  session::Observer observer;
  observer.on_failure = [&](const std::string& why, bool peer_lost) {
    if (exit_code != kExitNoPeer) exit_code = peer_lost ? kExitNoPeer : kExitTestErrors;
    if (peer_lost && lost.empty()) lost = why;
  };
  std::string stopped;  // the client's user stopped its run: no failure
  observer.on_peer_stop = [&](const std::string& why) { stopped = why; };
  // Until the run ended: the next client is then served, not refused.
  BusyRefusals busy(listener, client);
  session::run_from(control, run.suite, run.configs, plugins, settings, observer, std::nullopt,
                    false);
  Served served{exit_code, busy.end()};
  if (exit_code == kExitNoPeer) {
    std::cerr << fmt::format("uniperf: lost the client {}: {}\n", client,
                             lost.empty() ? "the control connection closed" : lost);
  } else {
    std::cerr << fmt::format("uniperf: served {}{}\n", client,
                             exit_code != kExitOk ? " (a test failed: the client's records say why)"
                             : stopped.empty()    ? ""
                                                  : " (" + stopped + ")");
  }
  return served;
}

/// The next connection and its offer; nullopt on a slice's timeout or for
/// a connection that was no client of ours (refused with a message).
std::optional<Arrival> next_arrival(bootstrap::TcpListener& listener) {
  Arrival arrival;
  try {
    // The client's heartbeat comes to this same port: one port to open.
    arrival.control = listener.try_accept(1, 500ms, true);
  } catch (const bootstrap::BootstrapError& e) {
    std::cerr << "uniperf: " << e.what() << "\n";  // a connection that reset before accept
    return std::nullopt;
  }
  if (!arrival.control) return std::nullopt;
  try {
    arrival.offer = session::receive_offer(*arrival.control);
  } catch (const session::HandshakeError& e) {
    std::cerr << fmt::format("uniperf: refused a connection from {}: {}\n",
                             arrival.control->peer_host(), e.what());
    return std::nullopt;
  }
  return arrival;
}

/// The control listener: the address given, else every address, IPv6 and
/// IPv4 on one dual-stack socket where the host has IPv6.
std::unique_ptr<bootstrap::TcpListener> listen_on(const ServeOptions& options) {
  if (!options.listen.empty() &&
      options.listen.find_first_not_of("0123456789") != std::string::npos) {
    const auto [host, port] = split_host_port("--listen", options.listen, "::");
    return std::make_unique<bootstrap::TcpListener>(host, port);
  }
  const std::uint16_t port = options.listen.empty()
                                 ? kDefaultPort
                                 : split_host_port("--listen", options.listen, "::").second;
  try {
    return std::make_unique<bootstrap::TcpListener>("::", port);
  } catch (const bootstrap::BootstrapError&) {
    return std::make_unique<bootstrap::TcpListener>("0.0.0.0", port);  // a host without IPv6
  }
}

}  // namespace

void add_serve_command(CLI::App& app, ServeOptions& options) {
  options.command = app.add_subcommand(
      "serve",
      "Serve clients (`uniperf run ... --peer HOST`), one after another: no suite or config "
      "files here, each client sends its own");
  options.command->add_option("--listen", options.listen,
                              "[HOST:]PORT to listen on (default: every address, port " +
                                  std::to_string(kDefaultPort) + ")");
  options.command->add_flag("--once", options.once, "Exit after the first client's run");
  add_heartbeat_option(
      options.command, options.heartbeat_s,
      "Seconds without a heartbeat from a client before it counts as lost; 0: not watched");
  options.command->add_option("--cpu", options.cpu, "Pin the server to CPU N (recorded)");
  options.command->footer(R"(
Examples:
  server$ uniperf serve
  client$ uniperf run quick -c ucx-tcp --peer server -o results.jsonl
  client$ uniperf bw --op write -s 64K -c verbs:device=mlx5_0 --peer server

The client's suite, configs, --trials, --timeout and --stall-timeout apply; the
server's plugins, devices and libraries are its own. Exit: 0 stopped by a signal
between clients; with --once the run's (1 a test failed, 3 the client was lost).)");
}

int run_serve_command(const ServeOptions& options) {
  loader::PluginRegistry plugins(loader::default_search_path());
  if (options.cpu) session::pin_to_cpu(*options.cpu);
  std::unique_ptr<bootstrap::TcpListener> listener;
  try {
    listener = listen_on(options);
  } catch (const bootstrap::BootstrapError& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
    return kExitNoPeer;
  }
  // Installed after the plugins loaded (cli/stop_signals.hpp). The first
  // signal ends a client's run cleanly (the client keeps its finished
  // records) or the wait for the next; a second ends the server now.
  StopOnSignals signals(
      [] { RunOutput::end_now("interrupted again: ending now", kExitInterrupted); },
      [] { RunOutput::end_now(kAbortedWords, kExitTestErrors); });
  std::cerr << fmt::format("uniperf: serving on port {} (Ctrl-C stops)\n", listener->port());
  std::optional<Arrival> next;  // came as the last run ended
  while (!stop_requested()) {
    std::optional<Arrival> arrival = std::exchange(next, std::nullopt);
    if (!arrival) arrival = next_arrival(*listener);
    if (!arrival) continue;
    Served served = serve_client(*arrival, *listener, plugins, options);
    next = std::move(served.next);
    if (next && (stop_requested() || options.once)) turn_away(*next, "the server is ending");
    if (stop_requested()) return bound_teardown(kExitInterrupted);
    if (options.once) return bound_teardown(served.exit_code);
  }
  return kExitOk;
}

}  // namespace uniperf::cli
