#include "verbs_context.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "verbs_endpoint.hpp"

namespace uniperf::verbs {
namespace {

using DeviceList = support::Handle<ibv_device**, &ibv_free_device_list>;

bool ipv4_mapped(const ibv_gid& gid) {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

std::string gid_text(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

const char* gid_type_name(std::uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_ROCE_V2:
      return "RoCE v2";
    case IBV_GID_TYPE_ROCE_V1:
      return "RoCE v1";
    default:
      return "IB";
  }
}

}  // namespace

Bytes VerbsMemory::remote_key() const {
  const std::uint32_t rkey = mr_->rkey;
  Bytes out(sizeof rkey);
  std::memcpy(out.data(), &rkey, sizeof rkey);
  return out;
}

VerbsContext::VerbsContext(Settings settings) : settings_(std::move(settings)) {
  open_device();
  choose_gid();
  probe_queue_pair();
  read_capabilities();
}

VerbsContext::~VerbsContext() = default;

void VerbsContext::open_device() {
  int count = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (!list) {
    throw Unavailable(no_device_reason(errno));
  }
  if (count == 0) {
    throw Unavailable(
        "no RDMA device (ibv_get_device_list found none; on a machine without RDMA hardware "
        "Soft-RoCE gives one: rdma link add rxe0 type rxe netdev eth0)");
  }
  ibv_device* chosen = nullptr;
  std::string found;
  for (int i = 0; i < count; ++i) {
    const std::string name = ibv_get_device_name(list.get()[i]);
    found += (found.empty() ? "" : ", ") + name;
    if (chosen == nullptr && (settings_.device.empty() || name == settings_.device)) {
      chosen = list.get()[i];
    }
  }
  if (chosen == nullptr) {
    throw Unavailable("no RDMA device named '" + settings_.device + "' (found: " + found + ")");
  }
  name_ = ibv_get_device_name(chosen);
  device_.reset(ibv_open_device(chosen));
  if (!device_) throw Unavailable(verbs_error("cannot open " + name_, errno));

  if (ibv_query_device_ex(device_.get(), nullptr, &device_attr_) != 0) {
    // Providers without the extended query still answer the basic one.
    device_attr_ = ibv_device_attr_ex{};
    if (const int rc = ibv_query_device(device_.get(), &device_attr_.orig_attr); rc != 0) {
      throw Unavailable(verbs_error("cannot query " + name_, rc));
    }
  }
  const int ports = device_attr_.orig_attr.phys_port_cnt;
  if (settings_.port < 1 || settings_.port > ports) {
    throw Unavailable(name_ + " has " + std::to_string(ports) + " port(s); port " +
                      std::to_string(settings_.port) + " does not exist");
  }
  if (const int rc =
          ibv_query_port(device_.get(), static_cast<std::uint8_t>(settings_.port), &port_attr_);
      rc != 0) {
    throw Unavailable(
        verbs_error("cannot query " + name_ + " port " + std::to_string(settings_.port), rc));
  }
  if (port_attr_.state != IBV_PORT_ACTIVE) {
    throw Unavailable(name_ + " port " + std::to_string(settings_.port) + " is not active (" +
                      ibv_port_state_str(port_attr_.state) + ")");
  }
  pd_.reset(ibv_alloc_pd(device_.get()));
  if (!pd_)
    throw Unavailable(verbs_error("cannot allocate a protection domain on " + name_, errno));
}

void VerbsContext::choose_gid() {
  const auto port = static_cast<std::uint32_t>(settings_.port);
  if (settings_.gid_index >= 0) {
    ibv_gid_entry entry{};
    if (ibv_query_gid_ex(device_.get(), port, static_cast<std::uint32_t>(settings_.gid_index),
                         &entry, 0) != 0) {
      throw OptionError("verbs: gid_index " + std::to_string(settings_.gid_index) +
                        " names no GID on " + name_ + " port " + std::to_string(port));
    }
    gid_index_ = settings_.gid_index;
    gid_ = entry.gid;
    gid_type_ = gid_type_name(entry.gid_type);
    return;
  }
  if (!ethernet()) {
    // InfiniBand: route by LID within the subnet, no GRH (perftest's default).
    if (port_attr_.lid == 0) {
      throw Unavailable(name_ + " port " + std::to_string(port) +
                        " has no LID (is a subnet manager running?)");
    }
    gid_index_ = -1;
    ibv_query_gid(device_.get(), static_cast<std::uint8_t>(port), 0, &gid_);
    gid_type_ = "IB";
    return;
  }
  // RoCE: prefer the RoCE v2 GID of an IPv4 address (routable, and what
  // perftest and rdma_cm pick), then any RoCE v2 GID, then the first one.
  std::vector<ibv_gid_entry> entries(std::max(port_attr_.gid_tbl_len, 1));
  const ssize_t n = ibv_query_gid_table(device_.get(), entries.data(), entries.size(), 0);
  const ibv_gid_entry* best = nullptr;
  auto rank = [](const ibv_gid_entry& e) {
    if (e.gid_type == IBV_GID_TYPE_ROCE_V2) return ipv4_mapped(e.gid) ? 3 : 2;
    return 1;
  };
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = entries[static_cast<std::size_t>(i)];
    if (e.port_num != port) continue;
    if (best == nullptr || rank(e) > rank(*best)) best = &e;
  }
  if (best == nullptr) {
    throw Unavailable(name_ + " port " + std::to_string(port) +
                      " has no GID (is its network interface up with an address?)");
  }
  gid_index_ = static_cast<int>(best->gid_index);
  gid_ = best->gid;
  gid_type_ = gid_type_name(best->gid_type);
}

std::string VerbsContext::gid_ipv4() const {
  if (gid_index_ < 0 || !ipv4_mapped(gid_)) return "";
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, gid_.raw + 12, text, sizeof text);
  return text;
}

