#!/usr/bin/env bash
# Builds the tree (framework, plugins, tests) with sanitizers and runs the
# unit, conformance and end-to-end tests under them:
#
#   tests/sanitizers/run.sh asan    # AddressSanitizer + UndefinedBehaviorSanitizer
#                                   # (and LeakSanitizer), in build-asan/
#   tests/sanitizers/run.sh tsan    # ThreadSanitizer, in build-tsan/
#   tests/sanitizers/run.sh MODE [CTEST_ARGS...]   # e.g. -R 'Bootstrap|ChannelMux'
#
# Any report fails the test that made it (halt_on_error). The suppression
# files beside this script name third-party libraries only, each with why.
# The report views and the Soft-RoCE lab are left out: they add Python,
# chromium and QEMU, not code of ours that the other tests do not run.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/tests/sanitizers

mode=${1:?usage: tests/sanitizers/run.sh asan|tsan [CTEST_ARGS...]}
shift
case $mode in
  asan) sanitize=address,undefined ;;
  tsan) sanitize=thread ;;
  *) echo "sanitizers: unknown mode '$mode' (asan or tsan)" >&2; exit 2 ;;
esac
build=build-$mode

# -O1: what the sanitizers' authors advise (fast enough to run, quicker to
# build than -O2, and little inlining to hide a frame in a report).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 \
  -DUNIPERF_SANITIZE="$sanitize" >/dev/null
cmake --build "$build" -j "$(nproc)"

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:suppressions=$here/asan.supp"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$here/ubsan.supp"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp"
ctest --test-dir "$build" --output-on-failure -j 2 -LE 'report|lab' "$@"
