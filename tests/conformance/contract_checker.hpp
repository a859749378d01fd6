// A plugin decorator that holds both sides of framework/include/uniperf/plugin.hpp
// to the letter while a real plugin runs real traffic. It forwards every call
// to the wrapped plugin and records each broken promise as a violation:
//
//   engine -> plugin: an op, event wait, inline size, message size or
//     suppressed completion the Capabilities do not declare; more requests
//     outstanding than send_depth or receives posted than recv_depth; local or
//     remote ranges outside their regions;
//   plugin -> engine: a completion for an unsignaled request, for an id never
//     posted, twice for one id, or after a later request's completion (a
//     signaled completion must cover every earlier request); a receive
//     completion longer than its buffer; capabilities that change.
//
// It is slow on purpose (bookkeeping per request) and exists only for the
// conformance suite; results measured through it are not performance numbers.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::conformance {

/// Every violation seen, and which ops were attempted, across all contexts
/// of one checked plugin (both sides of an in-process pair).
class ContractLog {
 public:
  void violation(std::string what);
  void attempted(Op op) { attempted_[static_cast<std::size_t>(op)] = true; }
  void waited() { waits_ = true; }

  std::vector<std::string> violations() const;
  bool was_attempted(Op op) const { return attempted_[static_cast<std::size_t>(op)]; }
  bool waited_for_events() const { return waits_; }
  void reset();

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> violations_;
  std::atomic<bool> attempted_[kOpCount] = {};
  std::atomic<bool> waits_{false};
};

/// Wraps `inner` (owned by a PluginRegistry that outlives this object) under
/// the same name, so configs resolve to the checked plugin unchanged. Opens
/// are serialised: the engine may open both sides of a pair at once, and
/// plugin.hpp does not promise that Plugin::open is thread-safe.
class CheckedPlugin : public Plugin {
 public:
  CheckedPlugin(Plugin& inner, std::shared_ptr<ContractLog> log);

  std::string name() const override { return inner_.name(); }
  std::string version() const override { return inner_.version(); }
  std::string library_version() const override { return inner_.library_version(); }
  std::string description() const override { return inner_.description(); }
  std::vector<OptionSpec> options() const override { return inner_.options(); }
  std::string probe() const override { return inner_.probe(); }
  std::unique_ptr<Context> open(const Options& options) override;

 private:
  Plugin& inner_;
  std::shared_ptr<ContractLog> log_;
  std::shared_ptr<std::mutex> open_mutex_;
};

}  // namespace uniperf::conformance
