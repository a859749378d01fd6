#include "loader/plugin_registry.hpp"

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>
#include <sstream>

namespace uniperf::loader {
namespace {

constexpr std::string_view kPrefix = "libuniperf-";
constexpr std::string_view kSuffix = ".so";

bool is_plugin_file(const std::filesystem::path& path) {
  const std::string file = path.filename().string();
  return file.size() > kPrefix.size() + kSuffix.size() && file.starts_with(kPrefix) &&
         file.ends_with(kSuffix);
}

std::string stem_name(const std::filesystem::path& path) {
  const std::string file = path.filename().string();
  if (!is_plugin_file(path)) return file;
  return file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size());
}

/// "WorkRequest 56 bytes, here 48; ..." for every size that differs.
std::string fingerprint_difference(const AbiFingerprint& theirs, const AbiFingerprint& ours) {
  const std::pair<const char*, std::uint32_t AbiFingerprint::*> fields[] = {
      {"WorkRequest", &AbiFingerprint::work_request},
      {"RecvRequest", &AbiFingerprint::recv_request},
      {"Completion", &AbiFingerprint::completion},
      {"EndpointParams", &AbiFingerprint::endpoint_params},
      {"Capabilities", &AbiFingerprint::capabilities},
      {"OptionSpec", &AbiFingerprint::option_spec},
      {"std::string", &AbiFingerprint::string},
  };
  std::string text;
  for (const auto& [name, field] : fields) {
    if (theirs.*field == ours.*field) continue;
    if (!text.empty()) text += "; ";
    text += std::string(name) + " " + std::to_string(theirs.*field) + " bytes, here " +
            std::to_string(ours.*field);
  }
  return text;
}

}  // namespace

PluginRegistry::PluginRegistry(const std::vector<std::filesystem::path>& search_dirs)
    : search_dirs_(search_dirs) {
  for (const auto& dir : search_dirs_) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && is_plugin_file(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      LoadedPlugin loaded = load(file);
      if (loaded.ok() && find(loaded.name) != nullptr) {
        loaded.load_error = "shadowed by an earlier plugin named '" + loaded.name + "'";
        loaded.plugin.reset();
      }
      plugins_.push_back(std::move(loaded));
    }
  }
}

PluginRegistry::~PluginRegistry() {
  plugins_.clear();  // plugin objects first, then the code they live in
  libraries_.clear();
}

LoadedPlugin PluginRegistry::load(const std::filesystem::path& library) {
  LoadedPlugin result;
  result.path = library;
  result.name = stem_name(library);
  boost::dll::shared_library lib;
  try {
    lib.load(library.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    result.load_error = std::string("cannot load: ") + e.what();
    return result;
  }
  if (!lib.has(kPluginEntrySymbol)) {
    result.load_error = std::string("not a uniperf plugin: no '") + kPluginEntrySymbol + "' symbol";
    return result;
  }
  const auto& entry = lib.get<const PluginEntry>(kPluginEntrySymbol);
  if (entry.abi_major != kAbiMajor || entry.abi_minor > kAbiMinor) {
    std::ostringstream message;
    message << "built for plugin ABI " << entry.abi_major << "." << entry.abi_minor
            << ", this uniperf speaks " << kAbiMajor << "." << kAbiMinor
            << ": rebuild the plugin against this uniperf";
    result.load_error = message.str();
    return result;
  }
  if (const AbiFingerprint expected; !(entry.fingerprint == expected)) {
    result.load_error = library.filename().string() +
                        " was built with other type layouts than this uniperf (" +
                        fingerprint_difference(entry.fingerprint, expected) +
                        "): rebuild the plugin against this uniperf, with the same compiler and "
                        "standard library";
    return result;
  }
  try {
    result.plugin = entry.create();
    if (!result.plugin) throw std::runtime_error("factory returned no plugin");
    // Configs name a plugin by what name() says, the scan finds it by file
    // name: the two must agree, or a config could get another plugin's code.
    if (const std::string named = result.plugin->name(); named != result.name) {
      result.plugin.reset();
      result.load_error = library.filename().string() + " calls itself '" + named +
                          "' (name()), but a plugin's file must be libuniperf-<name>.so: rename "
                          "it libuniperf-" +
                          named + ".so or fix its name()";
      return result;
    }
  } catch (const std::exception& e) {
    result.plugin.reset();
    result.load_error = std::string("plugin factory failed: ") + e.what();
    return result;
  } catch (...) {
    result.plugin.reset();
    result.load_error = "plugin factory failed with an unknown exception";
    return result;
  }
  libraries_.push_back(std::move(lib));
  return result;
}

void PluginRegistry::adopt(std::unique_ptr<Plugin> plugin, const std::string& origin) {
  LoadedPlugin adopted;
  adopted.path = origin;
  adopted.name = plugin->name();
  adopted.plugin = std::move(plugin);
  if (find(adopted.name) != nullptr) {
    adopted.load_error = "shadowed by an earlier plugin named '" + adopted.name + "'";
    adopted.plugin.reset();
  }
  plugins_.push_back(std::move(adopted));
}

Plugin* PluginRegistry::find(std::string_view name) const {
  for (const auto& p : plugins_) {
    if (p.ok() && p.name == name) return p.plugin.get();
  }
  return nullptr;
}

std::vector<std::string> PluginRegistry::names() const {
  std::vector<std::string> names;
  for (const auto& p : plugins_) {
    if (p.ok()) names.push_back(p.name);
  }
  return names;
}

std::string PluginRegistry::why_missing(std::string_view name) const {
  for (const auto& p : plugins_) {
    if (p.name == name && !p.ok()) return p.path.string() + ": " + p.load_error;
  }
  std::string dirs;
  for (const auto& d : search_dirs_) {
    if (!dirs.empty()) dirs += ':';
    dirs += d.string();
  }
  return "no plugin named '" + std::string(name) + "' in " +
         (dirs.empty() ? "(no directory)" : dirs) + " (was it built? see `uniperf list`)";
}

std::vector<std::filesystem::path> default_search_path() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("UNIPERF_PLUGIN_PATH"); env != nullptr && *env != '\0') {
    std::stringstream list(env);
    std::string dir;
    while (std::getline(list, dir, ':')) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
  const auto exe_dir = std::filesystem::path(boost::dll::program_location().string()).parent_path();
  dirs.push_back(exe_dir.parent_path() / "lib" / "uniperf");
  return dirs;
}

}  // namespace uniperf::loader
