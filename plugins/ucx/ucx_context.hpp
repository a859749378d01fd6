// A UCP context with one worker; every endpoint of the Context shares it.
#pragma once

#include <memory>
#include <string>

#include "ucx_common.hpp"

namespace uniperf::ucx {

class UcxMemoryRegion final : public MemoryRegion {
 public:
  /// Registers memory the engine allocated.
  UcxMemoryRegion(ucp_context_h context, void* address, std::size_t length);
  /// Memory UCP allocates and maps itself (UCP_MEM_MAP_ALLOCATE), zeroed;
  /// nullptr when UCP cannot provide page-aligned memory of that size.
  static std::unique_ptr<UcxMemoryRegion> allocate(ucp_context_h context, std::size_t length);
  ~UcxMemoryRegion() override;
  UcxMemoryRegion(const UcxMemoryRegion&) = delete;
  UcxMemoryRegion& operator=(const UcxMemoryRegion&) = delete;
  Bytes remote_key() const override;

 private:
  UcxMemoryRegion(ucp_context_h context, ucp_mem_h memory, void* address, std::size_t length);

  ucp_context_h context_;
  ucp_mem_h memory_ = nullptr;  // unmapping it also frees memory UCP allocated
};

class UcxContext final : public Context {
 public:
  /// Throws OptionError for a value UCX's configuration parser rejects and
  /// Unavailable when UCP cannot start with it (no such transport here).
  explicit UcxContext(const Settings& settings);
  ~UcxContext() override;
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  Capabilities capabilities() const override;
  std::string device() const override;
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override;
  std::unique_ptr<MemoryRegion> allocate_memory(std::size_t length) override;
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override;

 private:
  std::uint32_t acquire_am_id();

  Settings settings_;
  WorkerState state_;
};

}  // namespace uniperf::ucx
