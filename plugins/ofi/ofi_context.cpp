#include "ofi_context.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "ofi_endpoint.hpp"

namespace uniperf::ofi {
namespace {

char* duplicate(const std::string& text) {
  return text.empty() ? nullptr : ::strdup(text.c_str());
}

/// What we ask fi_getinfo for. The mode bits are the ones this plugin
/// honours (a context per operation, receives for remote CQ data); the
/// mr_mode bits are every registration rule it can follow.
InfoPtr make_hints(const Settings& s, std::uint64_t caps) {
  InfoPtr hints(fi_allocinfo());
  if (!hints) throw TransportError("ofi: fi_allocinfo failed");
  hints->caps = caps;
  hints->mode = FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA;
  hints->ep_attr->type = s.kind == EndpointKind::rdm ? FI_EP_RDM : FI_EP_MSG;
  if (s.kind == EndpointKind::msg) hints->addr_format = FI_SOCKADDR_IN;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (s.progress == "auto") hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
  if (s.progress == "manual") hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->fabric_attr->prov_name = duplicate(s.provider);
  hints->fabric_attr->name = duplicate(s.fabric);
  hints->domain_attr->name = duplicate(s.domain);
  return hints;
}

/// A queue size from fi_info as Capabilities holds it: 0 (none given) is
/// unbounded, and anything past 32 bits is as good as unbounded.
std::uint32_t queue_limit(std::size_t size) {
  return size >= UINT32_MAX ? 0 : static_cast<std::uint32_t>(size);
}

/// "a, b, c".
std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

void add_once(std::vector<std::string>& names, const char* name) {
  if (name != nullptr && std::find(names.begin(), names.end(), name) == names.end()) {
    names.emplace_back(name);
  }
}

/// fi_getinfo lists every interface, whatever domain_attr->name and
/// fabric_attr->name the hints give (the tcp and udp providers of 1.17 list
/// eth0 first with a hint of lo), so the plugin picks from the list itself:
/// the first entry (the one fabtests would pick) whose domain and fabric
/// are the config's. The domain of tcp, udp and sockets is the interface
/// name (lo, eth0) and the fabric its subnet (127.0.0.1/32); shm's are both
/// "shm"; verbs' domain is the device (rxe0). Returns nullptr when none
/// matches, and the names seen in `domains` and `fabrics` (those of the
/// config's domain, when it names one).
const fi_info* matching(const fi_info* list, std::vector<std::string>& domains,
                        std::vector<std::string>& fabrics, const Settings& s) {
  for (const fi_info* i = list; i != nullptr; i = i->next) {
    const char* domain = i->domain_attr->name;
    const char* fabric = i->fabric_attr->name;
    const bool domain_ok = s.domain.empty() || (domain != nullptr && s.domain == domain);
    const bool fabric_ok = s.fabric.empty() || (fabric != nullptr && s.fabric == fabric);
    add_once(domains, domain);
    if (domain_ok) add_once(fabrics, fabric);  // the fabrics of the config's domain
    if (domain_ok && fabric_ok) return i;
  }
  return nullptr;
}

/// fi_info names a layered provider "udp;ofi_rxd"; a config may too.
std::string base_provider(const std::string& name) {
  return name.substr(0, name.find(';'));
}

/// libfabric's shm provider keeps each endpoint's region in /dev/shm as
/// "<pid>:<n>:<m>" and unlinks it when the endpoint closes. A process killed
/// with SIGKILL leaves its regions behind, and a later process given the
/// same pid (pids are recycled; in a fresh PID namespace, always) then fails
/// fi_enable with EBUSY on the dead process's region. Before this process
/// opens its first shm endpoint, every region named after its pid is such a
/// leftover: removed once per process (by pid, since a forked child starts
/// with its parent's statics).
void remove_regions_of_a_dead_namesake() {
  static std::mutex mutex;
  static pid_t cleaned_for = 0;
  const std::lock_guard lock(mutex);
  const pid_t self = ::getpid();
  if (cleaned_for == self) return;
  cleaned_for = self;
  const std::string prefix = std::to_string(self) + ":";
  try {
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
      std::error_code ignored;  // gone meanwhile, or not ours to remove: fi_enable will say
      if (entry.path().filename().string().rfind(prefix, 0) == 0)
        std::filesystem::remove(entry.path(), ignored);
    }
  } catch (const std::filesystem::filesystem_error&) {
    // no /dev/shm to read: nothing was left there either
  }
}

}  // namespace

