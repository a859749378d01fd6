// The mpi plugin's life in one process, run by mpi_e2e.py as each rank of
// `mpirun -np 2`: two Contexts may live at once (MPI_THREAD_MULTIPLE, one
// per concurrent flow), the Plugin's destruction finalizes MPI, and a Plugin
// made afterwards in the same process reports MPI unavailable with the
// reason (Open MPI cannot initialise again) instead of failing in MPI_Init.
// Loads the plugin library as the loader does (dlopen, the entry symbol).
// Prints one "ok" line and exits 0, or says what failed and exits 1.
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <uniperf/plugin.hpp>

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "mpi_lifecycle: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: mpi_lifecycle PATH/libuniperf-mpi.so");
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return fail(std::string("dlopen: ") + dlerror());
  const auto* entry =
      static_cast<const uniperf::PluginEntry*>(dlsym(library, uniperf::kPluginEntrySymbol));
  if (entry == nullptr) return fail("no plugin entry");
  if (entry->abi_major != uniperf::kAbiMajor || !(entry->fingerprint == uniperf::AbiFingerprint{}))
    return fail("plugin of another ABI");

  std::string device;
  {
    auto plugin = entry->create();
    if (const std::string why = plugin->probe(); !why.empty())
      return fail("probe under mpirun says: " + why);
    auto first = plugin->open(uniperf::Options{});
    // A second Context while the first lives: a second concurrent flow's.
    auto second = plugin->open(uniperf::Options{});
    device = second->device();
    if (device.find("MPI_THREAD_MULTIPLE") == std::string::npos)
      return fail("MPI did not grant MPI_THREAD_MULTIPLE: " + device);
    second.reset();
    first.reset();
  }  // the Plugin goes: MPI_Finalize

  auto again = entry->create();
  const std::string why = again->probe();
  if (why.find("finalized") == std::string::npos)
    return fail("after the plugin was destroyed, probe says '" + why + "', not finalized");
  try {
    again->open(uniperf::Options{});
    return fail("open() after MPI_Finalize succeeded");
  } catch (const uniperf::Unavailable& e) {
    if (std::string(e.what()) != why) return fail(std::string("open() says: ") + e.what());
  }
  std::printf("ok: %s; after finalize: unavailable: %s\n", device.c_str(), why.c_str());
  return 0;
}
