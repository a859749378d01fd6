// A run: the handshake between the two uniperf processes, then every config
// x test x size of a suite in lockstep on both sides, producing records on
// the initiator. Sits above the engine, loader, suite model and reporters
// and below the CLI; tests drive it in-process with two threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/flow_group.hpp"
#include "loader/plugin_registry.hpp"
#include "model/suite_spec.hpp"
#include "results/record.hpp"

namespace uniperf::session {

/// The control protocol's version: bumped on any change to the messages the
/// two sides exchange (handshake, engine control, plugin blobs framing).
// 2: provenance, trial counts, run-forever stop; 3: the engine's typed messages
// (engine/peer_protocol.hpp) replace CBOR keys, JSON "done" and a decimal count;
// 4: the initiator's handshake goes first, and every later message carries its
// epoch (bootstrap/epoch_channel.hpp); 5: the handshake ends by opening the
// heartbeat connection (Bootstrap::open_heartbeat), and every stream phase
// ends with a count of the messages each side received (unreliable
// transports' loss); 6: after the handshake, round trips that measure the
// responder's wall clock against the initiator's (measure_wall_clock_offset);
// 7: the initiator's handshake carries its offer (the suite's and configs'
// texts, the command-line overrides) for a bare server, which may answer
// with a refusal instead of its handshake; 8: every measured phase ends
// with each side's CPU time over it (engine/cpu_meter.hpp); 9: the
// responder's trace rows carry when each post call returned; 10: a side
// whose user stopped the run says so ("stop", EpochChannel::stop) instead
// of failing the test.
inline constexpr int kProtocolVersion = 10;

/// Both sides call it (the handshake does): round trips over the control
/// connection that estimate the responder's wall clock minus the
/// initiator's, the NTP way, on the round trip with the least delay. On the
/// initiator {offset_ns, uncertainty_ns (half that round trip), round_trips}:
/// the true offset lies within offset_ns +- uncertainty_ns. Null on the
/// responder. Throws BootstrapError when the peer is lost.
nlohmann::json measure_wall_clock_offset(bootstrap::Bootstrap& control);

struct HandshakeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Both sides call it first; the initiator speaks first and the responder
/// answers only a uniperf peer of its protocol (a stranger on a listening
/// port learns nothing). Rejects a peer of another protocol version,
/// another suite or other configs with a message that says which. Each side
/// sends its own `provenance` facts (an object, or null) and gets the peer's
/// back (null from a peer that sent none), so the initiator's records
/// describe both hosts. The initiator's copy of the peer's facts gains
/// `wall_clock`: measure_wall_clock_offset()'s estimate. The initiator's
/// message carries its Offer (with `overrides`) for a bare server; a server
/// that refuses it makes this throw HandshakeError with its reason.
nlohmann::json handshake(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                         const std::vector<model::ConfigSpec>& configs,
                         const nlohmann::json& provenance = nullptr,
                         const nlohmann::json& overrides = nlohmann::json::object());

/// What the initiator's handshake offers a bare server (`uniperf serve`):
/// the texts its suite and configs were parsed from, with the labels they
/// were parsed under (a config's file names it and places ${config_dir}),
/// and the command-line overrides the client applied (an object the CLI
/// defines: --trials, --timeout, ...). The server parses them as the client
/// did, so both sides build the same run and the handshake's checks hold.
struct Offer {
  struct Text {
    std::string label;  ///< the file it was read from ("-c" for a config given inline)
    std::string text;
    bool given_inline = false;
  };
  Text suite;
  std::vector<Text> configs;
  nlohmann::json overrides = nlohmann::json::object();
  nlohmann::json handshake;  ///< the initiator's whole message, for answer_offer()
};

/// A bare server's first step: reads the initiator's handshake and its
/// offer. Throws HandshakeError for a stranger, another protocol, or a
/// handshake that offers nothing (nothing has been sent back then).
Offer receive_offer(bootstrap::Bootstrap& control);

/// The rest of the handshake, once the server built `suite` and `configs`
/// from the offer: as handshake() on the responder.
nlohmann::json answer_offer(bootstrap::Bootstrap& control, const Offer& offer,
                            const model::SuiteSpec& suite,
                            const std::vector<model::ConfigSpec>& configs,
                            const nlohmann::json& provenance);

/// Instead of answer_offer(), when the offer cannot be run here (a suite
/// this version cannot parse, an option a plugin refuses): the client's
/// handshake() throws HandshakeError saying "the server refused the run:
/// `why`".
void refuse_offer(bootstrap::Bootstrap& control, const std::string& why);

struct Observer {
  /// Called on the initiator before each (config, test, size) runs.
  std::function<void(const model::ConfigSpec&, const model::TestSpec&, std::uint64_t size,
                     std::size_t index, std::size_t total)>
      on_start;
  /// Called on the initiator with each finished record: the only one that
  /// sees its trace rows (the records run() returns keep their count only,
  /// so a traced run's memory does not grow with its length).
  std::function<void(const results::Record&)> on_record;
  /// Called on the initiator after each trial / run-forever window with that
  /// window's own record (`number` from 1), before the final record.
  std::function<void(const results::Record& window, std::size_t number)> on_interim;
  /// Called on both sides when a test fails, with `peer_lost` true when
  /// the peer's control connection closed (the run then stops at the next
  /// test) and false otherwise (the run goes on). The responder keeps no
  /// records, so this is how it learns that its run failed.
  std::function<void(const std::string& reason, bool peer_lost)> on_failure;
  /// Called on either side when the peer's user stopped the run (Ctrl-C)
  /// in a test, with the reason in this side's words ("the initiator
  /// stopped the run: interrupted"): not a failure, so on_failure is not
  /// called. A server says so of its client.
  std::function<void(const std::string& reason)> on_peer_stop;
};

struct RunSettings {
  /// Longest one size may take beyond its own duration before the run is
  /// aborted as hung.
  std::chrono::seconds size_timeout{120};
  /// Copied into every record: the run's provenance (see
  /// results::Record::provenance) and the preflight warnings.
  nlohmann::json provenance = nlohmann::json::object();
  /// Config name -> the tuning file applied over it (`uniperf run
  /// --tuning`): its records' provenance.tuned_by.
  std::map<std::string, std::string> tuned_by;
  std::vector<std::string> warnings;
  /// Copied into every record: where it was measured, in a launched job of
  /// more than two ranks (cli/rank_job.hpp).
  std::optional<results::Placement> placement;
  /// The rail a test's first flow binds to (rail_policy: bind; flow k the
  /// k-th rail after it): in a job of more ranks the pairs that run at once
  /// take rails in turn, as the seed's two process pairs each had a port of
  /// their own. 0 elsewhere. Both sides of a pair must be given the same.
  std::uint32_t first_rail = 0;
  /// A pair of a launched job that runs one flow of a test whose flows run
  /// in process pairs of their own (model::FlowProcesses::separate): the
  /// gate its measured phases start and stop by, with the other flows'
  /// pairs (session/remote_flow_gate.hpp). Null elsewhere, where such a
  /// test is skipped: one pair (--peer/--listen, two ranks) cannot run it.
  engine::FlowGate* flow_gate = nullptr;
  /// With flow_gate: the whole test of every flow, whose sizes this pair
  /// skips wherever any flow of it would (so that every pair measures the
  /// same sizes and gathers for the same phases, as threads' flows do).
  const model::TestSpec* separate_test = nullptr;
  /// Raised by a SIGINT/SIGTERM handler. A run-forever test ends after its
  /// current window (the two sides agree on it at each window boundary, so
  /// either side's Ctrl-C ends both cleanly); any other test is aborted at
  /// once. Sizes and tests not reached are recorded as skipped ("not run:
  /// interrupted"), the records finished before stand.
  const std::atomic<bool>* stop_requested = nullptr;
  /// Why stop_requested was raised, in the records' "not run: ..." and the
  /// peer's message; unset: "interrupted" (a signal).
  std::function<std::string()> why_stopped;
  /// Last resort when a transport call never returns after its loop was
  /// aborted (see Watchdog::StuckHandler): called on another thread after
  /// `stuck_grace`; it must end the process.
  std::function<void(const std::string& why, bool peer_lost)> stuck;
  std::chrono::seconds stuck_grace{15};
  /// The heartbeat (Watchdog::Heartbeat): a peer that sent none for
  /// `heartbeat_timeout` is lost (0: not watched); beats go out every
  /// `heartbeat_period`.
  std::chrono::milliseconds heartbeat_timeout{5000};
  std::chrono::milliseconds heartbeat_period{1000};
  /// A flow that waits for completions and gets none for this long is
  /// stalled: its test ends (record status error, failure "stalled") and the
  /// run goes on. 0: not watched (the size's deadline still applies).
  std::chrono::milliseconds stall_timeout{10000};
  /// The width of the bins of a traced flow's bandwidth over time
  /// (results/competition.hpp; --timeline-bin).
  std::chrono::microseconds timeline_bin{10000};
};

/// Runs the suite over every config on an established, handshaken control
/// connection. Returns the records (initiator) or nothing (responder).
/// A test that fails (a transport error, a deadline, the peer's side
/// failing) gets an error record with its reason and its later sizes "not
/// run"; both sides meet again at the next test (bootstrap::EpochChannel)
/// and the run goes on. Only a lost control connection ends the run: every
/// test not run gets a record saying why, and both sides return within
/// seconds.
std::vector<results::Record> run(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                                 const std::vector<model::ConfigSpec>& configs,
                                 loader::PluginRegistry& plugins, const RunSettings& settings,
                                 const Observer& observer = {});

/// A point of a run: a config and a test of the suite, by index.
struct SuitePosition {
  std::size_t config = 0;
  std::size_t test = 0;
};

struct RunOutcome {
  std::vector<results::Record> records;
  /// With a replaceable peer that was lost: where a run with a fresh peer
  /// goes on (config == configs.size(): nothing is left).
  std::optional<SuitePosition> resume_at;
};

/// run(), or with `resume` a run resumed there with a fresh peer (both
/// sides start alike: the initiator tells the fresh responder where). With
/// `replaceable_peer` (a local pair, whose responder
/// the initiator can start again) a lost peer does not end the run with
/// "not run" records: this run stops where the peer was lost and says where
/// to resume. The test under way when it was lost is an error record and is
/// not run again; nor is a test at which a fresh peer is lost again before
/// it starts, so every resumed run gets further.
RunOutcome run_from(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
                    const std::vector<model::ConfigSpec>& configs, loader::PluginRegistry& plugins,
                    const RunSettings& settings, const Observer& observer,
                    std::optional<SuitePosition> resume, bool replaceable_peer);

}  // namespace uniperf::session