/// Creates one queue pair of the configured type to learn what the device
/// grants it: the inline size it really offers (the value after creation,
/// which providers round), and whether it can make the type at all.
void VerbsContext::probe_queue_pair() {
  CqPtr cq(ibv_create_cq(device_.get(), 4, nullptr, nullptr, 0));
  if (!cq) throw Unavailable(verbs_error("cannot create a completion queue on " + name_, errno));
  const ibv_qp_type type = settings_.kind == QpKind::rc   ? IBV_QPT_RC
                           : settings_.kind == QpKind::uc ? IBV_QPT_UC
                                                          : IBV_QPT_UD;
  std::uint32_t request = settings_.inline_request;
  int last_error = 0;
  for (;;) {
    ibv_qp_init_attr attr{};
    attr.send_cq = attr.recv_cq = cq.get();
    attr.qp_type = type;
    attr.cap.max_send_wr = attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = settings_.kind == QpKind::ud ? 2 : 1;
    attr.cap.max_inline_data = request;
    QpPtr qp(ibv_create_qp(pd_.get(), &attr));
    if (qp) {
      ibv_qp_attr queried{};
      ibv_qp_init_attr init{};
      max_inline_ = attr.cap.max_inline_data;
      // Some providers answer the query with 0 for a cap they do not track.
      if (ibv_query_qp(qp.get(), &queried, IBV_QP_CAP, &init) == 0 &&
          queried.cap.max_inline_data > 0) {
        max_inline_ = std::min(max_inline_, queried.cap.max_inline_data);
      }
      inline_request_ = request;
      return;
    }
    last_error = errno;
    // Devices refuse an inline size above their limit outright: halve it.
    if (request == 0) break;
    request /= 2;
  }
  throw Unsupported(verbs_error(
      name_ + " cannot create " + std::string(to_string(settings_.kind)) + " queue pairs",
      last_error));
}

std::uint32_t VerbsContext::initiator_depth() const {
  const auto device_max = static_cast<std::uint32_t>(device_attr_.orig_attr.max_qp_init_rd_atom);
  return settings_.max_rd_atomic > 0 ? static_cast<std::uint32_t>(settings_.max_rd_atomic)
                                     : device_max;
}

std::uint32_t VerbsContext::responder_resources() const {
  return static_cast<std::uint32_t>(device_attr_.orig_attr.max_qp_rd_atom);
}

