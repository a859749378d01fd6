#include "minimal_plugin.hpp"
// What a plugin built before ABI 3.0 exports: major 2, and a Capabilities
// without max_send_depth and max_recv_depth (two uint32_t, 8 bytes shorter).
// The engine would read its capabilities past their end: the loader must
// refuse it without calling create.
namespace {
constexpr uniperf::AbiFingerprint abi2_layout() {
  uniperf::AbiFingerprint fingerprint;
  fingerprint.capabilities -= 2 * sizeof(std::uint32_t);
  return fingerprint;
}
}  // namespace
extern "C" __attribute__((visibility("default")))
const uniperf::PluginEntry uniperf_plugin_entry = {
    2, 0, abi2_layout(), []() -> std::unique_ptr<uniperf::Plugin> { std::abort(); }};
