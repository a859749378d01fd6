// The `udapl` plugin: the DAT 2.0 API (uDAPL) over any provider a dat.conf
// names (cma over rdma_cm, scm over sockets, ...). This file holds what needs
// no DAT library: options, probe, and open(), which applies the config's
// dat_conf through DAT_OVERRIDE and then loads libuniperf_udapl_dat.so
// (linked with libdat2) for the IA, memory and endpoints. See CMakeLists.txt
// for why the two are separate modules.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "udapl_settings.hpp"

namespace uniperf::udapl {
namespace {

namespace fs = std::filesystem;

/// The directory this plugin was loaded from: the DAT module sits next to it.
fs::path module_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_directory), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  return fs::path(info.dli_fname).parent_path();
}

class UdaplPlugin final : public Plugin {
 public:
  std::string name() const override { return "udapl"; }
  std::string version() const override { return "0.1.0"; }
  std::string library_version() const override { return "DAT 2.0 (libdat2.so.2)"; }
  std::string description() const override {
    return "uDAPL (DAT 2.0): any IA of the DAT registry (cma, scm providers)";
  }

  std::vector<OptionSpec> options() const override {
    return {
        {"provider", OptionType::string, "ofa-v2-cma-roe-rxe",
         "IA name in the DAT registry (a dat.conf line's first field)"},
        {"dat_conf", OptionType::string, "",
         "dat.conf to use (set as DAT_OVERRIDE before libdat2 loads); unset = /etc/dat.conf or "
         "the environment's DAT_OVERRIDE. ${config_dir} names the config file's directory"},
        {"port",
         OptionType::integer,
         "0",
         "conn_qual of the responder's PSP (plus the endpoint index); 0 = any free one "
         "(dat_psp_create_any), sent to the initiator over the control channel",
         {},
         0,
         65535},
        {"peer_address", OptionType::string, "",
         "numeric IP the initiator connects to; unset = the address the responder's IA reports "
         "(dat_ia_query), else the control connection's peer"},
        {"evd_qlen",
         OptionType::integer,
         "0",
         "DTO EVD length (sends and receives share it); 0 = send depth + receive depth + 16",
         {},
         0,
         1 << 24},
    };
  }

  std::string probe() const override {
    // Nothing of DAT is loaded here: libdat2 would read its registry now,
    // before a config could point DAT_OVERRIDE at its dat.conf.
    std::error_code ec;
    const fs::path devices("/sys/class/infiniband");
    if (!fs::is_directory(devices, ec) || fs::is_empty(devices, ec)) {
      return "no RDMA device (/sys/class/infiniband is empty or missing)";
    }
    const fs::path dat = module_directory() / kDatModule;
    if (!fs::exists(dat, ec)) return "the DAT module " + dat.string() + " is missing";
    return "";
  }

  std::unique_ptr<Context> open(const Options& options) override {
    // No device, no IA: say so rather than what dat_ia_open makes of it.
    if (const std::string missing = probe(); !missing.empty())
      throw Unavailable("udapl: " + missing);
    Settings s;
    s.provider = options.string("provider");
    if (s.provider.empty()) throw OptionError("udapl: option 'provider' is empty");
    s.dat_conf = options.string("dat_conf");
    // Ranges were checked by the loader against options().
    s.port = static_cast<int>(options.integer("port"));
    s.peer_address = options.string("peer_address");
    s.evd_qlen = static_cast<int>(options.integer("evd_qlen"));

    if (!s.dat_conf.empty()) apply_dat_conf(s.dat_conf);

    // libdat2 goes in the global namespace: the provider libraries it
    // dlopens (libdaplofa, libdaploscm) call back into it
    // (dat_registry_add_provider) and fail to load without it.
    if (dlopen("libdat2.so.2", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) == nullptr) {
      const char* why = dlerror();
      throw Unavailable(std::string("udapl: cannot load libdat2.so.2: ") + (why ? why : "?"));
    }
    const fs::path path = module_directory() / kDatModule;
    // Never unloaded: the Contexts it makes run its code until they die.
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (module == nullptr) {
      const char* why = dlerror();
      throw Unavailable("udapl: cannot load " + path.string() + ": " + (why ? why : "?"));
    }
    auto open_ia = reinterpret_cast<OpenFunction>(dlsym(module, kOpenSymbol));
    if (open_ia == nullptr) {
      throw Unavailable("udapl: " + path.string() + " has no " + kOpenSymbol);
    }
    return std::unique_ptr<Context>(open_ia(s));
  }

 private:
  static void apply_dat_conf(const std::string& file) {
    if (!std::ifstream(file)) {
      throw OptionError("udapl: option 'dat_conf': cannot read '" + file + "'");
    }
    const std::string absolute = fs::absolute(file).lexically_normal().string();
    const char* current = std::getenv("DAT_OVERRIDE");
    // libdat2 reads its registry once per process, when it is loaded.
    if (void* dat = dlopen("libdat2.so.2", RTLD_NOW | RTLD_NOLOAD); dat != nullptr) {
      dlclose(dat);
      if (current == nullptr || absolute != fs::absolute(current).lexically_normal().string()) {
        throw Unavailable("udapl: this process already read the DAT registry from " +
                          std::string(current ? current : "/etc/dat.conf") + "; dat_conf '" + file +
                          "' applies only before the first open");
      }
      return;
    }
    setenv("DAT_OVERRIDE", absolute.c_str(), 1);
  }
};

}  // namespace
}  // namespace uniperf::udapl

UNIPERF_PLUGIN(uniperf::udapl::UdaplPlugin)
