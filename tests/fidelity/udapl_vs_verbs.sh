#!/usr/bin/env bash
# Fidelity of the udapl plugin against raw verbs and against uDAPL's own
# dapltest, on rxe0, in one boot of the Soft-RoCE lab (run it INSIDE the
# guest, from the repository root):
#
#   tests/lab/softroce run -- tests/fidelity/udapl_vs_verbs.sh [REPEATS]   (default 3)
#
# Workloads: send latency 8 B, write latency 8 B, read latency 8 B (p50 of
# the one-way / round-trip samples), write bandwidth 64 KiB (MB/s, 10^6).
# Each is measured over configs/udapl-rxe.yaml, over configs/verbs-rxe.yaml
# where the verbs plugin is available, and with perftest (ib_*_lat /
# ib_write_bw: raw verbs, t_typical = its median), alternated and repeated;
# medians of the repeats are compared:
#   udapl/verbs     the same engine over DAT vs over verbs (the DAT layer's cost)
#   udapl/perftest  the udapl plugin vs perftest's hand-written verbs loops
#   udapl/dapltest  RDMA-write bandwidth at 64 KiB vs dapltest's performance
#                   mode (-T P ... RW 65536 1, polling, pipeline 16), whose
#                   MB/sec (2^20) is converted to 10^6
# For latency a ratio above 1 means udapl measures more; for bandwidth, less.
# The guest is an emulator: only ratios taken in the same boot mean anything.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${1:-3}
uniperf=build/bin/uniperf
ia=ofa-v2-cma-roe-rxe
server_ip=10.77.0.1
[ -x "$uniperf" ] || { echo "build uniperf first"; exit 2; }
[ -d /sys/class/infiniband/rxe0 ] || { echo "no rxe0: run this inside the Soft-RoCE lab guest"; exit 2; }
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  local p
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
export DAT_OVERRIDE=$PWD/configs/udapl-rxe.dat.conf

configs=(udapl-rxe)
if [ -f configs/verbs-rxe.yaml ] && "$uniperf" list 2>/dev/null | grep -q '^verbs .*available$'; then
  configs+=(verbs-rxe)
fi

# ours CONFIG KIND OP SIZE -> p50 latency (us) or MB/s
ours() {
  local config=$1 kind=$2 op=$3 size=$4
  if [ "$kind" = lat ]; then
    "$uniperf" lat --op "$op" -s "$size" -n 1000 -w 50 -c "configs/$config.yaml" --quiet \
      -o "$work/r.jsonl" >/dev/null 2>&1 || { echo 0; return; }
  else
    "$uniperf" bw --op "$op" -s "$size" -n 1000 -w 50 -t 16 -c "configs/$config.yaml" --quiet \
      -o "$work/r.jsonl" >/dev/null 2>&1 || { echo 0; return; }
  fi
  python3 - "$work/r.jsonl" "$kind" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
if sys.argv[2] == "lat":
    print(r.get("latency_us", {}).get("p50", 0))
else:
    print(r.get("bandwidth", {}).get("MB_per_s", 0))
PY
}

# perftest KIND OP SIZE -> t_typical (us) or MB/s (10^6)
perftest() {
  local kind=$1 op=$2 size=$3 tool
  tool=ib_${op}_${kind}
  local args=(-d rxe0 -x 1 -s "$size" -n 1000)
  [ "$kind" = bw ] && args+=(-t 16)
  timeout 120 "$tool" "${args[@]}" >/dev/null 2>&1 &
  local server=$!
  sleep 1
  timeout 120 "$tool" "${args[@]}" "$server_ip" 2>/dev/null | awk -v kind="$kind" '
    $1 ~ /^[0-9]+$/ && NF >= 5 {
      if (kind == "lat") v = $5; else v = $4 * 1.048576
    }
    END { print v + 0 }'
  wait "$server" 2>/dev/null || true
}

# dapltest RDMA write 64 KiB -> MB/s (10^6)
dapltest_bw() {
  dapltest -T S -D "$ia" >/dev/null 2>&1 &
  local server=$!
  sleep 1
  timeout 120 dapltest -T P -D "$ia" -s "$server_ip" -i 1000 -p 16 -m p RW 65536 1 2>/dev/null |
    awk '/Bandwidth/ { v = $3 * 1.048576 } END { print v + 0 }'
  timeout 30 dapltest -T Q -D "$ia" -s "$server_ip" >/dev/null 2>&1 || true
  wait "$server" 2>/dev/null || true
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "n/a" }'; }

printf "%-10s %6s %-6s %10s %10s %10s %10s %12s %14s %14s\n" workload bytes unit udapl verbs perftest \
  dapltest udapl/verbs udapl/perftest udapl/dapltest
while read -r name kind op size unit; do
  [ -z "$name" ] && continue
  for c in "${configs[@]}" perftest dapltest; do : >"$work/$c"; done
  for _ in $(seq "$repeats"); do
    for c in "${configs[@]}"; do ours "$c" "$kind" "$op" "$size" >>"$work/$c"; done
    perftest "$kind" "$op" "$size" >>"$work/perftest"
    [ "$name" = write_bw ] && dapltest_bw >>"$work/dapltest"
  done
  u=$(median <"$work/udapl-rxe")
  v=$([ -s "$work/verbs-rxe" ] 2>/dev/null && median <"$work/verbs-rxe" || echo 0)
  p=$(median <"$work/perftest")
  d=$([ -s "$work/dapltest" ] && median <"$work/dapltest" || echo 0)
  printf "%-10s %6s %-6s %10.2f %10.2f %10.2f %10.2f %12s %14s %14s\n" "$name" "$size" "$unit" "$u" "$v" \
    "$p" "$d" "$(ratio "$u" "$v")" "$(ratio "$u" "$p")" "$(ratio "$u" "$d")"
done <<'TABLE'
send_lat lat send 8 us
write_lat lat write 8 us
read_lat lat read 8 us
write_bw bw write 65536 MB/s
TABLE
