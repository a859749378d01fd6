#!/usr/bin/env bash
# The layer check (framework/cmake/check_layers.cmake) passes on this tree and
# refuses each kind of wrong include on a small tree made for the purpose.
set -euo pipefail
source_dir=$1
check=$source_dir/framework/cmake/check_layers.cmake
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake -DSOURCE_DIR="$source_dir" -P "$check"
echo "ok: this tree keeps its layers"

expect_refused() {  # name, file, include line, expected text
  rm -rf "$work/tree"
  mkdir -p "$work/tree/$(dirname "$2")"
  printf '%s\n' "$3" >"$work/tree/$2"
  if out=$(cmake -DSOURCE_DIR="$work/tree" -P "$check" 2>&1); then
    echo "FAIL: $1 was accepted"; exit 1
  fi
  grep -qF -- "$4" <<<"$out" || { echo "FAIL: $1: message lacks '$4':"; echo "$out"; exit 1; }
  echo "ok: $1 refused"
}
expect_refused "the engine including yaml-cpp" framework/src/engine/x.cpp \
  '#include <yaml-cpp/yaml.h>' "layer 'engine' may not include 'yaml-cpp/yaml.h'"
expect_refused "the engine including the session" framework/src/engine/x.hpp \
  '#include "session/session.hpp"' "layer 'engine' may not include 'session/session.hpp'"
expect_refused "the model including the engine" framework/src/model/x.hpp \
  '#include "engine/runner.hpp"' "layer 'model' may not include 'engine/runner.hpp'"
expect_refused "results including a view" framework/src/results/x.cpp \
  '#include "report/table.hpp"' "layer 'results' may not include 'report/table.hpp'"
expect_refused "a plugin including the engine" plugins/p/p.cpp \
  '#include "engine/runner.hpp"' "a plugin may include only <uniperf/...>"
expect_refused "a plugin reaching into framework/src" plugins/p/p.cpp \
  '#include "../../framework/src/engine/runner.hpp"' "a plugin may include only <uniperf/...>"

# And the standard library, the OS and <uniperf/...> are always fine.
rm -rf "$work/tree"; mkdir -p "$work/tree/framework/src/model" "$work/tree/plugins/p"
printf '#include <vector>\n#include <sys/socket.h>\n#include <uniperf/plugin.hpp>\n' \
  >"$work/tree/framework/src/model/x.hpp"
printf '#include <uniperf/plugin.hpp>\n#include "p_local.hpp"\n#include <rdma/fabric.h>\n' \
  >"$work/tree/plugins/p/p.cpp"
cmake -DSOURCE_DIR="$work/tree" -P "$check"
echo "ok: system, transport and <uniperf/...> headers accepted"
echo "7 passed, 0 failed"
