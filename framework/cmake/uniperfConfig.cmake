# find_package(uniperf): builds a plugin out of the tree against an installed
# uniperf, exactly as the tree builds its own:
#
#   find_package(uniperf REQUIRED)
#   uniperf_add_plugin(foo SOURCES foo_plugin.cpp LIBRARIES ${FOO_LIBRARY})
#
# The module lands in <build>/lib/uniperf; run it with
# UNIPERF_PLUGIN_PATH=<build>/lib/uniperf uniperf list, or install it next to
# uniperf's own plugins (lib/uniperf of the same prefix). The plugin must be
# built with the compiler and standard library uniperf was built with
# (include/uniperf/plugin.hpp, "ABI"); the loader refuses one that is not.
get_filename_component(UNIPERF_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(UNIPERF_INCLUDE_DIR "${UNIPERF_PREFIX}/include")
set(UNIPERF_EXECUTABLE "${UNIPERF_PREFIX}/bin/uniperf")
include("${CMAKE_CURRENT_LIST_DIR}/UniperfPlugin.cmake")
