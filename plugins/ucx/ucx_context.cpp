#include "ucx_context.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ucx_endpoint.hpp"

namespace uniperf::ucx {
namespace {

using namespace std::chrono_literals;

/// What connect() sends the peer ahead of the worker address.
struct Hello {
  static constexpr std::uint32_t kMagic = 0x75637831;  // "ucx1"
  std::uint32_t magic = kMagic;
  std::uint32_t index = 0;  // EndpointParams::index: both sides must agree
  std::uint64_t tag_channel = 0;
  std::uint32_t am_id = 0;
  std::uint32_t api = 0;  // TwoSidedApi: both sides must use the same
};

constexpr auto kWireupLimit = 10s;

const char* api_name(TwoSidedApi api) {
  return api == TwoSidedApi::tag ? "tag" : "am";
}

/// The devices of the resources `context` selected ("lo", "eth0",
/// "mlx5_0:1", "memory0"), read from ucp_context_print_info's
/// "resource N : md M dev D flags -- tl/dev" lines: UCP has no other
/// public query of them.
std::set<std::string> resource_devices(ucp_context_h context) {
  char* text = nullptr;
  std::size_t length = 0;
  FILE* stream = ::open_memstream(&text, &length);
  if (stream == nullptr) return {};
  ucp_context_print_info(context, stream);
  std::fclose(stream);
  std::set<std::string> devices;
  std::istringstream lines(std::string(text, length));
  std::free(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" resource ") == std::string::npos) continue;
    const auto slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    std::string device = line.substr(slash + 1);
    device.erase(device.find_last_not_of(" \t") + 1);
    if (!device.empty()) devices.insert(device);
  }
  return devices;
}

/// The devices a context of `transports` selects with every network
/// device allowed; empty when UCP cannot start one.
std::set<std::string> devices_offered(const std::string& transports) {
  ucp_config_t* config = nullptr;
  if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) return {};
  if (!transports.empty()) ucp_config_modify(config, "TLS", transports.c_str());
  ucp_config_modify(config, "NET_DEVICES", "all");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG;
  ucp_context_h context = nullptr;
  const ucs_status_t status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return {};
  std::set<std::string> devices = resource_devices(context);
  ucp_cleanup(context);
  return devices;
}

/// UCP leaves out a UCX_NET_DEVICES entry that names no device here and
/// starts anyway, over what remains (self alone for tcp,self): the run
/// then fails at connect with "Destination is unreachable", or silently
/// uses another transport. A named network device this context did not
/// select, while the transports do have network devices, makes the config
/// unavailable instead, as a missing verbs device does. "" when all is well.
std::string missing_device(ucp_context_h context, const Settings& settings) {
  if (settings.devices.empty() || settings.devices == "all") return "";
  const std::set<std::string> selected = resource_devices(context);
  std::set<std::string> named;
  std::vector<std::string> wanted;  // named and not selected
  std::istringstream list(settings.devices);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) continue;
    named.insert(name);
    if (!selected.count(name)) wanted.push_back(name);
  }
  if (wanted.empty()) return "";
  // The network devices the transports offer: every device with all of
  // them allowed, less the non-network ones this context has too (self's
  // memory, shared memory), which UCX_NET_DEVICES does not filter.
  std::string found;
  for (const std::string& device : devices_offered(settings.transports)) {
    if (selected.count(device) && !named.count(device)) continue;
    found += (found.empty() ? "" : ", ") + device;
  }
  if (found.empty()) return "";  // the transports use no network device: nothing to choose
  return "no ucx network device named '" + wanted.front() + "' for transports " +
         (settings.transports.empty() ? "(UCX's default)" : settings.transports) +
         " (found: " + found + ")";
}

}  // namespace

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

UcxMemoryRegion::UcxMemoryRegion(ucp_context_h context, void* address, std::size_t length)
    : MemoryRegion(address, length), context_(context) {
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = address;
  params.length = length;
  check(ucp_mem_map(context_, &params, &memory_), "cannot register memory");
}

UcxMemoryRegion::UcxMemoryRegion(ucp_context_h context, ucp_mem_h memory, void* address,
                                 std::size_t length)
    : MemoryRegion(address, length), context_(context), memory_(memory) {}

std::unique_ptr<UcxMemoryRegion> UcxMemoryRegion::allocate(ucp_context_h context,
                                                           std::size_t length) {
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.address = nullptr;
  params.length = length;
  params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memory = nullptr;
  check(ucp_mem_map(context, &params, &memory), "cannot allocate memory");
  ucp_mem_attr_t attributes{};
  attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  const ucs_status_t status = ucp_mem_query(memory, &attributes);
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (status != UCS_OK || attributes.length < length ||
      reinterpret_cast<std::uintptr_t>(attributes.address) % page != 0) {
    ucp_mem_unmap(context, memory);
    return nullptr;
  }
  return std::unique_ptr<UcxMemoryRegion>(
      new UcxMemoryRegion(context, memory, attributes.address, length));
}