void VerbsContext::read_capabilities() {
  const ibv_device_attr& d = device_attr_.orig_attr;
  if (settings_.mtu != 0) {
    path_mtu_ = mtu_from_bytes(settings_.mtu);
    if (path_mtu_ > port_attr_.active_mtu) {
      throw Unsupported("verbs: mtu " + std::to_string(settings_.mtu) + " exceeds " + name_ +
                        " port " + std::to_string(settings_.port) + "'s active MTU " +
                        std::to_string(mtu_bytes(port_attr_.active_mtu)));
    }
  } else {
    path_mtu_ = port_attr_.active_mtu;
  }
  if (settings_.max_rd_atomic > d.max_qp_init_rd_atom) {
    throw OptionError("verbs: max_rd_atomic " + std::to_string(settings_.max_rd_atomic) +
                      " exceeds " + name_ + "'s max_qp_init_rd_atom " +
                      std::to_string(d.max_qp_init_rd_atom));
  }
  if (settings_.srq && d.max_srq == 0) {
    throw Unsupported("verbs: " + name_ + " has no shared receive queues (srq: true)");
  }
  const bool atomics = d.atomic_cap != IBV_ATOMIC_NONE;
  access_ = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
            (atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);

  caps_ = Capabilities{};
  caps_.set(Op::send, Support::native);
  if (settings_.kind != QpKind::ud) {
    caps_.set(Op::write, Support::native);
    caps_.set(Op::write_imm, Support::native);
  }
  if (settings_.kind == QpKind::rc) {
    caps_.set(Op::read, Support::native);
    if (atomics) {
      caps_.set(Op::fetch_add, Support::native);
      caps_.set(Op::cswap, Support::native);
    }
  }
  // sq_sig_all = 0: only IBV_SEND_SIGNALED requests produce a completion,
  // and a queue pair completes its send queue in order.
  caps_.selective_completion = Support::native;
  caps_.completion_events = Support::native;  // an ibv_comp_channel per endpoint
  caps_.post_list = Support::native;          // one ibv_post_send of a wr.next chain
  caps_.max_inline = max_inline_;
  // A UD message is one packet: its payload is at most the path MTU.
  caps_.max_message = settings_.kind == QpKind::ud ? static_cast<std::size_t>(mtu_bytes(path_mtu_))
                      : port_attr_.max_msg_sz >= UINT32_MAX
                          ? 0
                          : static_cast<std::size_t>(port_attr_.max_msg_sz);
  // The hardware moves one-sided traffic without the target's help, and an
  // RC/UC responder places a message's packets in PSN order.
  caps_.target_progress = false;
  caps_.ordered_write_visibility = settings_.kind != QpKind::ud;
  // RC retransmits and reports what it cannot deliver. UD and UC drop a
  // message that finds no posted receive (no RNR retry) or whose packet is
  // lost, and tell neither side.
  caps_.reliable_delivery = settings_.kind == QpKind::rc;
  // An RC completion follows the peer's ack, so it already says delivered
  // (the default flush()); UD and UC complete once the packet is sent.
  caps_.delivery_fence = settings_.kind == QpKind::rc;
  // Each endpoint has its own queue pair and completion queue; verbs calls
  // on distinct QPs and CQs are thread-safe, and the context's shared
  // objects (PD, device) are only used on the setup path, which libibverbs
  // serialises.
  caps_.thread_safe_endpoints = true;
  // A queue pair holds max_qp_wr work requests per queue (receives go to
  // the SRQ, of max_srq_wr, with srq: true), and both queues complete into
  // one CQ of send + receive entries, at most max_cqe: the CQ is split
  // between them so that any two depths within the limits fit (rxe0: CQs
  // of 32767, so 16383 and 16384; mlx5's max_qp_wr is far below its CQs).
  const int recv_wr = settings_.srq ? d.max_srq_wr : d.max_qp_wr;
  const int send_most = std::max(1, std::min(d.max_qp_wr, d.max_cqe / 2));
  const int recv_most = std::max(1, std::min(recv_wr, d.max_cqe - send_most));
  caps_.max_send_depth = static_cast<std::uint32_t>(send_most);
  caps_.max_recv_depth = static_cast<std::uint32_t>(recv_most);
}

std::string VerbsContext::device() const {
  std::string text = name_ + ":" + std::to_string(settings_.port) + " " +
                     to_string(settings_.kind) + (settings_.srq ? "+srq" : "");
  if (gid_index_ >= 0) {
    text += ", " + gid_type_ + " GID " + std::to_string(gid_index_) + " " + gid_text(gid_);
  } else {
    text += ", LID " + std::to_string(port_attr_.lid);
  }
  text += ", MTU " + std::to_string(mtu_bytes(path_mtu_));
  text += ", inline " + std::to_string(max_inline_);
  text += max_cq_moderation() > 0 ? ", CQ moderation ibv_modify_cq"
                                  : ", CQ moderation: none (events per completion)";
  text += settings_.connect == ConnectMethod::rdma_cm ? ", rdma_cm" : ", bootstrap exchange";
  return text;
}

std::unique_ptr<MemoryRegion> VerbsContext::register_memory(void* address, std::size_t length) {
  MrPtr mr(ibv_reg_mr(pd_.get(), address, length, access_));
  if (!mr) {
    const int error = errno;
    throw TransportError(
        verbs_error("cannot register " + std::to_string(length) + " bytes on " + name_, error) +
        (error == ENOMEM || error == EPERM ? " (locked-memory limit? try ulimit -l unlimited)"
                                           : ""));
  }
  return std::make_unique<VerbsMemory>(address, length, std::move(mr));
}

std::unique_ptr<Endpoint> VerbsContext::connect(const EndpointParams& params,
                                                PeerChannel& channel) {
  return std::make_unique<VerbsEndpoint>(*this, params, channel);
}

}  // namespace uniperf::verbs
