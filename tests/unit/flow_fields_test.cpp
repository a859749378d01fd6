// The knob tables (model/flow_fields.hpp) against every reader and writer
// that walks them: each flow knob set in a suite reaches the model, the
// record's JSON and back, the CSV and the one-off command line; each
// run-length knob round-trips through the record.
#include "model/flow_fields.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>

#include "report/csv_reporter.hpp"
#include "results/record.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using model::FieldKind;
using model::FlowField;
using model::FlowSpec;

/// A bandwidth send test, with one key of its first flow set (or
/// replaced): every knob may differ from its default there without breaking
/// another. A second, plain flow beside it makes `role: load` valid.
model::TestSpec bandwidth_test(const std::string& key = "", const std::string& value = "") {
  if (key.empty())
    return suite::parse_test(YAML::Load("{name: t, op: send, pattern: bandwidth}"), "t.yaml");
  YAML::Node node = YAML::Load(
      "{name: t, flows: [{op: send, pattern: bandwidth}, {op: send, pattern: bandwidth}]}");
  // A latency knob is set on a latency flow (a stream refuses it).
  if (key == "latency_gap" || key == "keep_samples") node["flows"][0]["pattern"] = "latency";
  // A pipeline of sends copies its fragments into place.
  if (key == "fragment") node["flows"][0]["delivery"] = "copy";
  // A target watches what a write stream lands.
  if (key == "target_watch") node["flows"][0]["op"] = "write";
  node["flows"][0][key] = value;
  return suite::parse_test(node, "t.yaml");
}

/// A valid value of `field` that differs from what the test resolves to
/// without it.
std::string other_value(const FlowField& field, const FlowSpec& baseline) {
  const std::string current = field.text(baseline);
  switch (field.kind) {
    case FieldKind::count:
      return current == "2" ? "3" : "2";
    case FieldKind::flag:
      return current == "true" ? "false" : "true";
    case FieldKind::fraction:
    case FieldKind::seconds:
      return current == "0.5" ? "0.25" : "0.5";
    case FieldKind::rate:
      return current == "2Gb/s" ? "250K/s" : "2Gb/s";
    case FieldKind::choice:
      for (const auto name : field.choices()) {
        if (name != current) return std::string(name);
      }
  }
  ADD_FAILURE() << field.name << " has no second value";
  return current;
}

TEST(FlowFields, NamesAreUniqueAndChoicesNameEveryEnumValue) {
  for (const FlowField& field : model::kFlowFields) {
    SCOPED_TRACE(std::string(field.name));
    EXPECT_EQ(std::count_if(std::begin(model::kFlowFields), std::end(model::kFlowFields),
                            [&](const FlowField& f) { return f.name == field.name; }),
              1);
    EXPECT_EQ(model::find_flow_field(field.name), &field);
    for (const auto name : field.choices()) {
      EXPECT_NE(name, "unknown");
      FlowSpec flow;
      ASSERT_TRUE(field.set_text(flow, name));
      EXPECT_EQ(field.text(flow), name);
    }
    FlowSpec flow;
    EXPECT_FALSE(field.set_text(flow, "not-a-value"));
  }
}

TEST(FlowFields, EveryKnobRoundTripsFromYamlThroughTheRecord) {
  const FlowSpec baseline = bandwidth_test().flows.front();
  for (const FlowField& field : model::kFlowFields) {
    SCOPED_TRACE(std::string(field.name));
    const std::string value = other_value(field, baseline);
    const model::TestSpec test = bandwidth_test(std::string(field.name), value);
    const FlowSpec& parsed = test.flows.front();
    EXPECT_EQ(field.text(parsed), value) << "the suite reader ignores it";

    results::Record record;
    record.flow = parsed;
    record.duration = test.duration;
    const nlohmann::json j = results::to_json(record);
    EXPECT_TRUE(j.at("params").contains(std::string(field.name)));
    const results::Record back = results::record_from_json(nlohmann::json::parse(j.dump()));
    for (const FlowField& each : model::kFlowFields) {
      EXPECT_EQ(each.text(back.flow), each.text(parsed)) << "record loses " << each.name;
    }
  }
}

TEST(FlowFields, BuiltInDefaultsAreFlowSpecsOwn) {
  // A latency test with nothing but its op: every knob that is neither
  // required nor derived takes the value of a default FlowSpec.
  const model::TestSpec test = suite::parse_test(YAML::Load("{name: t, op: send}"), "t.yaml");
  for (const FlowField& field : model::kFlowFields) {
    if (field.required || field.derived) continue;
    EXPECT_EQ(field.text(test.flows.front()), field.default_text()) << field.name;
  }
}