UcxMemoryRegion::~UcxMemoryRegion() {
  ucp_mem_unmap(context_, memory_);
}

Bytes UcxMemoryRegion::remote_key() const {
  void* packed = nullptr;
  std::size_t size = 0;
  check(ucp_rkey_pack(context_, memory_, &packed, &size), "cannot pack the remote key");
  Bytes key(static_cast<const std::byte*>(packed), static_cast<const std::byte*>(packed) + size);
  ucp_rkey_buffer_release(packed);
  return key;
}

// ---------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------

UcxContext::UcxContext(const Settings& settings) : settings_(settings) {
  state_.api = settings.api;
  state_.peer_errors = settings.peer_errors;

  ucp_config_t* raw_config = nullptr;
  if (const ucs_status_t status = ucp_config_read(nullptr, nullptr, &raw_config);
      status != UCS_OK) {
    throw Unavailable("ucx: cannot read the UCX configuration: " + status_text(status));
  }
  const std::unique_ptr<ucp_config_t, void (*)(ucp_config_t*)> config(raw_config,
                                                                      &ucp_config_release);
  // The options go into this context's configuration only, not into the
  // process environment, so two contexts with different options coexist.
  auto modify = [&](const char* option, const char* ucx_name, const std::string& value) {
    if (value.empty()) return;
    const ucs_status_t status = ucp_config_modify(config.get(), ucx_name, value.c_str());
    if (status != UCS_OK) {
      throw OptionError("ucx: option '" + std::string(option) + "': UCX_" + ucx_name + "=" + value +
                        " rejected: " + status_text(status));
    }
  };
  modify("transports", "TLS", settings.transports);
  modify("devices", "NET_DEVICES", settings.devices);
  if (settings.rndv_threshold) {
    modify("rndv_threshold", "RNDV_THRESH", std::to_string(*settings.rndv_threshold));
  }

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  // TAG always: connect() shakes hands with tagged messages.
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
  if (settings.api == TwoSidedApi::active_message) params.features |= UCP_FEATURE_AM;
  if (settings.wakeup) params.features |= UCP_FEATURE_WAKEUP;
  if (const ucs_status_t status = ucp_init(&params, config.get(), &state_.context);
      status != UCS_OK) {
    throw Unavailable("ucx: cannot start UCP with transports " + device() + ": " +
                      status_text(status));
  }

  if (const std::string missing = missing_device(state_.context, settings); !missing.empty()) {
    ucp_cleanup(state_.context);
    throw Unavailable(missing);
  }

  ucp_context_attr_t attributes{};
  attributes.field_mask = UCP_ATTR_FIELD_REQUEST_SIZE;
  ucs_status_t status = ucp_context_query(state_.context, &attributes);
  if (status == UCS_OK) {
    state_.request_size = attributes.request_size;
    // Single-threaded worker: the engine drives all endpoints of this
    // Context from one thread (thread_safe_endpoints = false), and UCP then
    // takes no locks on the hot path.
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(state_.context, &worker_params, &state_.worker);
  }
  if (status == UCS_OK && settings.wakeup) {
    status = ucp_worker_get_efd(state_.worker, &state_.event_fd);
  }
  if (status != UCS_OK) {
    if (state_.worker != nullptr) ucp_worker_destroy(state_.worker);
    ucp_cleanup(state_.context);
    throw Unavailable("ucx: cannot create a UCP worker: " + status_text(status));
  }
}

UcxContext::~UcxContext() {
  ucp_worker_destroy(state_.worker);
  ucp_cleanup(state_.context);
}

Capabilities UcxContext::capabilities() const {
  Capabilities caps;
  for (Op op : {Op::send, Op::write, Op::read, Op::fetch_add, Op::cswap}) {
    caps.set(op, Support::native);
  }
  // UCP has no write with immediate data.
  caps.set(Op::write_imm, Support::none);
  // Every UCP request completes; the endpoint hides unsignaled ones.
  caps.selective_completion = Support::emulated;
  caps.completion_events = settings_.wakeup ? Support::native : Support::none;
  caps.post_list = Support::emulated;
  // UCP picks short / eager / rendezvous per message itself and offers no
  // caller-chosen inline path, so the plugin declares none rather than
  // pretend a threshold it cannot enforce.
  caps.max_inline = 0;
  caps.max_message = 0;
  // Shared-memory and TCP transports move one-sided data (or emulate RMA
  // and atomics with active messages) only while the target progresses.
  caps.target_progress = true;
  // Puts land front to back, fragment after fragment, so the last byte
  // arrives last; ucx_perftest's own put latency relies on the same. One
  // caveat, as for ucx_perftest: into UCP-allocated shared memory a put is
  // the initiator's memcpy, whose stores within a fragment are not strictly
  // ascending, so a poller may see the last byte a few nanoseconds before
  // the rest of that fragment.
  caps.ordered_write_visibility = true;
  caps.thread_safe_endpoints = false;  // one UCS_THREAD_MODE_SINGLE worker
  // UCP queues what the transport cannot take yet (pending requests) and
  // keeps unexpected messages, and the endpoint sizes its rings from the
  // params: no queue limit.
  caps.max_send_depth = 0;
  caps.max_recv_depth = 0;
  // A send or put completes once UCP holds its data (eager, buffered copy),
  // not when it arrived: ucp_ep_flush_nbx is the fence (UcxEndpoint::flush).
  caps.delivery_fence = true;
  return caps;
}

