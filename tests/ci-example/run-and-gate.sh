#!/usr/bin/env bash
# Example CI gate: run a suite, write JSON Lines + JUnit + HTML, compare with a
# stored baseline and exit with `uniperf compare`'s code (docs/ci.md):
#   0 no regression, 1 regression, 2 bad input, 3 incomparable.
#
#   run-and-gate.sh SUITE BASELINE.jsonl OUTDIR [uniperf run options...]
#
# A missing baseline is created from this run (exit 0): commit it, then later
# runs are gated against it. Environment:
#   UNIPERF        the uniperf executable (default: build/bin/uniperf, else PATH)
#   COMPARE_ARGS   extra `uniperf compare` options, e.g. "--tolerance p50_us=10"
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 SUITE BASELINE.jsonl OUTDIR [uniperf run options...]" >&2
  exit 2
fi
suite=$1 baseline=$2 outdir=$3
shift 3
uniperf=${UNIPERF:-}
if [[ -z $uniperf ]]; then
  if [[ -x build/bin/uniperf ]]; then uniperf=build/bin/uniperf; else uniperf=uniperf; fi
fi

mkdir -p "$outdir"
# A run whose records include errors exits 1; the gate still compares (an
# error where the baseline was ok is a regression), so keep going.
run_status=0
"$uniperf" run "$suite" "$@" --quiet \
  -o "$outdir/results.jsonl" --junit "$outdir/results.xml" --html "$outdir/report.html" \
  || run_status=$?
if [[ ! -s $outdir/results.jsonl ]]; then
  echo "run-and-gate: the run wrote no results (uniperf exit $run_status)" >&2
  exit 2
fi

if [[ ! -f $baseline ]]; then
  mkdir -p "$(dirname "$baseline")"
  cp "$outdir/results.jsonl" "$baseline"
  echo "run-and-gate: no baseline yet; stored this run as $baseline (commit it)"
  exit 0
fi

status=0
# shellcheck disable=SC2086  # COMPARE_ARGS is a list of options
"$uniperf" compare "$baseline" "$outdir/results.jsonl" --suite "$suite" ${COMPARE_ARGS:-} \
  | tee "$outdir/compare.txt" || status=${PIPESTATUS[0]}
echo "run-and-gate: compare exit $status (0 pass, 1 regression, 2 bad input, 3 incomparable)"
exit "$status"
