// Input built to hurt the readers: nesting deep enough to overflow a
// recursive walk, YAML aliases that multiply what a short file says
// ("billion laughs"), JSON nested a million levels. Each must fail with a
// message naming the file (or the peer), quickly and in bounded memory, not
// with a stack overflow or a runaway allocation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "results/bounded_json.hpp"
#include "results/jsonl_writer.hpp"
#include "session/agreement.hpp"
#include "session/session.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using ::testing::HasSubstr;

std::string repeat(const std::string& piece, std::size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (std::size_t i = 0; i < times; ++i) out += piece;
  return out;
}

/// The message of the SpecError that `parse` throws; fails the test if none.
template <typename Parse>
std::string spec_error(Parse parse) {
  try {
    parse();
  } catch (const suite::SpecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SpecError";
  return "";
}

// ---------------------------------------------------------------- YAML

TEST(HostileYaml, DeepNestingIsAnErrorNamingTheFile) {
  for (const std::string& nested :
       {repeat("[", 100'000) + repeat("]", 100'000),
        repeat("{a: ", 100'000) + "1" + repeat("}", 100'000), repeat("- ", 50'000) + "x"}) {
    const std::string suite =
        "suite: deep\ntests:\n  - name: t\n    op: send\n    sizes: " + nested;
    EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/deep.yaml"); }),
                HasSubstr("suites/deep.yaml:"));
    const std::string config = "plugin: tcp\noptions: " + nested;
    EXPECT_THAT(spec_error([&] { suite::parse_config(config, "configs/deep.yaml"); }),
                HasSubstr("configs/deep.yaml:"));
  }
}

/// The classic, as one flow sequence: ten aliases of ten aliases ... of one
/// string, 10^9 strings if anything expanded the last one.
std::string laughs() {
  std::string out = "[&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]";
  for (int level = 1; level < 10; ++level) {
    out += ", &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) out += (i ? ", *l" : "*l") + std::to_string(level - 1);
    out += "]";
  }
  return out + "]";
}

TEST(HostileYaml, BillionLaughsFailQuicklyNamingTheFile) {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& key : std::vector<std::string>{"sizes", "flows", "op", "window"}) {
    const std::string suite =
        "suite: lol\ntests:\n  - name: t\n    op: send\n    " + key + ": " + laughs() + "\n";
    EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/lol.yaml"); }),
                HasSubstr("suites/lol.yaml:"))
        << key;
  }
  for (const std::string& where :
       std::vector<std::string>{"tests", "defaults", "description", "tolerances"}) {
    const std::string suite = "suite: lol\n" + where + ": " + laughs() + "\n";
    EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/lol.yaml"); }),
                HasSubstr("suites/lol.yaml:"))
        << where;
  }
  for (const std::string& where : std::vector<std::string>{"options", "env", "plugin", "name"}) {
    const std::string config =
        (where == "plugin" ? "" : "plugin: tcp\n") + where + ": " + laughs() + "\n";
    EXPECT_THAT(spec_error([&] { suite::parse_config(config, "configs/lol.yaml"); }),
                HasSubstr("configs/lol.yaml:"))
        << where;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(HostileYaml, AnAliasOfItselfIsAnError) {
  for (const std::string& key :
       std::vector<std::string>{"sizes: &s [*s]", "flows: &f [*f]", "flows: &f [{op: *f}]"}) {
    const std::string suite = "suite: loop\ntests:\n  - name: t\n    op: send\n    " + key + "\n";
    EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/loop.yaml"); }),
                HasSubstr("suites/loop.yaml:"))
        << key;
  }
}

/// Flat aliases multiply too: one 4096-size range named once and repeated
/// a few thousand times would be tens of millions of sizes from 20 KB.
TEST(HostileYaml, AliasedSizeRangesAreBounded) {
  const std::string suite =
      "suite: lol\ntests:\n  - name: t\n    op: send\n    sizes: [&r '1..4K +1'" +
      repeat(", *r", 5000) + "]\n";
  EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/lol.yaml"); }),
              HasSubstr("suites/lol.yaml:5: sizes: more than 4096 sizes"));
}

TEST(HostileYaml, AliasedFlowsAreBounded) {
  const std::string suite =
      "suite: lol\ntests:\n  - name: t\n    flows: [&f {op: send}" + repeat(", *f", 5000) + "]\n";
  EXPECT_THAT(spec_error([&] { suite::parse_suite(suite, "suites/lol.yaml"); }),
              HasSubstr("suites/lol.yaml:4: flows: more than 256 flows"));
}

// ---------------------------------------------------------------- JSON

TEST(HostileJson, DeepNestingIsRefusedAtTheParse) {
  EXPECT_NO_THROW(results::parse_bounded_json(repeat("[", 64) + repeat("]", 64)));
  EXPECT_THROW(results::parse_bounded_json(repeat("[", 65) + repeat("]", 65)),
               results::JsonTooDeep);
  EXPECT_THROW(results::parse_bounded_json(repeat("{\"a\":", 65) + "1" + repeat("}", 65)),
               results::JsonTooDeep);
  EXPECT_THROW(results::parse_bounded_json(repeat("[", 1'000'000)), results::JsonTooDeep);
}

/// The first record of tests/report/sample-results.jsonl with `provenance`
/// (copied into the record) nested a million levels.
std::string deep_record() {
  std::ifstream in(UNIPERF_SOURCE_DIR "/tests/report/sample-results.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.back(), '}');
  line.pop_back();
  return line + ",\"provenance\":{\"deep\":" + repeat("[", 1'000'000) + repeat("]", 1'000'000) +
         "}}";
}

TEST(HostileJson, ADeepResultFileIsAnErrorNamingFileAndLine) {
  std::istringstream in("\n" + deep_record() + "\n");
  try {
    results::read_jsonl(in, "deep.jsonl");
    ADD_FAILURE() << "read";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("deep.jsonl:2: JSON nested deeper than 64 levels"));
  }
}

