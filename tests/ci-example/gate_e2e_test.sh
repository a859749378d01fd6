#!/usr/bin/env bash
# End-to-end check of the CI gate with the real uniperf over real TCP on
# loopback: store a baseline, run again and pass; doctor the baseline so the
# new run looks slower / faster / of another schema / broken and check
# compare's exit code each time. Classification only, never timing: the two
# gated runs are compared with tolerances no noise can reach (latency 10^4x,
# bandwidth -100%), and the doctored records are derived from the second run
# itself, so their 100x change is exact.
set -euo pipefail
uniperf=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export UNIPERF=$uniperf
export COMPARE_ARGS="--tolerance p50_us=1000000 --tolerance MB_per_s=100 --tolerance Mmsg_per_s=100"
doctored_args=(--tolerance p50_us=500 --tolerance MB_per_s=90 --tolerance Mmsg_per_s=90)
gate=$source_dir/tests/ci-example/run-and-gate.sh
suite=$source_dir/tests/report/tiny.yaml
run_args=(-c "$source_dir/configs/tcp.yaml" --trials 2)

expect() {  # expect CODE DESCRIPTION COMMAND...
  local want=$1 what=$2
  shift 2
  local got=0
  "$@" >"$work/out.txt" 2>&1 || got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, expected $want" >&2
    cat "$work/out.txt" >&2
    exit 1
  fi
  echo "ok: $what (exit $got)"
}

expect 0 "first run stores the baseline" "$gate" "$suite" "$work/baseline.jsonl" "$work/run1" "${run_args[@]}"
grep -q . "$work/baseline.jsonl"
expect 0 "second run passes against it" "$gate" "$suite" "$work/baseline.jsonl" "$work/run2" "${run_args[@]}"
grep -q "0 regressed" "$work/run2/compare.txt"
test -s "$work/run2/results.xml" && test -s "$work/run2/report.html"

# The base 100x faster: the new run is a regression...
python3 - "$work/run2/results.jsonl" "$work/fast-base.jsonl" <<'PY'
import json, sys
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["status"] == "ok":
        if "latency_us" in r:
            r["latency_us"]["p50"] /= 100
        r["bandwidth"]["MB_per_s"] *= 100
        r["bandwidth"]["Mmsg_per_s"] *= 100
        r.pop("trials", None)
    out.write(json.dumps(r) + "\n")
PY
expect 1 "a slower run is a regression" "$uniperf" compare "$work/fast-base.jsonl" "$work/run2/results.jsonl" "${doctored_args[@]}"
grep -q "^regressed .*send_lat 8 " "$work/out.txt"
# The doctored base has no trials: compare says single runs cannot tell
# noise from a change; the runs with --trials 2 drew no such warning.
grep -q "are single runs (no --trials)" "$work/out.txt"
# shellcheck disable=SC2086  # COMPARE_ARGS is a list of options
expect 0 "two runs with trials compare" "$uniperf" compare "$work/baseline.jsonl" "$work/run2/results.jsonl" $COMPARE_ARGS
if grep -q "single runs" "$work/out.txt"; then
  echo "FAIL: runs with trials warned of single runs" >&2
  exit 1
fi
# ...and the other way round an improvement, which passes.
expect 0 "a faster run passes" "$uniperf" compare "$work/run2/results.jsonl" "$work/fast-base.jsonl" "${doctored_args[@]}"
grep -q "^improved " "$work/out.txt"

sed 's/"schema_version":1/"schema_version":2/' "$work/baseline.jsonl" >"$work/v2.jsonl"
expect 3 "another schema major is incomparable" "$uniperf" compare "$work/v2.jsonl" "$work/run2/results.jsonl"
grep -q "schema_version" "$work/out.txt"
echo '{"not": "a record"}' >"$work/bad.jsonl"
expect 2 "an invalid record is bad input" "$uniperf" compare "$work/bad.jsonl" "$work/run2/results.jsonl"
grep -q "bad.jsonl:1" "$work/out.txt"
grep -v '"status":"ok"' "$work/baseline.jsonl" >"$work/skips.jsonl"
expect 3 "nothing measured on both sides is incomparable" "$uniperf" compare "$work/skips.jsonl" "$work/run2/results.jsonl"
echo "all gate checks passed"
