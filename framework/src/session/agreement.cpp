#include "session/agreement.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <span>

#include "results/bounded_json.hpp"
#include "session/session.hpp"

namespace uniperf::session {
namespace {

using json = nlohmann::json;

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

Agreement agree(bootstrap::Bootstrap& control, const Agreement& mine) {
  const json message = {{"ok", mine.ok},
                        {"status", std::string(results::to_string(mine.status))},
                        {"reason", mine.reason}};
  const std::string text = message.dump();
  const Bytes reply = control.exchange(std::as_bytes(std::span(text)), control.timeout());
  if (!mine.ok) return mine;
  const json theirs = results::parse_bounded_json(
      std::string_view(reinterpret_cast<const char*>(reply.data()), reply.size()));
  Agreement result;
  result.ok = theirs.at("ok").get<bool>();
  if (!result.ok) {
    result.status =
        theirs.at("status") == "error" ? results::Status::error : results::Status::skipped;
    result.reason = "peer: " + theirs.at("reason").get<std::string>();
  }
  return result;
}

std::vector<std::string> agree_sizes(bootstrap::Bootstrap& control, std::vector<std::string> mine) {
  const std::string text = json(mine).dump();
  const Bytes reply = control.exchange(std::as_bytes(std::span(text)), control.timeout());
  const auto theirs =
      results::parse_bounded_json(
          std::string_view(reinterpret_cast<const char*>(reply.data()), reply.size()))
          .get<std::vector<std::string>>();
  for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
    if (mine[i].empty() && !theirs[i].empty()) mine[i] = "peer: " + theirs[i];
  }
  return mine;
}

namespace {

/// The peer's handshake, read and checked to be a uniperf one of our
/// protocol before anything else is looked at.
json read_handshake(bootstrap::Bootstrap& control) {
  Bytes reply;
  try {
    reply = control.receive(control.timeout());
  } catch (const bootstrap::BootstrapError& e) {
    throw HandshakeError(std::string("handshake with the peer failed: ") + e.what());
  }
  json theirs;
  try {
    theirs = results::parse_bounded_json(
        std::string_view(reinterpret_cast<const char*>(reply.data()), reply.size()));
  } catch (const results::JsonTooDeep& e) {
    throw HandshakeError(std::string("the peer is not a uniperf process (its handshake is ") +
                         e.what() + ")");
  } catch (const json::exception&) {
    throw HandshakeError("the peer is not a uniperf process (unreadable handshake)");
  }
  if (!theirs.is_object() || !theirs["magic"].is_string() || theirs["magic"] != "uniperf")
    throw HandshakeError("the peer is not a uniperf process (unreadable handshake)");
  const json protocol = theirs.value("protocol", json());
  if (protocol != kProtocolVersion) {
    const json version = theirs.value("version", json("?"));
    throw HandshakeError("the peer speaks control protocol " + protocol.dump() + " (uniperf " +
                         (version.is_string() ? version.get<std::string>() : version.dump()) +
                         "), this side speaks " + std::to_string(kProtocolVersion) +
                         " (uniperf " UNIPERF_VERSION
                         "): run the same uniperf version on both hosts");
  }
  if (const json refused = theirs.value("refused", json()); refused.is_string())
    throw HandshakeError("the server refused the run: " + refused.get<std::string>());
  if (const json facts = theirs.value("provenance", json(nullptr));
      !facts.is_object() && !facts.is_null()) {
    throw HandshakeError("the peer is not a uniperf process (its provenance is not an object)");
  }
  return theirs;
}

std::string text_of(const json& object, const char* key) {
  const json value = object.is_object() ? object.value(key, json("?")) : json("?");
  return value.is_string() ? value.get<std::string>() : value.dump();
}

/// Same suite, trial counts and configs on both sides, or a message saying
/// which differs.
void check_same_run(const json& mine, const json& theirs, const model::SuiteSpec& suite) {
  const json their_suite = theirs.value("suite", json());
  if (their_suite.is_object() && their_suite.value("name", json()) == suite.name &&
      their_suite.value("hash", json()) == suite.content_hash &&
      their_suite.value("trials", json()) != mine["suite"]["trials"]) {
    throw HandshakeError(
        "the peer runs the same suite but measures its tests another number of times (trials "
        "per test: here " +
        mine["suite"]["trials"].dump() + ", there " + their_suite.value("trials", json()).dump() +
        "; 0 = run-forever): give both sides the same --trials and --run-infinitely");
  }
  if (their_suite != mine["suite"]) {
    throw HandshakeError(
        "the peer runs another suite: here '" + suite.name + "' (" +
        suite.content_hash.substr(0, 12) + "), there '" + text_of(their_suite, "name") + "' (" +
        text_of(their_suite, "hash").substr(0, 12) + "): give both sides the same suite file");
  }
  const json their_configs = theirs.value("configs", json());
  if (their_configs != mine["configs"]) {
    throw HandshakeError("the peer runs other configs: here " + mine["configs"].dump() +
                         ", there " + their_configs.dump() +
                         ": give both sides the same --config files in the same order");
  }
}

/// The wall clock in nanoseconds since the epoch, as records and traces
/// place their times on it.
std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Round trips of the clock measurement: the least of them bounds the
/// offset most tightly, and a few dozen find one that was not preempted.
constexpr int kClockRoundTrips = 32;

}  // namespace

json measure_wall_clock_offset(bootstrap::Bootstrap& control) {
  const auto timeout = control.timeout();
  if (control.rank() != 0) {
    // The responder answers each ping with its clock read at the ping's
    // arrival.
    for (int i = 0; i < kClockRoundTrips; ++i) {
      static_cast<void>(control.receive(timeout));
      const std::int64_t t1 = wall_ns();
      control.send(std::as_bytes(std::span(&t1, 1)));
    }
    return nullptr;
  }
  // NTP's estimate on the round trip with the least delay: the responder
  // read t1 somewhere between t0 and t2, so its clock minus ours is
  // t1 - (t0 + t2) / 2, give or take half that round trip.
  std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max(), offset = 0;
  for (int i = 0; i < kClockRoundTrips; ++i) {
    const std::int64_t t0 = wall_ns();
    control.send(std::as_bytes(std::span(&t0, 1)));
    const Bytes reply = control.receive(timeout);
    const std::int64_t t2 = wall_ns();
    if (reply.size() != sizeof(std::int64_t))
      throw bootstrap::BootstrapError("clock measurement: the peer's reply is not a clock reading");
    std::int64_t t1 = 0;
    std::memcpy(&t1, reply.data(), sizeof t1);
    if (t2 - t0 < best_rtt) {
      best_rtt = t2 - t0;
      offset = t1 - t0 - (t2 - t0) / 2;
    }
  }
  return {{"offset_ns", offset},
          {"uncertainty_ns", best_rtt / 2 + 1},  // +1: the halving's rounding
          {"round_trips", kClockRoundTrips}};
}

namespace {

/// This side's handshake message; the initiator's carries its offer.
json handshake_message(const model::SuiteSpec& suite, const std::vector<model::ConfigSpec>& configs,
                       const json& provenance, const json* overrides) {
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
  if (overrides) {
    json offered = {{"suite", {{"label", suite.file}, {"text", suite.source}}},
                    {"configs", json::array()},
                    {"overrides", *overrides}};
    for (const auto& c : configs) {
      // A file's absolute path: ${config_dir} then names the same directory
      // on a server whose install matches this one.
      std::error_code error;
      const std::string label =
          c.given_inline ? c.file : std::filesystem::absolute(c.file, error).string();
      offered["configs"].push_back(
          {{"label", label}, {"text", c.source}, {"inline", c.given_inline}});
    }
    mine["offer"] = std::move(offered);
  }
  return mine;
}

void send_handshake(bootstrap::Bootstrap& control, const json& message) {
  const std::string text = message.dump();
  try {
    control.send(std::as_bytes(std::span(text)));
  } catch (const bootstrap::BootstrapError& e) {
    throw HandshakeError(std::string("handshake with the peer failed: ") + e.what());
  }
}

/// Both handshakes exchanged: the checks, the clock, the heartbeat.
json finish_handshake(bootstrap::Bootstrap& control, const json& mine, const json& theirs,
                      const model::SuiteSpec& suite) {
  check_same_run(mine, theirs, suite);
  // Where the peer's wall clock stands against ours, so that times taken on
  // either side (traces, measured intervals) can be put on one timeline.
  json clock_offset;
  try {
    clock_offset = measure_wall_clock_offset(control);
  } catch (const bootstrap::BootstrapError& e) {
    throw bootstrap::BootstrapError(std::string("lost the peer while measuring its clock: ") +
                                    e.what());
  }
  // Only a peer of this run gets the heartbeat connection. It has shown it
  // is one, so losing it here is losing the peer (exit 3 on a listening
  // server too), not refusing a stranger (HandshakeError: keep waiting).
  try {
    control.open_heartbeat(control.timeout());
  } catch (const bootstrap::BootstrapError& e) {
    throw bootstrap::BootstrapError(
        std::string("lost the peer while opening the heartbeat connection: ") + e.what());
  }
  json facts = theirs.value("provenance", json(nullptr));
  if (facts.is_object() && !clock_offset.is_null()) facts["wall_clock"] = clock_offset;
  return facts;
}

/// A text of the offer, checked for its types (a peer's message is input).
Offer::Text offered_text(const json& entry, const char* what) {
  if (!entry.is_object() || !entry.value("label", json()).is_string() ||
      !entry.value("text", json()).is_string())
    throw HandshakeError(std::string("the client's offer has no readable ") + what);
  const json given_inline = entry.value("inline", json(false));
  return {entry["label"].get<std::string>(), entry["text"].get<std::string>(),
          given_inline.is_boolean() && given_inline.get<bool>()};
}

}  // namespace

// The initiator speaks first; the responder answers only a uniperf peer of
// its protocol, so whatever else connects to a listening port (a port scan,
// an HTTP probe) learns nothing about the host: no provenance goes out
// before the peer has identified itself.
json handshake(bootstrap::Bootstrap& control, const model::SuiteSpec& suite,
               const std::vector<model::ConfigSpec>& configs, const json& provenance,
               const json& overrides) {
  const bool initiator = control.rank() == 0;
  const json mine = handshake_message(suite, configs, provenance, initiator ? &overrides : nullptr);
  json theirs;
  if (initiator) {
    send_handshake(control, mine);
    theirs = read_handshake(control);
  } else {
    theirs = read_handshake(control);
    send_handshake(control, mine);  // a uniperf peer: a mismatch is reported on both sides alike
  }
  return finish_handshake(control, mine, theirs, suite);
}

Offer receive_offer(bootstrap::Bootstrap& control) {
  Offer offer;
  offer.handshake = read_handshake(control);
  const json offered = offer.handshake.value("offer", json());
  if (!offered.is_object() || !offered.value("configs", json()).is_array())
    throw HandshakeError("the client offers no suite to run (a uniperf without `serve`?)");
  offer.suite = offered_text(offered["suite"], "suite");
  for (const auto& config : offered["configs"])
    offer.configs.push_back(offered_text(config, "config"));
  if (offered.value("overrides", json()).is_object()) offer.overrides = offered["overrides"];
  return offer;
}

json answer_offer(bootstrap::Bootstrap& control, const Offer& offer, const model::SuiteSpec& suite,
                  const std::vector<model::ConfigSpec>& configs, const json& provenance) {
  const json mine = handshake_message(suite, configs, provenance, nullptr);
  send_handshake(control, mine);
  return finish_handshake(control, mine, offer.handshake, suite);
}

void refuse_offer(bootstrap::Bootstrap& control, const std::string& why) {
  send_handshake(control, {{"magic", "uniperf"},
                           {"protocol", kProtocolVersion},
                           {"version", UNIPERF_VERSION},
                           {"refused", why}});
}

}  // namespace uniperf::session
