// Finds, checks and loads transport plugins (Boost.DLL). A plugin that is
// broken (missing entry symbol, ABI mismatch, throwing factory) is recorded
// with the reason and skipped; the others keep working.
#pragma once

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::loader {

struct LoadedPlugin {
  std::filesystem::path path;
  std::string name;                ///< from Plugin::name(), or the file stem when broken
  std::string load_error;          ///< non-empty when the library could not be used
  std::unique_ptr<Plugin> plugin;  ///< null when load_error is set

  bool ok() const { return plugin != nullptr; }
};

class PluginRegistry {
 public:
  /// Scans each directory (in order) for libuniperf-<name>.so. The first
  /// plugin of a name wins; later ones of the same name are reported as
  /// shadowed.
  explicit PluginRegistry(const std::vector<std::filesystem::path>& search_dirs);
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  /// Every library found, working or not, in load order.
  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }
  /// The working plugin of that name, or nullptr.
  Plugin* find(std::string_view name) const;
  /// The names of the working plugins, in load order.
  std::vector<std::string> names() const;
  /// Why find(name) returned nullptr, in one sentence.
  std::string why_missing(std::string_view name) const;

  /// Loads one library; used by the scan and by the loader tests.
  LoadedPlugin load(const std::filesystem::path& library);

  /// Registers a plugin object that lives in this process rather than in a
  /// library of its own (the conformance suite's contract checker, which
  /// wraps a loaded plugin). `origin` says where it came from in messages.
  /// Like a scanned library, it is shadowed by an earlier plugin of its name.
  void adopt(std::unique_ptr<Plugin> plugin, const std::string& origin);

 private:
  std::vector<std::filesystem::path> search_dirs_;
  // Libraries outlive every plugin object (plugins_ is destroyed first, see
  // the destructor), so no code is unmapped while its objects live.
  std::vector<boost::dll::shared_library> libraries_;
  std::vector<LoadedPlugin> plugins_;
};

/// $UNIPERF_PLUGIN_PATH (colon-separated), then <dir of exe>/../lib/uniperf.
std::vector<std::filesystem::path> default_search_path();

}  // namespace uniperf::loader
