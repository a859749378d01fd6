#include "minimal_plugin.hpp"
// Right version numbers, but a WorkRequest of another size: what a plugin
// built from a header edited without the kAbiMajor bump looks like. The
// loader must refuse it without calling create.
namespace {
constexpr uniperf::AbiFingerprint other_layout() {
  uniperf::AbiFingerprint fingerprint;
  fingerprint.work_request += 8;
  return fingerprint;
}
}  // namespace
extern "C" __attribute__((visibility("default")))
const uniperf::PluginEntry uniperf_plugin_entry = {
    uniperf::kAbiMajor, uniperf::kAbiMinor, other_layout(),
    []() -> std::unique_ptr<uniperf::Plugin> { std::abort(); }};
