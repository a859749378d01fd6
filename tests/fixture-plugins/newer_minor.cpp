#include "minimal_plugin.hpp"
// Same major, newer minor: it may call what this engine does not have.
extern "C" __attribute__((visibility("default")))
const uniperf::PluginEntry uniperf_plugin_entry = {
    uniperf::kAbiMajor, uniperf::kAbiMinor + 1, uniperf::AbiFingerprint{},
    []() -> std::unique_ptr<uniperf::Plugin> { std::abort(); }};
