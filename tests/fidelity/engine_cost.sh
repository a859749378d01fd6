#!/usr/bin/env bash
# The engine's own cost per operation (tests/benchmarks/engine_cost.cpp):
# the real timed loops over a transport that completes every request at
# once, both sides in one process. Prints one line per figure, the median
# of ROUNDS runs (each of 5 phases), and the targets of issue 19 beside them.
#
#   tests/fidelity/engine_cost.sh [BUILD_DIR] [ROUNDS]   (default build, 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/bin/uniperf_engine_cost
rounds=${2:-3}
[ -x "$bin" ] || { echo "no $bin (it needs libbenchmark-dev when built)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((r = 1; r <= rounds; r++)); do
  "$bin" --benchmark_format=json >"$work/$r.json" 2>/dev/null
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
figures = {}
for r in range(1, rounds + 1):
    for b in json.load(open(f"{work}/{r}.json"))["benchmarks"]:
        name = b["name"].replace("/iterations:5/manual_time", "")
        value = b.get("ns_per_post", b.get("ns_per_round_trip"))
        figures.setdefault(name, []).append(value)
median = {name: statistics.median(values) for name, values in figures.items()}
print(f"{'figure':<44} {'ns (median of ' + str(rounds) + ')':>18}")
for name, value in median.items():
    unit = "per post" if name.startswith("stream") else "per round trip"
    print(f"{name:<44} {value:>10.2f} {unit}")
poll = (median["pingpong/empty_polls:16"] - median["pingpong/empty_polls:0"]) / 16
print(f"{'empty poll (pingpong 16 - 0, over 16)':<44} {poll:>10.2f} per poll")
print("targets (issue 19): < 10 ns per streamed post, < 20 ns of loop per ping-pong round trip")
PY
