// The `ofi` plugin: any libfabric provider and endpoint type a config names
// (tcp, shm, udp;ofi_rxd, sockets, verbs;ofi_rxm, ...), msg endpoints
// connected through the connection manager, rdm endpoints through an
// address vector. What the provider grants in fi_info decides the ops on
// offer; the rest is SKIPPED by the engine with the missing capability.
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "ofi_context.hpp"

extern char** environ;

namespace uniperf::ofi {
namespace {

/// The `endpoint` option: declared (choices) and parsed from one table.
constexpr support::Choice<EndpointKind> kEndpointKinds[] = {{"msg", EndpointKind::msg},
                                                            {"rdm", EndpointKind::rdm}};

using Environment = std::map<std::string, std::string>;

/// The FI_* variables of the process environment now.
Environment libfabric_environment() {
  Environment found;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (text.starts_with("FI_") && equals != std::string_view::npos) {
      found.emplace(text.substr(0, equals), text.substr(equals + 1));
    }
  }
  return found;
}

/// The variables set now that were not set so at libfabric's first use
/// ("A unset then, =1 now"). One set then and unset now is no conflict: a
/// config that does not name a variable makes no claim about it, as with
/// one left in the shell.
std::string unmet(const Environment& then, const Environment& now) {
  std::string text;
  for (const auto& [name, value] : now) {
    const auto seen = then.find(name);
    if (seen != then.end() && seen->second == value) continue;
    if (!text.empty()) text += ", ";
    text += name + " " + (seen == then.end() ? "unset" : "=" + seen->second) + " then, =" + value +
            " now";
  }
  return text;
}

class OfiPlugin final : public Plugin {
 public:
  OfiPlugin() {
    // libfabric's registration cache keeps a region registered after
    // fi_close and hands it out again to a later registration of the same
    // address. The engine registers each buffer once per test, so the cache
    // saves nothing here, and where its memory monitor misses a free it
    // returns the old pages: over verbs;ofi_rxm on rxe0, a later test's
    // buffer at a reused address lost the remote writes meant for it
    // (payload validation failed at random sizes). Off unless the user set
    // it; set here, before the first libfabric call reads it (fi_ini).
    ::setenv("FI_MR_CACHE_MAX_COUNT", "0", /*overwrite=*/0);
  }

  /// libfabric's own multi-rail provider, as of 1.17, ends the process
  /// with SIGSEGV on the first send a rail refuses for now (-FI_EAGAIN, its
  /// ordinary flow control): mrail_send_common's error path closes a memory
  /// registration it never made (a null fid) when the buffer came with its
  /// descriptor, and without one its own per-message registration soon
  /// fails into the same path. Seen over tcp;ofi_rxm on two addresses with
  /// 64 KiB sends, every run. A crash would lose every record of the run,
  /// other configs' too: such a config is unavailable, saying why.
  static void refuse_crashing_mrail(const std::string& provider) {
    const std::uint32_t v = fi_version();
    if (provider.find("ofi_mrail") == std::string::npos || v > FI_VERSION(1, 17)) return;
    throw Unavailable("libfabric " + std::to_string(FI_MAJOR(v)) + "." +
                      std::to_string(FI_MINOR(v)) +
                      "'s ofi_mrail crashes the process (SIGSEGV) on the first send a rail "
                      "refuses for now (-FI_EAGAIN): its error path closes a memory registration "
                      "it never made; uniperf's own rails stripe over libfabric instead "
                      "(`rails:` in the config, docs/rails.md)");
  }

  std::string name() const override { return "ofi"; }
  std::string version() const override { return "0.1.0"; }

  std::string library_version() const override {
    const std::uint32_t v = fi_version();
    return "libfabric " + std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
  }

  std::string description() const override {
    first_use();
    return "libfabric providers; fi_getinfo offers here: " + offered_providers();
  }

