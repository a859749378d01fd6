#include "minimal_plugin.hpp"
UNIPERF_PLUGIN(MinimalPlugin)
