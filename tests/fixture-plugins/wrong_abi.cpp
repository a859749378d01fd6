#include "minimal_plugin.hpp"
// Claims a future major ABI: the loader must refuse it without calling create.
extern "C" __attribute__((visibility("default")))
const uniperf::PluginEntry uniperf_plugin_entry = {
    uniperf::kAbiMajor + 1, 0, uniperf::AbiFingerprint{},
    []() -> std::unique_ptr<uniperf::Plugin> { std::abort(); }};