  std::vector<OptionSpec> options() const override {
    return {
        {"provider", OptionType::string, "tcp",
         "fi_info provider name: tcp, shm, udp, sockets, verbs, or layered: udp;ofi_rxd, "
         "verbs;ofi_rxm, tcp;ofi_rxm"},
        {"endpoint", OptionType::string, "rdm",
         "endpoint type: msg (connected, fi_connect/fi_accept) or rdm (reliable datagram, "
         "address vector)",
         support::choice_names(kEndpointKinds)},
        {"fabric", OptionType::string, "",
         "fabric name to select, e.g. 127.0.0.1/32 (default: the first offered; none such: "
         "unavailable)"},
        {"domain", OptionType::string, "",
         "domain name to select: the interface for tcp/udp/sockets (lo, eth0), shm for shm, "
         "the device for verbs (rxe0) (default: the first offered; none such: unavailable)"},
        {"progress",
         OptionType::string,
         "",
         "data progress to request: auto | manual (default: the provider's)",
         {"auto", "manual"}},
        {"inject_completion",
         OptionType::string,
         "provider",
         "inline requests (-I): provider = FI_INJECT with a completion from the provider's CQ | "
         "return = fi_inject, no CQ entry: done when the call returns, its buffer free "
         "(fabtests' fi_pingpong counts injects so)",
         {"provider", "return"}},
        {"address", OptionType::string, "0.0.0.0",
         "msg: numeric IPv4 address the responder listens on"},
        {"port",
         OptionType::integer,
         "0",
         "msg: port the responder listens on; 0 = any",
         {},
         0,
         65535},
        {"peer_address", OptionType::string, "",
         "msg: numeric IPv4 address the initiator connects to; unset = the responder's address "
         "on the control connection"},
    };
  }

  std::string probe() const override {
    first_use();
    fi_info* list = nullptr;
    const int rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, nullptr, &list);
    if (rc != 0 || list == nullptr) {
      return std::string("fi_getinfo found no provider: ") + fi_strerror(-rc);
    }
    fi_freeinfo(list);
    return "";
  }

  std::unique_ptr<Context> open(const Options& options) override {
    if (const std::string changed = first_use(); !changed.empty()) {
      throw Unavailable(
          "libfabric read its FI_* environment once, when this process first used it, and "
          "this config's env sets what it did not read (" +
          changed +
          "); put this config first among the ofi configs, or run it in a uniperf of its own "
          "(-o FILE; `uniperf report` puts result files side by side)");
    }
    Settings s;
    s.provider = options.string("provider");
    if (s.provider.empty()) throw OptionError("ofi: option 'provider' is empty");
    refuse_crashing_mrail(s.provider);
    s.kind = support::choice(options, "endpoint", kEndpointKinds, "ofi");
    s.fabric = options.string("fabric");
    s.domain = options.string("domain");
    s.progress = options.string("progress");  // "", or a choice the loader checked
    s.inject_at_return = options.string("inject_completion") == "return";
    s.address = options.string("address");
    s.port = static_cast<int>(options.integer("port"));  // 0..65535, checked by the loader
    s.peer_address = options.string("peer_address");
    return std::make_unique<OfiContext>(std::move(s));
  }

 private:
  /// libfabric reads its FI_* variables (FI_UNIVERSE_SIZE, provider
  /// settings such as FI_OFI_RXM_USE_SRX) once per process, in fi_ini at the
  /// first fi_getinfo, and never again. A config's env set later would be
  /// silently ignored (over verbs;ofi_rxm the result was an EINVAL from
  /// fi_enable), so remember what the first use saw and refuse to pretend.
  /// Called before every libfabric call that can be the first.
  ///
  /// As long-lived as libfabric's own state: static in this library, the
  /// only one here that loads libfabric, so both go when it is unloaded
  /// (and a reloaded libfabric reads its environment again).
  /// Returns what the environment now sets that libfabric did not read.
  static std::string first_use() {
    std::lock_guard lock(environment_mutex_);
    const Environment now = libfabric_environment();
    if (!environment_at_init_) environment_at_init_ = now;
    return unmet(*environment_at_init_, now);
  }

  static inline std::mutex environment_mutex_;
  static inline std::optional<Environment> environment_at_init_;
};

}  // namespace
}  // namespace uniperf::ofi

UNIPERF_PLUGIN(uniperf::ofi::OfiPlugin)
