#!/usr/bin/env bash
# Fidelity of the ofi plugin against libfabric's own fi_pingpong (fabtests),
# on this machine, in one run: send ping-pong latency at 8 B and 4 KiB over
# the same provider and endpoint type (tcp msg, shm rdm), alternated and
# repeated, medians compared. Prints uniperf/fi_pingpong ratios (above 1:
# uniperf measures more latency).
#
#   tests/fidelity/ofi_vs_fi_pingpong.sh [REPEATS]   (default 3)
#
# What is compared: fi_pingpong reports usec/xfer = elapsed / iterations / 2,
# the MEAN one-way latency over its timed loop; uniperf's record has the mean
# of every one-way sample (RTT/2), so the mean is compared (p50 is printed
# too). fi_pingpong injects messages up to the provider's inject size; so does
# uniperf here (-I 65536 is clamped to the provider's max_inline).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${1:-3}
uniperf=build/bin/uniperf
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt-get install libfabric-bin)"; exit 2; }
[ -x "$uniperf" ] || { echo "build uniperf first (bash .ci/setup)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"; pkill -P $$ fi_pingpong 2>/dev/null || true' EXIT
port=$((40000 + RANDOM % 20000))

# native PROVIDER EP SIZE ITERS -> mean one-way latency in us
native() {
  local provider=$1 ep=$2 size=$3 iters=$4
  port=$((port + 1))
  fi_pingpong -p "$provider" -e "$ep" -I "$iters" -S "$size" -B "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  timeout 120 fi_pingpong -p "$provider" -e "$ep" -I "$iters" -S "$size" -P "$port" 127.0.0.1 2>/dev/null |
    awk '$1 ~ /^[0-9]+[kmg]?$/ {print $7}' | tail -1
  wait "$server" 2>/dev/null || true
}

# ours CONFIG SIZE ITERS -> "mean p50" one-way latency in us
ours() {
  local config=$1 size=$2 iters=$3
  "$uniperf" lat --op send -s "$size" -n "$iters" -w 100 -I 65536 --config "configs/$config.yaml" \
    --quiet -o "$work/r.jsonl" >/dev/null 2>&1
  python3 - "$work/r.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
l = r.get("latency_us", {})
print(l.get("mean", 0), l.get("p50", 0))
PY
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf "%-10s %-4s %6s %12s %12s %12s %8s\n" provider ep size uniperf_mean uniperf_p50 fi_pingpong ratio
while read -r config provider ep size iters; do
  [ -z "$config" ] && continue
  : >"$work/mean"; : >"$work/p50"; : >"$work/n"
  for _ in $(seq "$repeats"); do
    read -r mean p50 < <(ours "$config" "$size" "$iters")
    echo "$mean" >>"$work/mean"; echo "$p50" >>"$work/p50"
    native "$provider" "$ep" "$size" "$iters" >>"$work/n"
  done
  m=$(median <"$work/mean"); p=$(median <"$work/p50"); n=$(median <"$work/n")
  ratio=$(awk -v u="$m" -v n="$n" 'BEGIN { if (n > 0) printf "%.3f", u / n; else print "n/a" }')
  printf "%-10s %-4s %6s %12.3f %12.3f %12.3f %8s\n" "$provider" "$ep" "$size" "$m" "$p" "$n" "$ratio"
done <<'TABLE'
ofi-tcp tcp msg 8 20000
ofi-tcp tcp msg 4096 20000
ofi-shm shm rdm 8 50000
ofi-shm shm rdm 4096 50000
TABLE
