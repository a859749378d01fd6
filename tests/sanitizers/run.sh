#!/usr/bin/env bash
# Builds with sanitizers and runs tests under them:
#
#   tests/sanitizers/run.sh asan    # AddressSanitizer + UndefinedBehaviorSanitizer
#                                   # (and LeakSanitizer), in build-asan/
#   tests/sanitizers/run.sh tsan    # ThreadSanitizer, in build-tsan/
#   tests/sanitizers/run.sh MODE [CTEST_ARGS...]   # e.g. -R 'Bootstrap|ChannelMux'
#   tests/sanitizers/run.sh MODE --build-only      # the build alone (CI builds
#                                   # both beside its loaded ctest pass)
#
# asan: the whole tree (framework, every plugin, the tests); runs the unit,
# conformance and end-to-end tests but the slowest repeats (below). The
# report views and the Soft-RoCE lab are left out: they add Python, chromium
# and QEMU, not code of ours that the other tests do not run.
# tsan: ThreadSanitizer is for the threads of our own code (concurrent flows,
# the control channel's mux, the watchdog, a local pair's two processes), so
# it builds the unit tests, uniperf and the plugins written here (tcp,
# template), not those over UCX, libfabric, verbs and uDAPL (uninstrumented
# libraries with threads of their own: noise, and the conformance and e2e
# binaries need every plugin). It runs the unit tests, then the concurrent
# and quick suites over configs/tcp.yaml in local-pair mode.
#
# Any report fails the test that made it (halt_on_error). The suppression
# files beside this script name third-party libraries only, each with why.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/tests/sanitizers

mode=${1:?usage: tests/sanitizers/run.sh asan|tsan [--build-only | CTEST_ARGS...]}
shift
build_only=false
if [ "${1:-}" = --build-only ]; then
  build_only=true
  shift
fi
case $mode in
  asan)
    sanitize=address,undefined
    targets=(all)
    # Not install_e2e: packaging, with the same quick suite twice. The
    # quick suite over every stock config and its two-hosts run stay: in
    # the suite's quick form (tests/e2e) they took 4-8 s each under ASan
    # (2026-12-03), where the whole suite took minutes.
    select=(-LE 'report|lab' -E 'install_e2e')
    ;;
  tsan)
    sanitize=thread
    targets=(uniperf_unit_tests uniperf uniperf_plugin_tcp uniperf_plugin_template)
    for fixture in good no_entry wrong_abi newer_minor throwing_factory wrong_fingerprint misnamed; do
      targets+=("fixture_$fixture")
    done
    # The unit tests (no label); the other binaries are not built here. Not
    # the two shards of the odd-parameter sweep over the capable fake
    # transport (130 s each under TSan, the longest pole of this step): the
    # two shards over the limited one run the same two-thread pair, and
    # the release and ASan passes run all four.
    select=(-LE 'report|lab|e2e|conformance' -E 'NOT_BUILT|OddParameters.EveryCombinationRunsCleanOrSaysWhyNot_Capable')
    ;;
  *) echo "sanitizers: unknown mode '$mode' (asan or tsan)" >&2; exit 2 ;;
esac
build=build-$mode

# -Og: -O1 is what the sanitizers' authors advise (fast enough to run,
# quicker to build than -O2, little inlining to hide a frame in a report),
# but with ASan and UBSan together GCC 12 spends twice as long on a file at
# -O1 as with either alone (framework/src/cli/rank_job.cpp: 36 s, against
# 19 s with one of them, or with both at -Og). -Og is GCC's level for code
# one debugs: -O1 without dead-store elimination, scalar replacement of
# aggregates and a few other passes, so the sanitizers see as many loads and
# stores as at -O1, or more. On this 2-core machine (2026-12-04, idle, from
# scratch, one build of each and one or two runs of the tests as CI selects
# them), -Og against -O1: the ASan build 208 s against 321 s, its tests
# 483 s against 463 s; the TSan build 98 s against 127 s, its tests 48-53 s
# against 46-49 s. The single file's figures are its compile command from
# `ninja -t commands` with the flags changed.
# A unity build (CMake batches a target's sources into one translation
# unit): on this 2-core machine, at -O1 then, the TSan build took 156 s
# instead of 317 s from scratch, and the ASan one 400 s, as the heavy headers (nlohmann-json,
# fmt, yaml-cpp, CLI11) and their instrumented templates are compiled once
# per batch instead of once per file. The release build (.ci/setup) stays
# one file at a time, so each file is still checked to include what it uses.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og \
  -DCMAKE_UNITY_BUILD=ON -DUNIPERF_SANITIZE="$sanitize" >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
if $build_only; then exit 0; fi

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:suppressions=$here/asan.supp"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$here/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp"
if [ "$mode" = asan ] && (($# == 0)); then
  # UCX's tests without the leak check. LeakSanitizer's stop-the-world
  # tracer crashes ("Tracer caught signal 11", "LeakSanitizer has
  # encountered a fatal error") at the exit of a uniperf process that ran
  # UCX, with UCX's threads alive, after the test itself passed: the
  # ucx-tcp conformance test once, and a Slurm rank over ucx-shm once, in
  # some ten CI runs. A fault of the tracer (GCC 12's sanitizer runtime),
  # not of our code nor UCX's. mpi_e2e joins them: Open MPI 4.1 leaves
  # 4816 bytes (7 objects) per rank after MPI_Finalize, allocated by code
  # in a mapping with no file (LeakSanitizer: "<unknown module>"), which no
  # suppression can name. ASan and UBSan still check every UCX and MPI test;
  # every other test keeps the leak check. A test starts UCX when it has the
  # label `ucx` (the scripts: tests/e2e/CMakeLists.txt) or "ucx" in its
  # name (conformance, parametrized e2e), or it is one of the e2e binary's
  # tests named here that run a ucx config beside another.
  ucx_by_name='ucx|Ucx|SideBySide\.|ConcurrentFlows\.|LatencyGap\.|DeviceFlags|TwoHostsRunTheQuickSuite'
  left_out='install_e2e'  # packaging: the same quick suite twice
  no_leaks="${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0}"
  ctest --test-dir "$build" --output-on-failure -j 2 -LE 'report|lab|ucx|mpi' -E "$left_out|$ucx_by_name"
  ASAN_OPTIONS=$no_leaks ctest --test-dir "$build" --output-on-failure -j 2 -L 'ucx|mpi' -LE 'report|lab' -E "$left_out"
  ASAN_OPTIONS=$no_leaks ctest --test-dir "$build" --output-on-failure -j 2 -LE 'report|lab|ucx|mpi' -R "$ucx_by_name" -E "$left_out"
else
  ctest --test-dir "$build" --output-on-failure -j 2 "${select[@]}" "$@"
fi
if [ "$mode" = tsan ] && (($# == 0)); then
  out=$build/tsan-runs
  mkdir -p "$out"
  for suite in suites/concurrent.yaml suites/quick.yaml; do
    echo "sanitizers: $suite over configs/tcp.yaml (local pair) under ThreadSanitizer"
    "$build/bin/uniperf" run "$suite" --config configs/tcp.yaml --quiet \
      --output "$out/$(basename "$suite" .yaml).jsonl"
  done
fi
