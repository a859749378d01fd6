#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang, AddressSanitizer and
# UndefinedBehaviorSanitizer) into build-fuzz/ and runs each for SECONDS
# (default 60) on its seed corpus: the shipped suites, configs and result
# files, and the valid messages in tests/fuzz/seeds/. Extra arguments go to
# every fuzzer (e.g. -runs=1000000 instead of a time limit).
#
#   tests/fuzz/run.sh [SECONDS] [-- LIBFUZZER_ARGS...]
#
# The corpus each run grows is kept in build-fuzz/fuzz-corpus/<target> for
# the next run; a crash, leak, timeout or out-of-memory leaves its input in
# build-fuzz/fuzz-artifacts/ and fails the script (after every target ran).
# Reproduce one with build-fuzz/bin/fuzz_<target> <file>. UNIPERF_FUZZ_TARGETS
# (e.g. "suite config") runs only those.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
shift || true
[ "${1:-}" = "--" ] && shift
extra=("$@")
build=${UNIPERF_FUZZ_BUILD:-build-fuzz}

# A unity build, as the sanitizer builds (tests/sanitizers/run.sh says why):
# 107 s here instead of ~4 min.
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_UNITY_BUILD=ON -DUNIPERF_FUZZ=ON -DUNIPERF_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_targets

# target -> seed files (copied into one directory each, read-only to libFuzzer)
declare -A seeds=(
  [suite]="suites/*.yaml tests/report/*.yaml tests/fuzz/seeds/suite/*"
  [config]="configs/*.yaml"
  [records]="tests/report/*.jsonl"
  [peer_protocol]="tests/fuzz/seeds/peer_protocol/*"
  [handshake]="tests/fuzz/seeds/handshake/*"
  [frames]="tests/fuzz/seeds/frames/*"
  [stage_costs]="tests/fuzz/seeds/stage_costs/*"
  [tuning]="tests/fuzz/seeds/tuning/*"
  [sidecars]="tests/fuzz/seeds/sidecars/*"
)
# One target: its summary line, or its log's end; fails on a finding.
fuzz_one() {
  local target=$1
  local seed_dir=$build/fuzz-seeds/$target
  local corpus=$build/fuzz-corpus/$target
  local artifacts=$build/fuzz-artifacts/$target
  rm -rf "$seed_dir"
  mkdir -p "$seed_dir" "$corpus" "$artifacts"
  # shellcheck disable=SC2086  # the patterns are globbed here on purpose
  cp ${seeds[$target]} "$seed_dir"/
  echo "fuzz: $target for ${seconds} s ($(ls "$seed_dir" | wc -l) seeds, $(ls "$corpus" | wc -l) in the corpus)"
  local log=$build/fuzz-$target.log
  if "$build/bin/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" \
    "$corpus" "$seed_dir" >"$log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|^Done" "$log" | tr '\n' ' '
    echo "corpus: $(ls "$corpus" | wc -l) files"
  else
    echo "fuzz: $target FAILED; the end of $log:"
    tail -40 "$log"
    return 1
  fi
}

# A fuzzer runs on one core: one target per core at a time, each for its
# full SECONDS (9 targets of 30 s took 270 s one after another on 2 cores).
# Each writes its summary and status to files, printed in order once all ran.
targets=(${UNIPERF_FUZZ_TARGETS:-suite config records peer_protocol handshake frames stage_costs tuning sidecars})
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  (
    status=0
    fuzz_one "$target" || status=1
    echo "$status" >"$build/fuzz-$target.status"
  ) >"$build/fuzz-$target.summary" 2>&1 &
done
wait
failed=()
for target in "${targets[@]}"; do
  cat "$build/fuzz-$target.summary"
  [ "$(cat "$build/fuzz-$target.status" 2>/dev/null)" = 0 ] || failed+=("$target")
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $build/fuzz-artifacts/)"
  exit 1
fi
echo "fuzz: passed"
