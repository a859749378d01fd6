// Shared pieces of the `verbs` plugin: owning handles for libibverbs objects,
// error text, and the settings parsed from a config's options.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>

namespace uniperf::verbs {

/// Setup-path waits (the rdma_cm handshake) give up after this.
inline constexpr std::chrono::seconds kConnectTimeout{20};

// Owning handles for libibverbs objects, released with their destroy
// function (ibv_dealloc_pd, ibv_destroy_cq, ...; see support::Handle).
using DevicePtr = support::Handle<ibv_context*, &ibv_close_device>;
using PdPtr = support::Handle<ibv_pd*, &ibv_dealloc_pd>;
using MrPtr = support::Handle<ibv_mr*, &ibv_dereg_mr>;
using CqPtr = support::Handle<ibv_cq*, &ibv_destroy_cq>;
using QpPtr = support::Handle<ibv_qp*, &ibv_destroy_qp>;
using SrqPtr = support::Handle<ibv_srq*, &ibv_destroy_srq>;
using AhPtr = support::Handle<ibv_ah*, &ibv_destroy_ah>;
using ChannelPtr = support::Handle<ibv_comp_channel*, &ibv_destroy_comp_channel>;

/// "verbs: what: strerror(error)". libibverbs reports errors through errno
/// (or returns it); `error` is that value.
inline std::string verbs_error(const std::string& what, int error) {
  return "verbs: " + what + ": " + support::errno_text(error);
}

/// Why ibv_get_device_list found nothing to open ("no RDMA device (...)").
inline std::string no_device_reason(int error) {
  if (error == ENOSYS) {
    // rdma-core's answer when the kernel has no user verbs (ib_uverbs) at all.
    return "no RDMA device (no kernel RDMA support: ibv_get_device_list: ENOSYS)";
  }
  return std::string("no RDMA device (ibv_get_device_list: ") + std::strerror(error) + ")";
}

enum class QpKind : std::uint8_t { rc, uc, ud };
enum class ConnectMethod : std::uint8_t { bootstrap, rdma_cm };

inline const char* to_string(QpKind kind) {
  return kind == QpKind::rc ? "rc" : kind == QpKind::uc ? "uc" : "ud";
}

struct Settings {
  std::string device;  ///< "" = the first device ibv_get_device_list names
  int port = 1;
  int gid_index = -1;  ///< -1 = chosen (RoCE v2 with an IPv4 address; LID on InfiniBand)
  QpKind kind = QpKind::rc;
  ConnectMethod connect = ConnectMethod::bootstrap;
  int mtu = 0;  ///< bytes, 256..4096; 0 = the port's active MTU
  int timeout = 14;
  int retry_cnt = 7;
  int rnr_retry = 7;
  int min_rnr_timer = 12;
  int max_rd_atomic = 0;  ///< reads/atomics in flight; 0 = the device's maximum
  bool srq = false;
  std::uint32_t inline_request = 256;  ///< max_inline_data asked of the QP
  std::string cm_address;  ///< rdma_cm: where the responder listens ("" = its GID's IPv4)
  int cm_port = 0;         ///< rdma_cm: the responder's port (0 = any)
};

/// The IB path MTU enum for a size in bytes; 0 when it is not one.
inline ibv_mtu mtu_from_bytes(int bytes) {
  switch (bytes) {
    case 256:
      return IBV_MTU_256;
    case 512:
      return IBV_MTU_512;
    case 1024:
      return IBV_MTU_1024;
    case 2048:
      return IBV_MTU_2048;
    case 4096:
      return IBV_MTU_4096;
    default:
      return static_cast<ibv_mtu>(0);
  }
}

inline const char* state_name(ibv_qp_state state) {
  switch (state) {
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    default:
      return "?";
  }
}

inline int mtu_bytes(ibv_mtu mtu) {
  return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

}  // namespace uniperf::verbs
