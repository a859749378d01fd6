#include "minimal_plugin.hpp"
// A healthy plugin in the wrong file: libuniperf-misnamed.so says its name
// is "impostor", so a config naming either would find the wrong code.
class Misnamed : public MinimalPlugin {
 public:
  std::string name() const override { return "impostor"; }
};
UNIPERF_PLUGIN(Misnamed)
