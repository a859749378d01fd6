// One opened libfabric provider: fabric and domain chosen by fi_getinfo from
// the config, the capabilities read back from the fi_info it returned, and
// memory registration under the provider's mr_mode.
#pragma once

#include <vector>

#include "ofi_common.hpp"

namespace uniperf::ofi {

/// A registered buffer. The peer addresses it by key, and by virtual address
/// or offset depending on FI_MR_VIRT_ADDR (the importer's domain knows which).
class OfiMemory final : public MemoryRegion {
 public:
  OfiMemory(void* address, std::size_t length, FiPtr<fid_mr> mr)
      : MemoryRegion(address, length), mr_(std::move(mr)), desc_(fi_mr_desc(mr_.get())) {}
  Bytes remote_key() const override;
  fid_mr* mr() const { return mr_.get(); }
  void* desc() const { return desc_; }
  std::byte* at(std::uint64_t offset) const { return static_cast<std::byte*>(address()) + offset; }

 private:
  FiPtr<fid_mr> mr_;
  void* desc_;
};

class OfiContext final : public Context {
 public:
  explicit OfiContext(Settings settings);
  ~OfiContext() override;

  Capabilities capabilities() const override { return caps_; }
  std::string device() const override;
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override;
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override;

  const Settings& settings() const { return settings_; }
  const fi_info& info() const { return *info_; }
  fid_fabric* fabric() const { return fabric_.get(); }
  fid_domain* domain() const { return domain_.get(); }
  bool virtual_addressing() const { return (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0; }
  bool endpoint_bound_memory() const { return (info_->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0; }
  /// FI_MR_ENDPOINT: regions registered since the last connect, to bind to
  /// the endpoint that connect creates.
  std::vector<OfiMemory*> take_unbound_memory();
  /// Registers plugin-owned memory (atomic operands) the same way.
  FiPtr<fid_mr> register_raw(void* address, std::size_t length);

 private:
  void read_capabilities();
  bool cq_wait_fd_works() const;

  Settings settings_;
  InfoPtr info_;
  FiPtr<fid_fabric> fabric_;
  FiPtr<fid_domain> domain_;
  Capabilities caps_;
  std::uint64_t next_key_ = 1;
  std::vector<OfiMemory*> unbound_;
};

/// Every (provider, endpoint type) fi_getinfo offers here, "tcp msg|rdm, shm rdm".
std::string offered_providers();

}  // namespace uniperf::ofi
