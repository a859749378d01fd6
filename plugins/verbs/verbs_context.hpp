// One opened RDMA device port: the device context, its protection domain,
// the GID (or LID) that addresses this side, and the capabilities read from
// the device and from a probe queue pair of the configured type.
#pragma once

#include <string>

#include "verbs_common.hpp"

namespace uniperf::verbs {

/// A registered buffer; the peer targets it with its rkey.
class VerbsMemory final : public MemoryRegion {
 public:
  VerbsMemory(void* address, std::size_t length, MrPtr mr)
      : MemoryRegion(address, length), mr_(std::move(mr)), lkey_(mr_->lkey) {}
  Bytes remote_key() const override;
  std::uint32_t lkey() const { return lkey_; }
  std::uint64_t at(std::uint64_t offset) const {
    return reinterpret_cast<std::uint64_t>(address()) + offset;
  }

 private:
  MrPtr mr_;
  std::uint32_t lkey_;
};

class VerbsRemote final : public RemoteRegion {
 public:
  VerbsRemote(std::uint64_t address, std::uint64_t length, std::uint32_t rkey)
      : RemoteRegion(address, length), rkey_(rkey) {}
  std::uint32_t rkey() const { return rkey_; }
  std::uint64_t at(std::uint64_t offset) const { return address() + offset; }

 private:
  std::uint32_t rkey_;
};

class VerbsContext final : public Context {
 public:
  explicit VerbsContext(Settings settings);
  ~VerbsContext() override;

  Capabilities capabilities() const override { return caps_; }
  std::string device() const override;
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override;
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override;

  const Settings& settings() const { return settings_; }
  ibv_context* verbs() const { return device_.get(); }
  ibv_pd* pd() const { return pd_.get(); }
  const std::string& device_name() const { return name_; }
  const ibv_device_attr_ex& device_attr() const { return device_attr_; }
  const ibv_port_attr& port_attr() const { return port_attr_; }
  bool ethernet() const { return port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET; }
  /// The GID index addressing this side, or -1 for LID routing (InfiniBand
  /// without a configured gid_index: no GRH).
  int gid_index() const { return gid_index_; }
  const ibv_gid& gid() const { return gid_; }
  /// The GID's IPv4 address ("10.77.0.1") when it is IPv4-mapped, else "".
  std::string gid_ipv4() const;
  /// The path MTU this side asks for (the config's, or the port's active one).
  ibv_mtu path_mtu() const { return path_mtu_; }
  /// What the queue pairs are created with: max_inline_data asked and got.
  std::uint32_t inline_request() const { return inline_request_; }
  /// Reads and atomics this side may have in flight as initiator / target.
  std::uint32_t initiator_depth() const;
  std::uint32_t responder_resources() const;
  /// ibv_modify_cq moderation: the device's cq_count limit, 0 when it has none.
  std::uint32_t max_cq_moderation() const { return device_attr_.cq_mod_caps.max_cq_count; }
  std::uint32_t max_cq_period_us() const { return device_attr_.cq_mod_caps.max_cq_period; }
  int access_flags() const { return access_; }

 private:
  void open_device();
  void choose_gid();
  void probe_queue_pair();
  void read_capabilities();

  Settings settings_;
  std::string name_;
  DevicePtr device_;
  PdPtr pd_;
  ibv_device_attr_ex device_attr_{};
  ibv_port_attr port_attr_{};
  int gid_index_ = -1;
  ibv_gid gid_{};
  std::string gid_type_;  // "RoCE v2", "RoCE v1", "IB"
  ibv_mtu path_mtu_ = IBV_MTU_1024;
  std::uint32_t inline_request_ = 0;
  std::uint32_t max_inline_ = 0;
  int access_ = 0;
  Capabilities caps_;
};

}  // namespace uniperf::verbs
