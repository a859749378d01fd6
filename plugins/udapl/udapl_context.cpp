// The opened IA: dat_ia_open on the configured provider, one protection
// zone, and the capabilities read back from dat_ia_query (sizes, completion
// flags, IB extensions) rather than assumed.
#include <algorithm>
#include <cstring>

#include "udapl_common.hpp"
#include "udapl_endpoint.hpp"

namespace uniperf::udapl {

std::string dat_error(const std::string& what, DAT_RETURN rc) {
  const char* major = nullptr;
  const char* minor = nullptr;
  dat_strerror(rc, &major, &minor);
  std::string text = "udapl: " + what + ": " + (major != nullptr ? major : "?");
  if (minor != nullptr && *minor != '\0') text += std::string(" ") + minor;
  return text;
}

Bytes DatMemory::remote_key() const {
  return support::to_blob(rmr_context_);
}

DatContext::DatContext(Settings settings) : settings_(std::move(settings)) {
  DAT_RETURN rc = dat_ia_open(const_cast<char*>(settings_.provider.c_str()), 16, &async_evd_, &ia_);
  if (rc != DAT_SUCCESS) {
    // A provider missing from the registry, or one whose device is absent.
    const char* conf = std::getenv("DAT_OVERRIDE");
    throw Unavailable(dat_error("dat_ia_open(" + settings_.provider + ") with the registry of " +
                                    (conf != nullptr ? conf : "/etc/dat.conf"),
                                rc));
  }
  try {
    check(dat_ia_query(ia_, &async_evd_, DAT_IA_FIELD_ALL, &ia_attr_, DAT_PROVIDER_FIELD_ALL,
                       &provider_attr_),
          "dat_ia_query");
    check(dat_pz_create(ia_, &pz_), "dat_pz_create");
    read_capabilities();
  } catch (...) {
    if (pz_ != DAT_HANDLE_NULL) dat_pz_free(pz_);
    dat_ia_close(ia_, DAT_CLOSE_ABRUPT_FLAG);
    throw;
  }
}

DatContext::~DatContext() {
  if (pz_ != DAT_HANDLE_NULL) dat_pz_free(pz_);
  // Abrupt: whatever is left is torn down now instead of waiting on the peer.
  dat_ia_close(ia_, DAT_CLOSE_ABRUPT_FLAG);
}

const char* DatContext::provider_attribute(const char* name) const {
  for (DAT_COUNT i = 0; i < provider_attr_.num_provider_specific_attr; ++i) {
    const DAT_NAMED_ATTR& a = provider_attr_.provider_specific_attr[i];
    if (a.name != nullptr && std::strcmp(a.name, name) == 0) return a.value;
  }
  return nullptr;
}

bool DatContext::provider_grants(const char* attribute) const {
  const char* value = provider_attribute(attribute);
  return value != nullptr && std::strcmp(value, "TRUE") == 0;
}

void DatContext::read_capabilities() {
  caps_.set(Op::send, Support::native);
  caps_.set(Op::write, Support::native);
  caps_.set(Op::read, Support::native);
  // Atomics and write-with-immediate exist only as IB extensions, and only
  // where the provider lists them among its attributes.
  const bool ib = ia_attr_.extension_supported == DAT_EXTENSION_IB;
  if (ib && provider_grants(DAT_IB_ATTR_FETCH_AND_ADD)) caps_.set(Op::fetch_add, Support::native);
  if (ib && provider_grants(DAT_IB_ATTR_CMP_AND_SWAP)) caps_.set(Op::cswap, Support::native);
  if (ib && provider_grants(DAT_IB_ATTR_IMMED_DATA)) caps_.set(Op::write_imm, Support::native);
  // Suppressed completions: where the provider says so, and on the OFA
  // providers (those naming DAT_IB_PROVIDER_NAME: cma, scm, ucm), which
  // report completion_flags_supported = 0 but post a DTO with
  // DAT_COMPLETION_SUPPRESS_FLAG as an unsignaled work request and free its
  // cookie with the next signaled one (dapl openib_common, checked on rxe
  // by the conformance suite's signal_every tests).
  if ((provider_attr_.completion_flags_supported & DAT_COMPLETION_SUPPRESS_FLAG) != 0 ||
      provider_attribute("DAT_IB_PROVIDER_NAME") != nullptr) {
    caps_.selective_completion = Support::native;
  }
  caps_.completion_events = Support::native;  // dat_evd_wait on the DTO EVD
  caps_.post_list = Support::emulated;        // DAT posts one DTO per call
  caps_.max_inline = 0;                       // DAT has no inline path
  std::uint64_t largest = ia_attr_.max_message_size;
  if (ia_attr_.max_rdma_size != 0)
    largest = std::min<std::uint64_t>(largest, ia_attr_.max_rdma_size);
  caps_.max_message = static_cast<std::size_t>(largest);
  caps_.target_progress = false;          // RDMA lands without the target's CPU
  caps_.ordered_write_visibility = true;  // RC: a write's bytes are placed in order
  // A DTO completes from the RC queue pair's completion queue, after the
  // peer's ack: the peer holds the bytes by then (the default flush()).
  caps_.delivery_fence = true;
  caps_.thread_safe_endpoints = provider_attr_.is_thread_safe == DAT_TRUE;
  // An endpoint's request and receive queues each hold max_dto_per_ep
  // DTOs (the device's max_qp_wr under the openib providers), and both
  // complete into one DTO EVD of at most max_evd_qlen, which the endpoint
  // sizes send + receive + 16: the EVD is split between them so that any
  // two depths within the limits fit (rxe0: 1048576 DTOs, EVDs of 32767,
  // so 16375 and 16376). 0 where the IA says nothing.
  const DAT_COUNT dtos = ia_attr_.max_dto_per_ep;
  DAT_COUNT send_most = dtos, recv_most = dtos;
  if (ia_attr_.max_evd_qlen > 18) {
    const DAT_COUNT room = ia_attr_.max_evd_qlen - 16;
    send_most = dtos > 0 ? std::min(dtos, room / 2) : room / 2;
    recv_most = dtos > 0 ? std::min(dtos, room - send_most) : room - send_most;
  }
  caps_.max_send_depth = send_most > 0 ? static_cast<std::uint32_t>(send_most) : 0;
  caps_.max_recv_depth = recv_most > 0 ? static_cast<std::uint32_t>(recv_most) : 0;
}

std::string DatContext::device() const {
  return settings_.provider + " (" + ia_attr_.adapter_name + ")";
}

std::unique_ptr<MemoryRegion> DatContext::register_memory(void* address, std::size_t length) {
  DAT_REGION_DESCRIPTION region{};
  region.for_va = address;
  const auto privileges = static_cast<DAT_MEM_PRIV_FLAGS>(
      static_cast<int>(DAT_MEM_PRIV_ALL_FLAG) | static_cast<int>(DAT_IB_MEM_PRIV_REMOTE_ATOMIC));
  DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
  DAT_LMR_CONTEXT lmr_context = 0;
  DAT_RMR_CONTEXT rmr_context = 0;
  DAT_VLEN registered_length = 0;
  DAT_VADDR registered_address = 0;
  check(dat_lmr_create(ia_, DAT_MEM_TYPE_VIRTUAL, region, length, pz_, privileges, DAT_VA_TYPE_VA,
                       &lmr, &lmr_context, &rmr_context, &registered_length, &registered_address),
        "dat_lmr_create(" + std::to_string(length) + " bytes)");
  return std::make_unique<DatMemory>(address, length, lmr, lmr_context, rmr_context);
}

std::unique_ptr<Endpoint> DatContext::connect(const EndpointParams& params, PeerChannel& channel) {
  return std::make_unique<DatEndpoint>(*this, params, channel);
}

}  // namespace uniperf::udapl

extern "C" __attribute__((visibility("default"))) uniperf::Context* uniperf_udapl_open(
    const uniperf::udapl::Settings& settings) {
  return new uniperf::udapl::DatContext(settings);
}
