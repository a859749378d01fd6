# The build rules every plugin shares: a plugin is a loadable module in
# lib/uniperf/, built against framework/include only, with hidden symbols but
# its entry point, and no undefined symbol left for the loader to find.
#
# In the tree, the top CMakeLists.txt sets the variables below before it
# includes this file. Out of the tree, find_package(uniperf) does
# (uniperfConfig.cmake): UNIPERF_INCLUDE_DIR is the installed include/, the
# plugin lands in <build>/lib/uniperf (UNIPERF_PLUGIN_PATH finds it there)
# and installs to lib/uniperf of its own prefix.
if(NOT DEFINED UNIPERF_PLUGIN_OUTPUT_DIR)
  set(UNIPERF_PLUGIN_OUTPUT_DIR ${CMAKE_BINARY_DIR}/lib/uniperf)
endif()
if(NOT DEFINED UNIPERF_PLUGIN_INSTALL_DIR)
  set(UNIPERF_PLUGIN_INSTALL_DIR lib/uniperf)
endif()

# uniperf_add_plugin_module(TARGET [NO_INSTALL] [OUTPUT_NAME name]
#                           SOURCES src... [LIBRARIES lib...])
# One module with the plugin properties, next to the plugins. For a plugin's
# own library that its open() loads later (udapl's DAT half, which must not be
# loaded before the plugin sets DAT_OVERRIDE); uniperf_add_plugin uses it for
# the plugin itself.
function(uniperf_add_plugin_module target)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_NAME" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_include_directories(${target} PRIVATE ${UNIPERF_INCLUDE_DIR})
  target_compile_features(${target} PRIVATE cxx_std_20)
  target_link_libraries(${target} PRIVATE ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX lib
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY ${UNIPERF_PLUGIN_OUTPUT_DIR})
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${UNIPERF_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# uniperf_add_plugin(NAME [NO_INSTALL] SOURCES src... [LIBRARIES lib...])
# Builds plugins/<NAME> as a loadable module next to the others. A plugin's
# own CMakeLists.txt finds its transport library and calls this only when the
# library is present; otherwise it calls uniperf_skip_plugin(NAME REASON).
# NO_INSTALL builds the module for the build tree's tests only
# (plugins/template, which exists to be copied, not to be shipped).
function(uniperf_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target uniperf_plugin_${name})
  set(no_install "")
  if(ARG_NO_INSTALL)
    set(no_install NO_INSTALL)
  endif()
  uniperf_add_plugin_module(${target} ${no_install}
    OUTPUT_NAME uniperf-${name} SOURCES ${ARG_SOURCES} LIBRARIES ${ARG_LIBRARIES})
  set_property(GLOBAL APPEND PROPERTY UNIPERF_PLUGINS ${name})
  message(STATUS "uniperf: plugin '${name}' will be built")
endfunction()

function(uniperf_skip_plugin name reason)
  message(STATUS "uniperf: plugin '${name}' NOT built: ${reason}")
endfunction()
