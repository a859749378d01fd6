// Where a result came from, and what about that place can skew it.
// provenance() describes this process's side of a run (host, kernel, CPU,
// governors, affinity, clock); the two sides swap theirs in the handshake, so
// every record carries both. preflight() turns those facts into warnings that
// are printed once and stored in every record (`warnings`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/suite_spec.hpp"

namespace uniperf::session {

/// This side's facts (see docs/results.md, "provenance"): host, kernel,
/// cpu_model, online_cpus, affinity (the CPUs this process may run on),
/// governors (per CPU in `affinity`; "unknown" where cpufreq is absent),
/// clocksource (the kernel's), clock (the engine's calibration), loadavg_1m,
/// hugepages_total. Cheap: a few /proc and /sys reads plus the clock's
/// one-time calibration.
nlohmann::json provenance();

/// The uniperf build: {version, git} (git describe at configure time).
nlohmann::json build_info();

/// The NUMA node of the device a plugin opened, found from its device()
/// text without asking the plugin: the first word that names an RDMA device
/// (/sys/class/infiniband/W) or a network interface (/sys/class/net/W) with
/// a device/numa_node. nullopt when none does (loopback, shared memory, a
/// VM without NUMA, or a kernel reporting -1).
std::optional<int> device_numa_node(const std::string& device);

/// Pins this process to `cpu`. Throws std::runtime_error naming the CPU.
void pin_to_cpu(int cpu);

/// What a side needs that preflight cannot see in the facts alone.
struct PreflightNeeds {
  bool hugepages = false;  ///< a config asks for huge pages
  /// What pins each side, as the advice to an unpinned one ends (a launched
  /// job's ranks past 1 are placed by the launcher, not by these flags).
  std::string pin_initiator = "pin it with --cpu N";
  /// "": --peer-cpu for a local pair's responder, --cpu on another host's
  /// server.
  std::string pin_responder = "";
};

/// Warnings for the facts of the initiator (`local`) and, when there is one,
/// the responder (`peer`, null otherwise): frequency scaling, unpinned or
/// shared CPUs, missing huge pages, a busy machine. Each is one sentence that
/// says which side and what to do.
std::vector<std::string> preflight(const nlohmann::json& local, const nlohmann::json& peer,
                                   const PreflightNeeds& needs);

/// The sides whose clock times cannot be trusted to, from the facts
/// preflight takes: a TSC that is not invariant (its rate follows the CPU's
/// frequency, or it stops in idle states). A sentence per such side, naming
/// it; empty when both are sound. preflight warns of each; `uniperf run
/// --require-invariant-tsc` refuses to run instead.
std::vector<std::string> unsound_clocks(const nlohmann::json& local, const nlohmann::json& peer);

/// Whether any config asks for huge pages (an option or environment variable
/// whose name mentions HUGE, set to something other than 0/n/no/false/off).
bool configs_want_hugepages(const std::vector<model::ConfigSpec>& configs);

}  // namespace uniperf::session