/// A control channel whose peer answers with `reply`.
class ScriptedPeer final : public bootstrap::Bootstrap {
 public:
  explicit ScriptedPeer(const std::string& reply)
      : reply_(reinterpret_cast<const std::byte*>(reply.data()),
               reinterpret_cast<const std::byte*>(reply.data()) + reply.size()) {}
  int rank() const override { return 0; }
  void send(std::span<const std::byte>) override {}
  Bytes receive(std::chrono::milliseconds) override { return reply_; }
  bool message_ready() override { return true; }

 private:
  Bytes reply_;
};

std::string handshake_error(const std::string& reply) {
  model::SuiteSpec suite;
  suite.name = "quick";
  suite.content_hash = "0123456789abcdef";
  suite.tests.emplace_back().name = "t";
  model::ConfigSpec config;
  config.name = "tcp";
  ScriptedPeer peer(reply);
  try {
    session::handshake(peer, suite, {config});
  } catch (const session::HandshakeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no HandshakeError for " << reply.substr(0, 200);
  return "";
}

TEST(HostileJson, ADeepHandshakeIsRefused) {
  // Everything but the deep field as handshake_error's side sends it, so
  // the reader gets as far as comparing, printing or keeping that field.
  const std::string deep = repeat("[", 500'000) + repeat("]", 500'000);
  const std::string fields =
      "\"magic\":\"uniperf\",\"protocol\":" + std::to_string(session::kProtocolVersion) +
      ",\"suite\":{\"name\":\"quick\",\"hash\":\"0123456789abcdef\",\"trials\":[1]}";
  for (const std::string& field : std::vector<std::string>{"configs", "provenance"}) {
    EXPECT_THAT(handshake_error("{" + fields + ",\"" + field + "\":" + deep + "}"),
                HasSubstr("nested deeper than 64 levels"))
        << field;
  }
}

/// A uniperf of another control protocol (4: before the heartbeat
/// connection) is refused by version, before anything else is exchanged.
TEST(HostileJson, APeerOfAnotherProtocolIsRefusedByVersion) {
  const std::string older = std::to_string(session::kProtocolVersion - 1);
  EXPECT_THAT(handshake_error("{\"magic\":\"uniperf\",\"protocol\":" + older +
                              ",\"version\":\"0.0.9\",\"suite\":{\"name\":\"quick\"}}"),
              HasSubstr("the peer speaks control protocol " + older +
                        " (uniperf 0.0.9), this "
                        "side speaks " +
                        std::to_string(session::kProtocolVersion)));
}

/// Valid JSON of the wrong shape is "not a uniperf handshake", not a
/// library's type error.
TEST(HostileJson, AHandshakeOfTheWrongShapeIsAHandshakeError) {
  const std::string protocol = std::to_string(session::kProtocolVersion);
  for (const std::string& reply : std::vector<std::string>{
           "1", "[]", "\"uniperf\"", "{\"magic\":1}", "{\"magic\":\"uniperf\",\"protocol\":\"3\"}",
           "{\"magic\":\"uniperf\",\"protocol\":" + protocol + ",\"suite\":[]}",
           "{\"magic\":\"uniperf\",\"protocol\":" + protocol + ",\"suite\":{\"name\":1}}",
           "{\"magic\":\"uniperf\",\"protocol\":" + protocol + ",\"version\":[]}"}) {
    EXPECT_THAT(handshake_error(reply), HasSubstr("peer")) << reply;
  }
}

/// A bare server (`uniperf serve`) builds its run from the client's offer:
/// an offer of the wrong shape is refused by name, and a server's refusal
/// reaches the client as "the server refused the run: WHY".
TEST(HostileJson, AnOfferOfTheWrongShapeIsRefusedAndARefusalIsSaid) {
  const std::string head =
      "{\"magic\":\"uniperf\",\"protocol\":" + std::to_string(session::kProtocolVersion);
  const auto offer_error = [](const std::string& message) -> std::string {
    ScriptedPeer peer(message);
    try {
      session::receive_offer(peer);
    } catch (const session::HandshakeError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no HandshakeError for " << message;
    return "";
  };
  EXPECT_THAT(offer_error(head + "}"), HasSubstr("offers no suite"));
  EXPECT_THAT(offer_error(head + ",\"offer\":[]}"), HasSubstr("offers no suite"));
  EXPECT_THAT(offer_error(head + ",\"offer\":{\"configs\":[],\"suite\":{\"text\":1}}}"),
              HasSubstr("no readable suite"));
  EXPECT_THAT(offer_error(head + ",\"offer\":{\"configs\":[5],\"suite\":{\"label\":\"s\","
                                 "\"text\":\"t\"}}}"),
              HasSubstr("no readable config"));
  ScriptedPeer good(head +
                    ",\"offer\":{\"configs\":[{\"label\":\"-c\",\"text\":\"tcp\","
                    "\"inline\":true}],\"suite\":{\"label\":\"s.yaml\",\"text\":\"x\"},"
                    "\"overrides\":{\"trials\":3}}}");
  const session::Offer offer = session::receive_offer(good);
  EXPECT_EQ(offer.suite.label, "s.yaml");
  ASSERT_EQ(offer.configs.size(), 1u);
  EXPECT_TRUE(offer.configs[0].given_inline);
  EXPECT_EQ(offer.overrides.at("trials"), 3);

  EXPECT_THAT(handshake_error(head + ",\"refused\":\"busy: serving h1\"}"),
              HasSubstr("the server refused the run: busy: serving h1"));
}

}  // namespace
}  // namespace uniperf
