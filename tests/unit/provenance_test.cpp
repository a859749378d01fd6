// Preflight warnings from hand-written facts, and this machine's own facts.
#include "session/provenance.hpp"

#include <gtest/gtest.h>

#include "results/record.hpp"

namespace uniperf::session {
namespace {

using json = nlohmann::json;

json quiet_machine(int cpu) {
  return {{"host", "a"},       {"online_cpus", 8},
          {"affinity", {cpu}}, {"governors", {{std::to_string(cpu), "performance"}}},
          {"loadavg_1m", 0.1}, {"hugepages_total", 0}};
}

bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(Preflight, QuietPinnedPerformanceMachineHasNoWarnings) {
  EXPECT_TRUE(preflight(quiet_machine(2), quiet_machine(3), {}).empty());
}

TEST(Preflight, FrequencyScalingIsWarnedWithTheGovernor) {
  json local = quiet_machine(2);
  local["governors"]["2"] = "powersave";
  const auto warnings = preflight(local, nullptr, {});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(mentions(warnings, "2:powersave"));
  local["governors"]["2"] = "unknown";  // no cpufreq (a VM): nothing to say
  EXPECT_TRUE(preflight(local, nullptr, {}).empty());
}

TEST(Preflight, UnpinnedAndSharedCpusAreWarned) {
  json local = quiet_machine(2);
  local["affinity"] = {0, 1, 2, 3};
  local["governors"] = {
      {"0", "performance"}, {"1", "performance"}, {"2", "performance"}, {"3", "performance"}};
  const auto unpinned = preflight(local, quiet_machine(5), {});
  ASSERT_EQ(unpinned.size(), 1u);
  EXPECT_TRUE(mentions(unpinned, "initiator: not pinned (may run on CPUs 0-3)"));
  const auto shared = preflight(quiet_machine(4), quiet_machine(4), {});
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_TRUE(mentions(shared, "same CPU 4"));
  json peer = quiet_machine(1);
  peer["affinity"] = {0, 1};
  EXPECT_TRUE(mentions(preflight(quiet_machine(4), peer, {}), "--peer-cpu"));
  // A launched job's ranks past 1: what places them instead of the flags.
  const auto placed = preflight(
      local, peer,
      {.pin_initiator = "placed by the launcher", .pin_responder = "placed by the launcher too"});
  EXPECT_TRUE(
      mentions(placed, "initiator: not pinned (may run on CPUs 0-3); placed by the launcher"));
  EXPECT_TRUE(
      mentions(placed, "responder: not pinned (may run on CPUs 0-1); placed by the launcher too"));
  EXPECT_FALSE(mentions(placed, "--cpu"));
  // Another host's responder is pinned there.
  peer["host"] = "b";
  EXPECT_TRUE(mentions(preflight(quiet_machine(4), peer, {}), "pin it with --cpu N on the server"));
}

TEST(Preflight, AnUnsoundClockIsWarned) {
  json local = quiet_machine(1);
  local["clock"] = {{"source", "tsc"}, {"invariant", true}, {"calibration_error_ppm", 40}};
  EXPECT_TRUE(preflight(local, nullptr, {}).empty());
  local["clock"]["invariant"] = false;
  const auto variant = preflight(local, nullptr, {});
  ASSERT_EQ(variant.size(), 1u);
  EXPECT_TRUE(mentions(variant, "initiator: the TSC is not invariant"));
  local["clock"] = {{"source", "tsc"}, {"invariant", true}, {"calibration_error_ppm", 2500}};
  // A server's clock times its side of a bidirectional stream. (A local
  // pair's responder shares the machine's facts with the initiator.)
  json peer = quiet_machine(2);
  peer["host"] = "b";
  peer["clock"] = local["clock"];
  const auto strayed = preflight(quiet_machine(1), peer, {});
  ASSERT_EQ(strayed.size(), 1u);
  EXPECT_TRUE(mentions(strayed, "responder (b): the clock's calibration strayed 2500 ppm"));
  // steady_clock is the kernel's own: nothing to say of invariance.
  local["clock"] = {{"source", "steady_clock"}, {"invariant", false}};
  EXPECT_TRUE(preflight(local, nullptr, {}).empty());
}

TEST(Preflight, UnsoundClocksNameEachMachineOnce) {
  json a = quiet_machine(1);
  a["host"] = "a";
  a["clock"] = {{"source", "tsc"}, {"invariant", false}};
  json b = quiet_machine(2);
  b["host"] = "b";
  b["clock"] = a["clock"];
  const auto both = unsound_clocks(a, b);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].rfind("initiator (a): the TSC is not invariant", 0), 0u) << both[0];
  EXPECT_EQ(both[1].rfind("responder (b): the TSC is not invariant", 0), 0u) << both[1];
  // A local pair: one machine, one TSC.
  b["host"] = "a";
  const auto one = unsound_clocks(a, b);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].rfind("initiator: the TSC", 0), 0u) << one[0];
  // Another host's invariant TSC, or none known yet (before a handshake).
  a["clock"]["invariant"] = true;
  b["host"] = "b";
  EXPECT_EQ(unsound_clocks(a, b).size(), 1u);
  b["clock"]["invariant"] = true;
  EXPECT_TRUE(unsound_clocks(a, b).empty());
  EXPECT_TRUE(unsound_clocks(a, nullptr).empty());
  // The kernel's steady_clock is not a TSC.
  a["clock"] = {{"source", "steady_clock"}, {"invariant", false}};
  EXPECT_TRUE(unsound_clocks(a, nullptr).empty());
}