Bytes OfiMemory::remote_key() const {
  const std::uint64_t key = fi_mr_key(mr_.get());
  Bytes out(sizeof key);
  std::memcpy(out.data(), &key, sizeof key);
  return out;
}

OfiContext::OfiContext(Settings settings) : settings_(std::move(settings)) {
  if (settings_.provider.find("shm") != std::string::npos) remove_regions_of_a_dead_namesake();
  // The richest set of capabilities the provider grants decides which ops
  // are offered: atomics, then RMA, then messages alone.
  const std::uint64_t attempts[] = {FI_MSG | FI_RMA | FI_ATOMIC, FI_MSG | FI_RMA, FI_MSG};
  int last_rc = -FI_ENODATA;
  std::vector<std::string> domains, fabrics;  // what the provider offered instead
  for (const std::uint64_t caps : attempts) {
    auto hints = make_hints(settings_, caps);
    fi_info* found = nullptr;
    last_rc = fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &found);
    if (last_rc != 0 || found == nullptr) continue;
    InfoPtr list(found);
    if (const fi_info* match = matching(list.get(), domains, fabrics, settings_)) {
      info_.reset(fi_dupinfo(match));
      if (!info_) throw TransportError("ofi: fi_dupinfo failed");
      break;
    }
  }
  const char* type = settings_.kind == EndpointKind::rdm ? "rdm" : "msg";
  if (!info_ && domains.empty() && (!settings_.domain.empty() || !settings_.fabric.empty())) {
    // Some providers (verbs) honour the names in the hints and list nothing
    // for a domain that is not there: ask once more without them, for the
    // names that are.
    Settings any = settings_;
    any.domain.clear();
    any.fabric.clear();
    auto hints = make_hints(any, FI_MSG);
    fi_info* found = nullptr;
    if (fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints.get(), &found) == 0 && found) {
      InfoPtr list(found);
      for (const fi_info* i = list.get(); i != nullptr; i = i->next) {
        add_once(domains, i->domain_attr->name);
        const char* domain = i->domain_attr->name;
        if (settings_.domain.empty() || (domain != nullptr && settings_.domain == domain)) {
          add_once(fabrics, i->fabric_attr->name);
        }
      }
    }
  }
  if (!info_ && !domains.empty()) {
    // The provider is here, on other domains or fabrics than the config
    // names: it is the config's device that is missing (as verbs says of a
    // device name), never silently another one.
    const std::string provider = settings_.provider + " " + type;
    if (!settings_.domain.empty() &&
        std::find(domains.begin(), domains.end(), settings_.domain) == domains.end()) {
      throw Unavailable("no ofi " + provider + " domain named '" + settings_.domain +
                        "' (found: " + join(domains) + ")");
    }
    throw Unavailable("no ofi " + provider + " fabric named '" + settings_.fabric + "'" +
                      (settings_.domain.empty() ? "" : " in domain '" + settings_.domain + "'") +
                      " (found: " + join(fabrics) + ")");
  }
  if (!info_) {
    throw Unavailable("libfabric offers no " + std::string(type) + " endpoint of provider '" +
                      settings_.provider + "'" +
                      (settings_.fabric.empty() ? "" : " on fabric '" + settings_.fabric + "'") +
                      (settings_.domain.empty() ? "" : " in domain '" + settings_.domain + "'") +
                      " here (fi_getinfo: " + fi_strerror(-last_rc) +
                      "); offered: " + offered_providers());
  }
  fid_fabric* fabric = nullptr;
  if (const int rc = fi_fabric(info_->fabric_attr, &fabric, nullptr); rc != 0) {
    throw Unavailable(fi_error("cannot open fabric " + std::string(info_->fabric_attr->name), rc));
  }
  fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  if (const int rc = fi_domain(fabric_.get(), info_.get(), &domain, nullptr); rc != 0) {
    throw Unavailable(fi_error("cannot open domain " + std::string(info_->domain_attr->name), rc));
  }
  domain_.reset(domain);
  read_capabilities();
}