std::string UcxContext::device() const {
  std::string device = settings_.transports.empty() ? "default" : settings_.transports;
  if (!settings_.devices.empty()) device += " on " + settings_.devices;
  return device;
}

std::unique_ptr<MemoryRegion> UcxContext::register_memory(void* address, std::size_t length) {
  return std::make_unique<UcxMemoryRegion>(state_.context, address, length);
}

std::unique_ptr<MemoryRegion> UcxContext::allocate_memory(std::size_t length) {
  // UCP's own memory is what ucx_perftest measures with: on shared memory a
  // peer maps it, so puts and gets become direct copies without the
  // target's help. Off, the engine allocates and register_memory() is used.
  if (!settings_.allocate) return nullptr;
  return UcxMemoryRegion::allocate(state_.context, length);
}

std::uint32_t UcxContext::acquire_am_id() {
  auto& in_use = state_.am_ids_in_use;
  std::size_t id = 0;
  while (id < in_use.size() && in_use[id]) ++id;
  if (id > UINT16_MAX) throw TransportError("ucx: no free active-message id");
  if (id == in_use.size()) in_use.push_back(false);
  in_use[id] = true;
  return static_cast<std::uint32_t>(id);
}

std::unique_ptr<Endpoint> UcxContext::connect(const EndpointParams& params, PeerChannel& channel) {
  Hello mine;
  mine.index = params.index;
  mine.tag_channel = state_.next_channel++;
  mine.api = static_cast<std::uint32_t>(state_.api);
  if (state_.api == TwoSidedApi::active_message) mine.am_id = acquire_am_id();
  // Until the endpoint owns the id, give it back on any failure.
  auto release_am_id = [&] {
    if (state_.api == TwoSidedApi::active_message) state_.am_ids_in_use[mine.am_id] = false;
  };

  // Both steps end with the typed outcome exchange, so a side that fails
  // (no worker address, an endpoint UCX refuses, a mismatched peer) fails the
  // other one the same way instead of leaving it waiting for a wire-up.
  Bytes theirs;
  try {
    theirs = support::exchange_step(channel, "ucx", [&] {
      ucp_address_t* address = nullptr;
      std::size_t address_length = 0;
      check(ucp_worker_get_address(state_.worker, &address, &address_length),
            "cannot get the worker address");
      // The fixed hello, then the worker address (its length is UCX's).
      Bytes blob = support::to_blob(mine);
      const auto* first = reinterpret_cast<const std::byte*>(address);
      blob.insert(blob.end(), first, first + address_length);
      ucp_worker_release_address(state_.worker, address);
      return blob;
    });
  } catch (...) {
    release_am_id();
    throw;
  }

  Hello peer;
  if (theirs.size() > sizeof peer) {
    peer = support::from_blob<Hello>(std::span(theirs).first(sizeof peer), "ucx", "hello");
  }
  std::string problem;
  if (theirs.size() <= sizeof peer || peer.magic != Hello::kMagic) {
    problem = "the peer's connection data is not from this ucx plugin version";
  } else if (peer.index != params.index) {
    problem = "endpoint " + std::to_string(params.index) + " was paired with the peer's endpoint " +
              std::to_string(peer.index) + " (connect() order differs)";
  } else if (peer.api != mine.api) {
    problem = std::string("this side uses api=") + api_name(state_.api) +
              ", the peer api=" + api_name(static_cast<TwoSidedApi>(peer.api));
  }
  std::unique_ptr<UcxEndpoint> endpoint;
  std::exception_ptr failure;
  try {
    if (!problem.empty()) throw TransportError("ucx: " + problem);
    endpoint = std::make_unique<UcxEndpoint>(
        state_, reinterpret_cast<const ucp_address_t*>(theirs.data() + sizeof peer), params,
        ChannelIds{mine.tag_channel, mine.am_id}, ChannelIds{peer.tag_channel, peer.am_id});
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    support::exchange_outcome(channel, "ucx", failure);
  } catch (...) {
    if (!endpoint) release_am_id();  // an endpoint gives its id back itself
    throw;
  }
  endpoint->complete_wireup(kWireupLimit, channel);
  channel.barrier();
  return endpoint;
}

}  // namespace uniperf::ucx
