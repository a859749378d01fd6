// The `ucx` plugin: UCX's UCP layer. Op send is a tagged message (api: tag)
// or an active message (api: am); write, read and the atomics are UCP RMA
// and AMO on a packed remote key. See ucx_endpoint.hpp for how completions
// are produced.
#include <memory>
#include <string>
#include <vector>

#include "ucx_context.hpp"

namespace uniperf::ucx {
namespace {

/// The `api` option: declared (choices) and parsed from one table.
constexpr support::Choice<TwoSidedApi> kApis[] = {{"tag", TwoSidedApi::tag},
                                                  {"am", TwoSidedApi::active_message}};

class UcxPlugin final : public Plugin {
 public:
  std::string name() const override { return "ucx"; }
  std::string version() const override { return "0.2.0"; }
  std::string library_version() const override {
    return std::string("UCX ") + ucp_get_version_string();
  }
  std::string description() const override {
    return "UCX UCP: tagged or active-message send/recv, put, get, atomics";
  }

  std::vector<OptionSpec> options() const override {
    return {
        {"transports", OptionType::string, "",
         "UCX_TLS for this context, e.g. posix | sm | tcp | rc_verbs,ud_verbs (default: UCX's)"},
        {"devices", OptionType::string, "",
         "UCX_NET_DEVICES, e.g. lo | eth0 | mlx5_0:1 (default: UCX's)"},
        {"api", OptionType::string, "tag",
         "UCP API that carries op send: tag (ucp_tag_send) or am (ucp_am_send)",
         support::choice_names(kApis)},
        {"rndv_threshold", OptionType::size, "",
         "UCX_RNDV_THRESH: messages from this size on use rendezvous (default: UCX's)"},
        {"wakeup", OptionType::boolean, "true",
         "request UCP_FEATURE_WAKEUP so completion: event works; off lets UCX also use "
         "transports without event support"},
        {"allocate", OptionType::boolean, "true",
         "test buffers come from ucp_mem_map(ALLOCATE) as in ucx_perftest (shared-memory "
         "puts become direct copies); off: engine memory registered with ucp_mem_map"},
        {"peer_errors", OptionType::boolean, "false",
         "UCP_ERR_HANDLING_MODE_PEER: a dead peer fails the test instead of hanging it, and "
         "teardown after one is clean; limits UCX to transports that support it"},
    };
  }

  std::string probe() const override {
    ucp_config_t* config = nullptr;
    ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) return "cannot read the UCX configuration: " + status_text(status);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    ucp_context_h context = nullptr;
    status = ucp_init(&params, config, &context);
    ucp_config_release(config);
    if (status != UCS_OK) return "ucp_init failed: " + status_text(status);
    ucp_cleanup(context);
    return "";
  }

  std::unique_ptr<Context> open(const Options& options) override {
    Settings settings;
    settings.transports = options.string("transports");
    settings.devices = options.string("devices");
    settings.api = support::choice(options, "api", kApis, "ucx");
    if (options.has("rndv_threshold")) settings.rndv_threshold = options.size("rndv_threshold");
    settings.wakeup = options.boolean("wakeup");
    settings.allocate = options.boolean("allocate");
    settings.peer_errors = options.boolean("peer_errors");
    return std::make_unique<UcxContext>(settings);
  }
};

}  // namespace
}  // namespace uniperf::ucx

UNIPERF_PLUGIN(uniperf::ucx::UcxPlugin)
