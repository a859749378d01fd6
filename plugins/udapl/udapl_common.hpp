// The DAT side of the `udapl` plugin: the opened IA (DatContext), registered
// memory (LMRs), and connected endpoints (DatEndpoint). Built into
// libuniperf_udapl_dat.so, the only module that links libdat2.
#pragma once

#include <dat2/udat.h>
#include <netinet/in.h>  // sockaddr_in6, which dat_ib_extensions.h uses
// after udat.h: the IB extensions build on its types
#include <dat2/dat_ib_extensions.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <uniperf/plugin_support.hpp>

#include "udapl_settings.hpp"

namespace uniperf::udapl {

/// Setup-path waits (connection request, establishment) give up after this.
inline constexpr std::chrono::seconds kConnectTimeout{15};
/// How often a wait for a connection event asks whether the engine gave up
/// on the test (PeerChannel::cancelled).
inline constexpr std::chrono::milliseconds kConnectSlice{100};

/// "udapl: what: DAT_MAJOR DAT_MINOR" for a failed DAT call.
std::string dat_error(const std::string& what, DAT_RETURN rc);

inline void check(DAT_RETURN rc, const std::string& what) {
  if (rc != DAT_SUCCESS) throw TransportError(dat_error(what, rc));
}

/// A registered buffer: the LMR for local access, its RMR context for the peer.
class DatMemory final : public MemoryRegion {
 public:
  DatMemory(void* address, std::size_t length, DAT_LMR_HANDLE lmr, DAT_LMR_CONTEXT lmr_context,
            DAT_RMR_CONTEXT rmr_context)
      : MemoryRegion(address, length),
        lmr_(lmr),
        lmr_context_(lmr_context),
        rmr_context_(rmr_context) {}
  ~DatMemory() override { dat_lmr_free(lmr_); }

  Bytes remote_key() const override;
  DAT_LMR_CONTEXT lmr_context() const { return lmr_context_; }
  DAT_VADDR at(std::uint64_t offset) const {
    return reinterpret_cast<DAT_VADDR>(address()) + offset;
  }

 private:
  DAT_LMR_HANDLE lmr_;
  DAT_LMR_CONTEXT lmr_context_;
  DAT_RMR_CONTEXT rmr_context_;
};

class DatRemote final : public RemoteRegion {
 public:
  DatRemote(std::uint64_t address, std::uint64_t length, DAT_RMR_CONTEXT context)
      : RemoteRegion(address, length), context_(context) {}
  DAT_RMR_CONTEXT context() const { return context_; }

 private:
  DAT_RMR_CONTEXT context_;
};

class DatContext final : public Context {
 public:
  explicit DatContext(Settings settings);
  ~DatContext() override;

  Capabilities capabilities() const override { return caps_; }
  std::string device() const override;
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override;
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override;

  const Settings& settings() const { return settings_; }
  DAT_IA_HANDLE ia() const { return ia_; }
  DAT_PZ_HANDLE pz() const { return pz_; }
  const DAT_IA_ATTR& ia_attr() const { return ia_attr_; }

 private:
  void read_capabilities();
  const char* provider_attribute(const char* name) const;  ///< nullptr when absent
  bool provider_grants(const char* attribute) const;

  Settings settings_;
  DAT_IA_HANDLE ia_ = DAT_HANDLE_NULL;
  DAT_EVD_HANDLE async_evd_ = DAT_HANDLE_NULL;
  DAT_PZ_HANDLE pz_ = DAT_HANDLE_NULL;
  DAT_IA_ATTR ia_attr_{};
  DAT_PROVIDER_ATTR provider_attr_{};
  Capabilities caps_;
};

}  // namespace uniperf::udapl
