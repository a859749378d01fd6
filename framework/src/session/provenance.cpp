#include "session/provenance.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/clock.hpp"

#ifndef UNIPERF_GIT_DESCRIBE
#define UNIPERF_GIT_DESCRIBE "unknown"
#endif

namespace uniperf::session {
namespace {

/// Past this the clock's calibration is worth a warning: 0.1%, the size of
/// the effects a careful comparison looks for.
constexpr double kClockErrorPpm = 1000;

using json = nlohmann::json;

/// The first line of a small /proc or /sys file, trimmed; "" when absent.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  // x86 says "model name", arm64 has no model name but "CPU part"; the first
  // of these is enough to tell machines apart.
  for (const char* key : {"model name", "Model", "cpu model", "Hardware"}) {
    in.clear();
    in.seekg(0);
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) != 0) continue;
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(" \t"));
      return value;
    }
  }
  return "unknown";
}

std::vector<int> affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

/// "0-3,8" for a sorted CPU list: short enough to read in a warning.
std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> cpus_of(const json& side) {
  std::vector<int> cpus;
  if (side.contains("affinity") && side["affinity"].is_array()) {
    for (const auto& c : side["affinity"]) cpus.push_back(c.get<int>());
  }
  return cpus;
}

}  // namespace

json build_info() {
  return {{"version", UNIPERF_VERSION}, {"git", UNIPERF_GIT_DESCRIBE}};
}

json provenance() {
  json facts;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  facts["host"] = host;
  utsname u{};
  if (::uname(&u) == 0) {
    facts["kernel"] = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  } else {
    facts["kernel"] = "unknown";
  }
  facts["cpu_model"] = cpu_model();
  facts["online_cpus"] = ::sysconf(_SC_NPROCESSORS_ONLN);
  const std::vector<int> cpus = affinity();
  facts["affinity"] = cpus;
  json governors = json::object();
  for (const int cpu : cpus) {
    const std::string governor =
        first_line(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu));
    governors[std::to_string(cpu)] = governor.empty() ? "unknown" : governor;
  }
  facts["governors"] = std::move(governors);
  const std::string clocksource =
      first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  facts["clocksource"] = clocksource.empty() ? "unknown" : clocksource;
  const auto& clock = engine::clock_info();
  facts["clock"] = {{"source", clock.source},
                    {"ghz", clock.ticks_per_us / 1e3},
                    {"invariant", clock.invariant},
                    {"calibration_error_ppm", clock.calibration_error_ppm},
                    {"read_ns", clock.read_ns}};
  double load = -1;
  std::istringstream(first_line("/proc/loadavg")) >> load;
  facts["loadavg_1m"] = load;
  long hugepages = -1;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("HugePages_Total:", 0) == 0) {
      hugepages = std::stol(line.substr(std::strlen("HugePages_Total:")));
    }
  }
  facts["hugepages_total"] = hugepages;
  return facts;
}

std::optional<int> device_numa_node(const std::string& device) {
  std::string word;
  auto lookup = [](const std::string& name) -> std::optional<int> {
    if (name.empty() || name == "." || name == "..") return std::nullopt;
    for (const char* klass : {"/sys/class/infiniband/", "/sys/class/net/"}) {
      const std::string text = first_line(klass + name + "/device/numa_node");
      if (text.empty()) continue;
      try {
        const int node = std::stoi(text);
        if (node >= 0) return node;
      } catch (const std::exception&) {
      }
    }
    return std::nullopt;
  };
  for (const char c : device + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') {
      word += c;
      continue;
    }
    if (auto node = lookup(word)) return node;
    word.clear();
  }
  return std::nullopt;
}

void pin_to_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    throw std::runtime_error(fmt::format("--cpu {}: no such CPU", cpu));
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) {
    throw std::runtime_error(fmt::format("cannot pin to CPU {}: {}", cpu, std::strerror(errno)));
  }
}

bool configs_want_hugepages(const std::vector<model::ConfigSpec>& configs) {
  auto asks = [](const std::string& name, const std::string& value) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (upper.find("HUGE") == std::string::npos) return false;
    std::string lower = value;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return !(lower.empty() || lower == "0" || lower == "n" || lower == "no" || lower == "false" ||
             lower == "off");
  };
  for (const auto& config : configs) {
    for (const auto& [name, value] : config.options)
      if (asks(name, value)) return true;
    for (const auto& [name, value] : config.environment)
      if (asks(name, value)) return true;
  }
  return false;
}