OfiContext::~OfiContext() = default;

void OfiContext::read_capabilities() {
  const fi_info& i = *info_;
  caps_ = Capabilities{};
  if (i.caps & FI_MSG) caps_.set(Op::send, Support::native);
  if (i.caps & FI_RMA) {
    caps_.set(Op::write, Support::native);
    caps_.set(Op::read, Support::native);
    // A write with immediate must consume one of the target's posted
    // receives (the engine's, and verbs', semantics): only providers that
    // require receives for remote CQ data (FI_RX_CQ_DATA) do that.
    if ((i.mode & FI_RX_CQ_DATA) && i.domain_attr->cq_data_size >= 4) {
      caps_.set(Op::write_imm, Support::native);
    }
  }
  const std::string layered = i.fabric_attr->prov_name;
  const bool rxd = layered.find("ofi_rxd") != std::string::npos;
  // libfabric 1.17's rxd takes a fetching atomic's target address as a
  // virtual address even without FI_MR_VIRT_ADDR (the target segfaults),
  // and with virtual addresses the operation never completes: seen here,
  // so its atomics are not offered.
  if ((i.caps & FI_ATOMIC) && !rxd) {
    fi_atomic_attr attr{};
    if (fi_query_atomic(domain_.get(), FI_UINT64, FI_SUM, &attr, FI_FETCH_ATOMIC) == 0) {
      caps_.set(Op::fetch_add, Support::native);
    }
    if (fi_query_atomic(domain_.get(), FI_UINT64, FI_CSWAP, &attr, FI_COMPARE_ATOMIC) == 0) {
      caps_.set(Op::cswap, Support::native);
    }
  }
  // FI_SELECTIVE_COMPLETION drops completions of unsignaled operations, but
  // the engine needs a signaled completion to cover every earlier request:
  // true only when the provider completes transmits in order.
  caps_.selective_completion = (i.tx_attr->comp_order & FI_ORDER_STRICT) == FI_ORDER_STRICT
                                   ? Support::native
                                   : Support::emulated;
  caps_.completion_events = cq_wait_fd_works() ? Support::native : Support::none;
  caps_.post_list = Support::native;  // FI_MORE on all but the last of a chain
  // By default an injected request still asks for its completion
  // (FI_COMPLETION), which a provider reports at its own completion level;
  // with inject_completion: return it goes by fi_inject and is done when the
  // call returns (the buffer is free then). rxd in 1.17 reports no
  // completion for FI_INJECT (a ping-pong stalls, seen here) and needs its
  // CQ read for progress, so no inline path is offered there at all.
  caps_.max_inline = rxd ? 0 : i.tx_attr->inject_size;
  caps_.max_message =
      i.ep_attr->max_msg_size >= UINT32_MAX ? 0 : static_cast<std::size_t>(i.ep_attr->max_msg_size);
  caps_.target_progress = i.domain_attr->data_progress == FI_PROGRESS_MANUAL;
  // Software providers copy a write front to back into the target buffer,
  // and RC hardware (verbs) places it in order, which the last-byte poll of
  // write latency relies on. ofi_rxd may deliver a large write's packets
  // out of order, so its write latency is not offered.
  const std::string base = base_provider(i.fabric_attr->prov_name);
  caps_.ordered_write_visibility =
      (caps_.op(Op::write) != Support::none) && !rxd &&
      (base == "tcp" || base == "shm" || base == "sockets" || base == "verbs");
  caps_.thread_safe_endpoints = false;  // FI_THREAD_DOMAIN: one thread per domain
  // The queues fi_getinfo grants an endpoint: what a provider can hold
  // outstanding and posted (tcp 256 each in 1.17, rxd and shm 1024, rxm
  // 2048). More receives than rx_attr->size fail with -FI_EAGAIN for good.
  caps_.max_send_depth = queue_limit(i.tx_attr->size);
  caps_.max_recv_depth = queue_limit(i.rx_attr->size);
}