TEST(FlowFields, EveryKnobIsACsvColumnHoldingItsText) {
  const auto& columns = report::csv_columns();
  const auto last_of_first_release = std::find(columns.begin(), columns.end(), "flows");
  for (const FlowField& field : model::kFlowFields) {
    EXPECT_EQ(std::count(columns.begin(), columns.end(), field.name), 1) << field.name;
    // Columns are only ever appended: a knob newer than the CSV goes last,
    // one of record 1.9 or later after every column of 1.8.
    const auto at = std::find(columns.begin(), columns.end(), field.name);
    EXPECT_EQ(at > last_of_first_release,
              field.csv == model::CsvColumn::appended || field.csv == model::CsvColumn::after_1_8)
        << field.name;
    EXPECT_EQ(at > std::find(columns.begin(), columns.end(), "MiB_per_s"),
              field.csv == model::CsvColumn::after_1_8)
        << field.name;
  }
  for (const model::RunField& field : model::kRunFields) {
    EXPECT_EQ(std::count(columns.begin(), columns.end(), field.record_key), field.in_csv ? 1 : 0)
        << field.record_key;
  }
}

TEST(FlowFields, AKnobsFlagCarriesItsValueOrItsSwitch) {
  for (const FlowField& field : model::kFlowFields) {
    if (!field.cli.sets.empty()) {
      FlowSpec flow;
      EXPECT_TRUE(field.set_text(flow, field.cli.sets)) << field.name << " switch sets a bad value";
    }
  }
}

TEST(RunFields, EveryRunKnobRoundTripsThroughTheRecord) {
  results::Record record;
  record.duration = {.iterations = 0,
                     .seconds = 2.5,
                     .margin = 0.25,
                     .warmup_iterations = 17,
                     .trials = 3,
                     .forever = true};
  const nlohmann::json j = results::to_json(record);
  for (const model::RunField& field : model::kRunFields) {
    EXPECT_TRUE(j.at("params").contains(std::string(field.record_key))) << field.record_key;
  }
  const results::Record back = results::record_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.duration.iterations, 0u);
  EXPECT_EQ(back.duration.seconds, 2.5);
  EXPECT_EQ(back.duration.margin, 0.25);
  EXPECT_EQ(back.duration.warmup_iterations, 17u);
  EXPECT_EQ(back.duration.trials, 3u);
  EXPECT_TRUE(back.duration.forever);
}

TEST(RunFields, EverySuiteKeyIsReadByTheSuite) {
  const model::TestSpec test = suite::parse_test(
      YAML::Load("{name: t, op: send, duration: 3s, margin: 1s, warmup: 9, trials: 4}"), "t.yaml");
  EXPECT_EQ(test.duration.seconds, 3);
  EXPECT_EQ(test.duration.margin, 1);
  EXPECT_EQ(test.duration.warmup_iterations, 9u);
  EXPECT_EQ(test.duration.trials, 4u);
  EXPECT_EQ(suite::parse_test(YAML::Load("{name: t, op: send, iterations: 5}"), "t.yaml")
                .duration.iterations,
            5u);
}

// A rate names its unit: bits (b/s) or messages (/s) per second, with a
// decimal prefix; a bare number is refused (perftest reads it as Gb/s).
TEST(FlowFields, ARateReadsItsUnitAndPrintsBackTheSame) {
  const auto rate = [](std::string_view text) { return model::parse_rate(text); };
  EXPECT_EQ(rate("10Gb/s"), (model::Rate{.per_second = 1e10, .bits = true}));
  EXPECT_EQ(rate("0.1Gb/s"), (model::Rate{.per_second = 1e8, .bits = true}));
  EXPECT_EQ(rate("500Mb/s"), (model::Rate{.per_second = 5e8, .bits = true}));
  EXPECT_EQ(rate("100K/s"), (model::Rate{.per_second = 1e5, .bits = false}));
  EXPECT_EQ(rate("100k/s"), (model::Rate{.per_second = 1e5, .bits = false}));
  EXPECT_EQ(rate("5000/s"), (model::Rate{.per_second = 5000, .bits = false}));
  EXPECT_EQ(rate("0"), model::Rate{});
  for (const char* bad : {"", "10", "10G", "Gb/s", "/s", "-1K/s", "0K/s", "10Tb/s", "1e999/s"})
    EXPECT_FALSE(rate(bad)) << bad;
  for (const char* text : {"10Gb/s", "2.5Gb/s", "500Mb/s", "250K/s", "2M/s", "999/s", "0"})
    EXPECT_EQ(model::rate_text(*rate(text)), text);
  EXPECT_EQ(model::rate_text(*rate("5000/s")), "5K/s");
}

}  // namespace
}  // namespace uniperf
