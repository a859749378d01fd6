// The `verbs` plugin: raw rdma-core verbs. RC queue pairs do every op
// (send, write, write with immediate, read, 8-byte atomics), UC send and
// the writes, UD send only (one MTU per message). The QPs connect through
// the framework's bootstrap exchange or through rdma_cm.
#include <string>

#include "verbs_context.hpp"

namespace uniperf::verbs {
namespace {

/// The enum options: declared (choices) and parsed from one table each.
constexpr support::Choice<QpKind> kTransports[] = {
    {"rc", QpKind::rc}, {"uc", QpKind::uc}, {"ud", QpKind::ud}};
constexpr support::Choice<ConnectMethod> kConnectMethods[] = {
    {"bootstrap", ConnectMethod::bootstrap}, {"rdma_cm", ConnectMethod::rdma_cm}};

/// An integer option whose range the loader checked against options().
int integer(const Options& options, const std::string& name) {
  return static_cast<int>(options.integer(name));
}

class VerbsPlugin final : public Plugin {
 public:
  std::string name() const override { return "verbs"; }
  std::string version() const override { return "0.1.0"; }

  std::string library_version() const override {
    std::string text = "libibverbs " UNIPERF_IBVERBS_VERSION;
    if (UNIPERF_VERBS_RDMA_CM) text += ", librdmacm " UNIPERF_RDMACM_VERSION;
    return text;
  }

  std::string description() const override {
    return "rdma-core verbs: RC (every op), UC (send, write), UD (send) queue pairs";
  }

  std::vector<OptionSpec> options() const override {
    return {
        {"device", OptionType::string, "", "RDMA device, e.g. rxe0 or mlx5_0 (default: the first)"},
        {"port", OptionType::integer, "1", "device port", {}, 1, 255},
        {"gid_index",
         OptionType::integer,
         "",
         "GID table index (default: the RoCE v2 GID of an IPv4 address on Ethernet ports; LID "
         "routing without a GRH on InfiniBand)",
         {},
         0,
         65535},
        {"transport", OptionType::string, "rc",
         "queue pair type: rc (every op) | uc (send, write, write_imm) | ud (send, one MTU per "
         "message)",
         support::choice_names(kTransports)},
        {"connect", OptionType::string, "bootstrap",
         "how the queue pairs connect: bootstrap (QPN/PSN/GID through the control connection) | "
         "rdma_cm (rc only: listen/accept on the responder, resolve/connect on the initiator)",
         support::choice_names(kConnectMethods)},
        {"mtu", OptionType::integer, "",
         "path MTU in bytes: 256, 512, 1024, 2048 or 4096 (default: the port's active MTU)"},
        {"timeout",
         OptionType::integer,
         "14",
         "rc: local ACK timeout exponent (4.096 us * 2^n)",
         {},
         0,
         31},
        {"retry_cnt", OptionType::integer, "7", "rc: transport retries", {}, 0, 7},
        {"rnr_retry",
         OptionType::integer,
         "7",
         "rc: receiver-not-ready retries (7 = forever)",
         {},
         0,
         7},
        {"min_rnr_timer",
         OptionType::integer,
         "12",
         "rc: receiver-not-ready NAK timer code",
         {},
         0,
         31},
        {"max_rd_atomic",
         OptionType::integer,
         "",
         "rc: reads and atomics in flight per QP (default: the device's maximum)",
         {},
         1,
         255},
        {"srq", OptionType::boolean, "false",
         "receives through a shared receive queue (one per endpoint)"},
        {"max_inline",
         OptionType::size,
         "256",
         "inline size asked of each queue pair; what the device grants is advertised",
         {},
         0,
         65536},
        {"cm_address", OptionType::string, "",
         "rdma_cm: IPv4 address the responder listens on (default: the IPv4 address of its GID)"},
        {"cm_port",
         OptionType::integer,
         "0",
         "rdma_cm: port the responder listens on; 0 = any",
         {},
         0,
         65535},
    };
  }

  std::string probe() const override {
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    if (list == nullptr) {
      return no_device_reason(errno);
    }
    ibv_free_device_list(list);
    return count > 0 ? "" : "no RDMA device (ibv_get_device_list found none)";
  }

  std::unique_ptr<Context> open(const Options& options) override {
    Settings s;
    s.device = options.string("device");
    // Ranges and choices were checked by the loader against options().
    s.port = integer(options, "port");
    s.gid_index = options.has("gid_index") ? integer(options, "gid_index") : -1;
    s.kind = support::choice(options, "transport", kTransports, "verbs");
    s.connect = support::choice(options, "connect", kConnectMethods, "verbs");
    if (s.connect == ConnectMethod::rdma_cm && s.kind != QpKind::rc) {
      // librdmacm makes RC identifiers (RDMA_PS_TCP) or UD ones whose peer
      // QPN the handshake does not carry back to the responder.
      throw OptionError("verbs: connect: rdma_cm serves transport: rc only; use bootstrap for " +
                        options.string("transport"));
    }
    if (options.has("mtu")) {
      s.mtu = static_cast<int>(options.integer("mtu"));
      if (mtu_from_bytes(s.mtu) == 0) {
        throw OptionError("verbs: option 'mtu' must be 256, 512, 1024, 2048 or 4096, got " +
                          std::to_string(s.mtu));
      }
    }
    s.timeout = integer(options, "timeout");
    s.retry_cnt = integer(options, "retry_cnt");
    s.rnr_retry = integer(options, "rnr_retry");
    s.min_rnr_timer = integer(options, "min_rnr_timer");
    s.max_rd_atomic = options.has("max_rd_atomic") ? integer(options, "max_rd_atomic") : 0;
    s.srq = options.boolean("srq");
    s.inline_request = static_cast<std::uint32_t>(options.size("max_inline"));
    s.cm_address = options.string("cm_address");
    s.cm_port = integer(options, "cm_port");
    return std::make_unique<VerbsContext>(std::move(s));
  }
};

}  // namespace
}  // namespace uniperf::verbs

UNIPERF_PLUGIN(uniperf::verbs::VerbsPlugin)
