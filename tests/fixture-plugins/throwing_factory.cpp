#include <stdexcept>

#include "minimal_plugin.hpp"
extern "C" __attribute__((visibility("default")))
const uniperf::PluginEntry uniperf_plugin_entry = {
    uniperf::kAbiMajor, uniperf::kAbiMinor, uniperf::AbiFingerprint{},
    []() -> std::unique_ptr<uniperf::Plugin> {
      throw std::runtime_error("cannot initialise the fixture");
    }};