std::vector<std::string> unsound_clocks(const json& local, const json& peer) {
  std::vector<std::string> unsound;
  const auto check = [&](const json& facts, const std::string& side) {
    if (!facts.is_object()) return;
    const json clock = facts.value("clock", json::object());
    if (clock.is_object() && clock.value("source", "") == "tsc" &&
        !clock.value("invariant", true)) {
      unsound.push_back(fmt::format(
          "{}: the TSC is not invariant (no constant_tsc and nonstop_tsc in /proc/cpuinfo): its "
          "rate may follow the CPU's frequency or stop in idle states, so times read from it "
          "are unsound",
          side));
    }
  };
  // One machine (a local pair) has one TSC.
  const bool two_hosts =
      peer.is_object() && local.is_object() && peer.value("host", "") != local.value("host", "");
  check(local, two_hosts ? "initiator (" + local.value("host", "?") + ")" : "initiator");
  if (two_hosts) check(peer, "responder (" + peer.value("host", "?") + ")");
  return unsound;
}

std::vector<std::string> preflight(const json& local, const json& peer,
                                   const PreflightNeeds& needs) {
  std::vector<std::string> warnings;
  const bool two_hosts = !peer.is_null() && peer.value("host", "") != local.value("host", "");
  auto check_side = [&](const json& facts, const std::string& side, const std::string& pin_advice) {
    if (facts.is_null()) return;
    std::vector<std::string> scaling;
    const json governors = facts.value("governors", json::object());
    for (const auto& [cpu, governor] : governors.items()) {
      const auto g = governor.get<std::string>();
      if (g != "performance" && g != "unknown") scaling.push_back(cpu + ":" + g);
    }
    if (!scaling.empty()) {
      std::string list;
      for (std::size_t i = 0; i < scaling.size() && i < 4; ++i)
        list += (i ? ", " : "") + scaling[i];
      if (scaling.size() > 4) list += fmt::format(" and {} more", scaling.size() - 4);
      warnings.push_back(
          fmt::format("{}: frequency scaling is on (governor {}); set the performance governor "
                      "(cpupower frequency-set -g performance) for stable numbers",
                      side, list));
    }
    const auto cpus = cpus_of(facts);
    const long online = facts.value("online_cpus", 0L);
    if (cpus.size() != 1) {
      warnings.push_back(
          fmt::format("{}: not pinned (may run on CPUs {}); {}", side, cpu_list(cpus), pin_advice));
    }
    const double load = facts.value("loadavg_1m", -1.0);
    if (online > 0 && load > 0.5 * static_cast<double>(online)) {
      warnings.push_back(fmt::format(
          "{}: the machine is busy (1-minute load average {:.2f} on {} CPUs): other work "
          "competes for CPUs and memory bandwidth",
          side, load, online));
    }
    // The engine's clock: every sample is a difference of two readings.
    const json clock = facts.value("clock", json::object());
    if (const double ppm = clock.value("calibration_error_ppm", 0.0); ppm > kClockErrorPpm) {
      warnings.push_back(fmt::format(
          "{}: the clock's calibration strayed {:.0f} ppm from CLOCK_MONOTONIC_RAW over 20 ms "
          "(preempted while calibrating, or an unsteady TSC): times may be off by as much",
          side, ppm));
    }
    if (needs.hugepages && facts.value("hugepages_total", -1L) == 0) {
      warnings.push_back(
          fmt::format("{}: a config asks for huge pages but none are reserved (HugePages_Total 0); "
                      "reserve some with sysctl vm.nr_hugepages=N",
                      side));
    }
  };
  for (std::string& unsound : unsound_clocks(local, peer)) warnings.push_back(std::move(unsound));
  // The same machine seen twice (a local pair) is checked once for the
  // machine-wide facts; its affinity is per process, so both are checked.
  check_side(local, two_hosts ? "initiator (" + local.value("host", "?") + ")" : "initiator",
             needs.pin_initiator);
  if (!peer.is_null()) {
    if (two_hosts) {
      check_side(
          peer, "responder (" + peer.value("host", "?") + ")",
          needs.pin_responder.empty() ? "pin it with --cpu N on the server" : needs.pin_responder);
    } else {
      const auto mine = cpus_of(local);
      const auto theirs = cpus_of(peer);
      if (theirs.size() != 1) {
        warnings.push_back(fmt::format(
            "responder: not pinned (may run on CPUs {}); {}", cpu_list(theirs),
            needs.pin_responder.empty() ? "pin it with --peer-cpu N" : needs.pin_responder));
      } else if (mine.size() == 1 && mine == theirs) {
        warnings.push_back(fmt::format(
            "initiator and responder are pinned to the same CPU {}: they take turns on one core",
            mine.front()));
      }
    }
  }
  return warnings;
}

}  // namespace uniperf::session