/// Event mode sleeps on the CQ's file descriptor; not every provider has
/// one (shm in 1.17 does not), so try it once.
bool OfiContext::cq_wait_fd_works() const {
  fi_cq_attr attr{};
  attr.format = FI_CQ_FORMAT_DATA;
  attr.size = 16;
  attr.wait_obj = FI_WAIT_FD;
  fid_cq* cq = nullptr;
  if (fi_cq_open(domain_.get(), &attr, &cq, nullptr) != 0) return false;
  FiPtr<fid_cq> owner(cq);
  int fd = -1;
  return fi_control(&cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0;
}

std::string OfiContext::device() const {
  const fi_info& i = *info_;
  std::string text = std::string(i.fabric_attr->prov_name) +
                     (settings_.kind == EndpointKind::rdm ? " rdm" : " msg") + ", fabric " +
                     i.fabric_attr->name + ", domain " + i.domain_attr->name;
  text +=
      i.domain_attr->data_progress == FI_PROGRESS_MANUAL ? ", manual progress" : ", auto progress";
  // What an inline request's completion means differs with it: say so.
  if (settings_.inject_at_return && caps_.max_inline != 0) text += ", injects done at return";
  return text;
}

FiPtr<fid_mr> OfiContext::register_raw(void* address, std::size_t length) {
  std::uint64_t access = FI_SEND | FI_RECV;
  if (info_->caps & (FI_RMA | FI_ATOMIC)) {
    access |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  }
  // Every registration asks for a key of its own, even where the provider
  // picks the keys (FI_MR_PROV_KEY): it ignores the request then, but a
  // utility layer may not. rxm over verbs files regions in a map by the
  // requested key when atomics are on, and a second region asking for the
  // same key fails with -FI_ENOKEY.
  fid_mr* mr = nullptr;
  const int rc = fi_mr_reg(domain_.get(), address, length, access, 0, next_key_++, 0, &mr, nullptr);
  if (rc != 0) {
    throw TransportError(fi_error("cannot register " + std::to_string(length) + " bytes", rc));
  }
  return FiPtr<fid_mr>(mr);
}

std::unique_ptr<MemoryRegion> OfiContext::register_memory(void* address, std::size_t length) {
  auto region = std::make_unique<OfiMemory>(address, length, register_raw(address, length));
  if (endpoint_bound_memory()) unbound_.push_back(region.get());
  return region;
}

std::vector<OfiMemory*> OfiContext::take_unbound_memory() {
  std::vector<OfiMemory*> out;
  out.swap(unbound_);
  return out;
}

std::unique_ptr<Endpoint> OfiContext::connect(const EndpointParams& params, PeerChannel& channel) {
  return std::make_unique<OfiEndpoint>(*this, params, channel);
}

std::string offered_providers() {
  fi_info* list = nullptr;
  if (fi_getinfo(kApiVersion, nullptr, nullptr, 0, nullptr, &list) != 0 || list == nullptr) {
    return "none";
  }
  InfoPtr owner(list);
  std::map<std::string, std::string> types;  // provider -> "msg|rdm|dgram"
  std::vector<std::string> order;
  for (const fi_info* i = list; i != nullptr; i = i->next) {
    const std::string name = i->fabric_attr->prov_name;
    if (name.find("ofi_hook") != std::string::npos || name.find("ofi_mrail") != std::string::npos) {
      continue;
    }
    const char* type = i->ep_attr->type == FI_EP_MSG   ? "msg"
                       : i->ep_attr->type == FI_EP_RDM ? "rdm"
                                                       : "dgram";
    auto [it, inserted] = types.emplace(name, "");
    if (inserted) order.push_back(name);
    if (it->second.find(type) == std::string::npos) {
      if (!it->second.empty()) it->second.append("|");
      it->second.append(type);
    }
  }
  std::string text;
  for (const auto& name : order) {
    if (!text.empty()) text.append(", ");
    text.append(name).append(" ").append(types[name]);
  }
  return text.empty() ? "none" : text;
}

}  // namespace uniperf::ofi
