#!/usr/bin/env bash
# The engine's own cost per operation (tests/benchmarks/engine_cost.cpp):
# the real timed loops over a transport that completes every request at
# once, both sides in one process. Prints one line per figure, the median
# of ROUNDS runs (each of 5 phases), and the targets of issue 19 beside them.
#
# With BASE_BUILD_DIR (another tree's build, e.g. a git worktree of an older
# commit), the two builds' benchmarks run alternated, round by round, and
# each figure the two share gets both medians and the median of the rounds'
# ratios (BUILD over BASE) with their range: whether the engine grew dearer,
# on a host whose speed moves between minutes.
#
#   tests/fidelity/engine_cost.sh [BUILD_DIR] [ROUNDS] [BASE_BUILD_DIR]
#   (default build, 3, none)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/bin/uniperf_engine_cost
rounds=${2:-3}
base_bin=${3:+$3/bin/uniperf_engine_cost}
for b in "$bin" ${base_bin:+"$base_bin"}; do
  [ -x "$b" ] || { echo "no $b (it needs libbenchmark-dev when built)"; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; r++)); do
  if [ -n "$base_bin" ]; then
    "$base_bin" --benchmark_format=json >"$work/base$r.json" 2>/dev/null
  fi
  "$bin" --benchmark_format=json >"$work/$r.json" 2>/dev/null
done
python3 - "$work" "$rounds" "${base_bin:+yes}" <<'PY'
import json, statistics, sys
work, rounds, with_base = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "yes"

def figures_of(prefix):
    figures = {}
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{work}/{prefix}{r}.json"))["benchmarks"]:
            name = b["name"].replace("/iterations:5/manual_time", "")
            value = b.get("ns_per_post", b.get("ns_per_round_trip"))
            figures.setdefault(name, []).append(value)
    return figures

def unit_of(name):
    return "per post" if name.startswith("stream") else "per round trip"

figures = figures_of("")
median = {name: statistics.median(values) for name, values in figures.items()}
if with_base:
    base = figures_of("base")
    print(f"{'figure (ns, medians of ' + str(rounds) + ' alternated)':<44} {'base':>8} "
          f"{'build':>8}  {'build/base':>10}  range of the rounds")
    for name, values in figures.items():
        if name not in base:
            print(f"{name:<44} {'-':>8} {median[name]:>8.2f}  (not in the base build)")
            continue
        ratios = [new / old for new, old in zip(values, base[name])]
        print(f"{name:<44} {statistics.median(base[name]):>8.2f} {median[name]:>8.2f}  "
              f"{statistics.median(ratios):>10.3f}  [{min(ratios):.3f}, {max(ratios):.3f}]")
    sys.exit(0)
print(f"{'figure':<44} {'ns (median of ' + str(rounds) + ')':>18}")
for name, value in median.items():
    print(f"{name:<44} {value:>10.2f} {unit_of(name)}")
poll = (median["pingpong/empty_polls:16"] - median["pingpong/empty_polls:0"]) / 16
print(f"{'empty poll (pingpong 16 - 0, over 16)':<44} {poll:>10.2f} per poll")
print("targets (issue 19): < 10 ns per streamed post, < 20 ns of loop per ping-pong round trip")
PY