TEST(Preflight, BusyMachineAndMissingHugePages) {
  json local = quiet_machine(1);
  local["loadavg_1m"] = 6.5;
  EXPECT_TRUE(mentions(preflight(local, nullptr, {}), "busy (1-minute load average 6.50 on 8"));
  EXPECT_TRUE(preflight(quiet_machine(1), nullptr, {.hugepages = false}).empty());
  EXPECT_TRUE(mentions(preflight(quiet_machine(1), nullptr, {.hugepages = true}), "huge pages"));
}

TEST(Preflight, TwoHostsCheckTheResponderOnItsOwn) {
  json peer = quiet_machine(1);
  peer["host"] = "b";
  peer["governors"]["1"] = "ondemand";
  EXPECT_TRUE(mentions(preflight(quiet_machine(1), peer, {}), "responder (b): frequency scaling"));
}

TEST(Preflight, HugePageRequestsAreFoundInOptionsAndEnvironment) {
  model::ConfigSpec config;
  EXPECT_FALSE(configs_want_hugepages({config}));
  config.environment["UCX_MM_HUGETLB_MODE"] = "n";
  EXPECT_FALSE(configs_want_hugepages({config}));
  config.environment["UCX_MM_HUGETLB_MODE"] = "y";
  EXPECT_TRUE(configs_want_hugepages({config}));
}

TEST(Provenance, DescribesThisProcess) {
  const json facts = provenance();
  EXPECT_FALSE(facts.at("host").get<std::string>().empty());
  EXPECT_FALSE(facts.at("affinity").empty());
  EXPECT_EQ(facts.at("governors").size(), facts.at("affinity").size());
  EXPECT_GT(facts.at("clock").at("ghz").get<double>(), 0);
  EXPECT_NE(build_info().at("git").get<std::string>(), "");
}

TEST(Provenance, DeviceNumaNodeUnknownForVirtualDevices) {
  // Loopback and shared memory have no device/numa_node: unknown, not 0.
  EXPECT_FALSE(device_numa_node("").has_value());
  EXPECT_FALSE(device_numa_node("lo").has_value());
  EXPECT_FALSE(device_numa_node("tcp,self (posix, sysv) ../..").has_value());
  results::Record r;
  EXPECT_TRUE(results::to_json(r)["plugin"]["numa_node"].is_null());
  r.device_numa_node = 1;
  EXPECT_EQ(results::record_from_json(results::to_json(r)).device_numa_node, 1);
}

TEST(Provenance, RecordRoundTripsProvenanceAndWarnings) {
  results::Record r;
  r.provenance = {{"initiator", quiet_machine(1)}};
  r.warnings = {"busy"};
  const results::Record back = results::record_from_json(results::to_json(r));
  EXPECT_EQ(back.provenance, r.provenance);
  EXPECT_EQ(back.warnings, r.warnings);
  EXPECT_EQ(back.schema_minor, results::kSchemaMinor);
  json old = results::to_json(r);  // a 1.0 record: no minor, no provenance
  old.erase("schema_minor");
  old.erase("provenance");
  old.erase("warnings");
  const results::Record read = results::record_from_json(old);
  EXPECT_EQ(read.schema_minor, 0);
  EXPECT_TRUE(read.warnings.empty());
}

}  // namespace
}  // namespace uniperf::session
