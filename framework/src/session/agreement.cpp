#include "session/agreement.hpp"

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

/// The checks of handshake() on the peer's message; json::exception where
/// a field has another type than a uniperf peer sends.
void check_handshake(json& theirs, const json& mine, const model::SuiteSpec& suite) {
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
  const json& their_suite = theirs["suite"];
  if (their_suite.is_object() && their_suite.value("name", "") == suite.name &&
      their_suite.value("hash", "") == suite.content_hash &&
      their_suite.value("trials", json()) != mine.at("suite").at("trials")) {
    throw HandshakeError(
        "the peer runs the same suite but measures its tests another number of times (trials "
        "per test: here " +
        mine.at("suite").at("trials").dump() + ", there " +
        their_suite.value("trials", json()).dump() +
        "; 0 = run-forever): give both sides the same --trials and --run-infinitely");
  }
  if (theirs["suite"] != mine.at("suite")) {
    throw HandshakeError("the peer runs another suite: here '" + suite.name + "' (" +
                         suite.content_hash.substr(0, 12) + "), there '" +
                         theirs["suite"].value("name", "?") + "' (" +
                         theirs["suite"].value("hash", "?").substr(0, 12) +
                         "): give both sides the same suite file");
  }
  if (theirs["configs"] != mine.at("configs")) {
    throw HandshakeError("the peer runs other configs: here " + mine.at("configs").dump() +
                         ", there " + theirs["configs"].dump() +
                         ": give both sides the same --config files in the same order");
  }
  if (const json provenance = theirs.value("provenance", json(nullptr));
      !provenance.is_object() && !provenance.is_null()) {
    throw HandshakeError("the peer is not a uniperf process (its provenance is not an object)");
  }
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
    theirs = results::parse_bounded_json(
        std::string_view(reinterpret_cast<const char*>(reply.data()), reply.size()));
  } catch (const results::JsonTooDeep& e) {
    throw HandshakeError(std::string("the peer is not a uniperf process (its handshake is ") +
                         e.what() + ")");
  } catch (const json::exception&) {
    throw HandshakeError("the peer is not a uniperf process (unreadable handshake)");
  }
  // Valid JSON of another shape (a number, a list, a field of another type)
  // is no handshake either: the library's type errors say so below.
  try {
    check_handshake(theirs, mine, suite);
  } catch (const json::exception& e) {
    throw HandshakeError(std::string("the peer is not a uniperf process (unexpected handshake: ") +
                         e.what() + ")");
  }
  return theirs.value("provenance", json(nullptr));
}

}  // namespace uniperf::session
