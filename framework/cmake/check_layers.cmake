# Fails when a file includes a header its layer may not see. Linking catches
# a layer that *calls* another it does not link, but not one that includes a
# header-only library (nlohmann-json, fmt in header mode) or an inline header
# of another layer; this check does. Run by the build (target
# uniperf_layer_check) whenever a source changes, and as a ctest test.
#
#   cmake -DSOURCE_DIR=<repo> [-DSTAMP=<file>] -P framework/cmake/check_layers.cmake
#
# The table mirrors docs/architecture.md: for each layer of framework/src,
# the layers and the third-party headers it may include. Plugins may include
# only <uniperf/...> of the framework and nothing under framework/src.

set(project_layers model bootstrap engine loader suite results report session cli)
set(third_party nlohmann yaml-cpp fmt CLI boost)

set(allowed_model model)
set(allowed_bootstrap bootstrap)
set(allowed_engine engine model bootstrap)
set(allowed_loader loader boost)
set(allowed_suite suite model yaml-cpp)
set(allowed_results results model nlohmann fmt)
set(allowed_report report results model nlohmann fmt)
set(allowed_session session engine model bootstrap suite loader results nlohmann fmt)
set(allowed_cli ${project_layers} ${third_party})

set(violations "")

# The first path component of every `#include` in `file`, both "..." and <...>.
function(included_roots file out)
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  set(roots "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*" "\\1" path "${line}")
    string(REGEX REPLACE "/.*" "" root "${path}")
    if(NOT path STREQUAL root)  # a bare <vector> or "x.hpp" names no layer
      list(APPEND roots "${root}|${path}")
    endif()
  endforeach()
  set(${out} "${roots}" PARENT_SCOPE)
endfunction()

foreach(layer IN LISTS project_layers)
  file(GLOB_RECURSE files ${SOURCE_DIR}/framework/src/${layer}/*.hpp
       ${SOURCE_DIR}/framework/src/${layer}/*.cpp)
  list(FILTER files EXCLUDE REGEX "/vendor/")
  foreach(file IN LISTS files)
    included_roots(${file} roots)
    foreach(entry IN LISTS roots)
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 root)
      list(GET parts 1 path)
      list(FIND project_layers ${root} is_layer)
      list(FIND third_party ${root} is_third_party)
      if(is_layer EQUAL -1 AND is_third_party EQUAL -1)
        continue()  # the C++ or C library, the OS, or <uniperf/...>
      endif()
      list(FIND allowed_${layer} ${root} ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
        string(APPEND violations "  ${rel}: layer '${layer}' may not include '${path}'\n")
      endif()
    endforeach()
  endforeach()
endforeach()

file(GLOB_RECURSE plugin_files ${SOURCE_DIR}/plugins/*.hpp ${SOURCE_DIR}/plugins/*.cpp
     ${SOURCE_DIR}/plugins/*.h ${SOURCE_DIR}/plugins/*.c)
foreach(file IN LISTS plugin_files)
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*" "\\1" path "${line}")
    string(REGEX REPLACE "/.*" "" root "${path}")
    list(FIND project_layers ${root} is_layer)
    if(NOT is_layer EQUAL -1 OR path MATCHES "framework/src" OR path MATCHES "^\\.\\./")
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
      string(APPEND violations
             "  ${rel}: a plugin may include only <uniperf/...> of the framework, not '${path}'\n")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "uniperf layering (docs/architecture.md) is broken:\n${violations}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
