#!/usr/bin/env bash
# Fidelity of the verbs plugin against perftest (ib_*_lat / ib_*_bw), the
# hand-written raw-verbs loops it should reproduce, on rxe0 in one boot of the
# Soft-RoCE lab. Run it INSIDE the guest, from the repository root:
#
#   tests/lab/softroce run --timeout 1200 -- bash tests/fidelity/verbs_vs_perftest.sh [REPEATS]   (default 3)
#
# Each workload runs over configs/verbs-rxe.yaml with the perftest preset
# (`uniperf lat|bw --preset perftest`: the same iterations, tx depth, cq_mod,
# inline sizes and rx depth as perftest's defaults) and with perftest itself
# (server and client on this guest over rxe0, -x the RoCE v2 IPv4 GID, -n the
# same iterations), alternated and repeated; the medians of the repeats are
# compared as uniperf/perftest ratios:
#   latency    p50 of uniperf's samples vs perftest's t_typical (its median);
#              one-way (RTT/2) for send and write, round trip for read and
#              the atomics, in both tools. Above 1: uniperf measures more.
#   bandwidth  uniperf's MB/s vs perftest's "BW average" (MB/sec there is
#              2^20 bytes; converted to 10^6 before dividing). Below 1:
#              uniperf measures less.
# Inline: uniperf posts inline up to the size perftest reported using in the
# same repetition ("Max inline data"; perftest disables inline on rxe).
# A run that gave no figure is left out of the median (n/a when none did).
# The guest is an emulator: absolute numbers mean nothing, only ratios taken
# in the same boot do (SOFTROCE.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${1:-3}
uniperf=build/bin/uniperf
device=rxe0
config=configs/verbs-rxe.yaml
[ -x "$uniperf" ] || { echo "build uniperf first (bash .ci/setup)"; exit 2; }
[ -d /sys/class/infiniband/$device ] || { echo "no $device: run this inside the Soft-RoCE lab guest"; exit 2; }
command -v ib_write_lat >/dev/null || { echo "perftest not found (apt-get install perftest)"; exit 2; }
work=$(mktemp -d)
cleanup() {
  rm -rf "$work"
  local p
  for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# The GID the verbs plugin picks by itself: RoCE v2 with an IPv4-mapped
# address. Its IPv4 address is where the perftest client finds the server.
gid_index="" server_ip=""
for gid in /sys/class/infiniband/$device/ports/1/gids/*; do
  i=${gid##*/}
  value=$(cat "$gid" 2>/dev/null) || continue
  type=$(cat "/sys/class/infiniband/$device/ports/1/gid_attrs/types/$i" 2>/dev/null || true)
  if [[ $value == 0000:0000:0000:0000:0000:ffff:* && $type == "RoCE v2" ]]; then
    gid_index=$i
    hex=${value#0000:0000:0000:0000:0000:ffff:}
    hex=${hex//:/}
    server_ip=$((16#${hex:0:2})).$((16#${hex:2:2})).$((16#${hex:4:2})).$((16#${hex:6:2}))
    break
  fi
done
[ -n "$gid_index" ] || { echo "no RoCE v2 IPv4 GID on $device"; exit 2; }
echo "# $device GID $gid_index ($server_ip); $repeats repeats; $(date -u +%FT%TZ)"
port=$((20000 + RANDOM % 20000))

# ours KIND OP SIZE [INLINE] -> p50 latency (us) or MB/s (10^6)
ours() {
  local kind=$1 op=$2 size=$3 inline=${4:-}
  local args=()
  [ -n "$inline" ] && args=(-I "$inline")
  timeout 300 "$uniperf" "$kind" --preset perftest --op "$op" -s "$size" "${args[@]}" -c "$config" \
    --quiet -o "$work/r.jsonl" >"$work/ours.log" 2>&1 || return 0
  python3 - "$work/r.jsonl" "$kind" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
if r.get("status") != "ok":
    pass  # no figure: left out of the median
elif sys.argv[2] == "lat":
    print(r.get("latency_us", {}).get("p50", 0))
else:
    print(r.get("bandwidth", {}).get("MB_per_s", 0))
PY
}

# native TOOL KIND SIZE ITERS [EXTRA...] -> t_typical (us) or BW average (MB/s, 10^6);
# nothing when perftest gave no finite figure. Leaves the inline size perftest
# used ("Max inline data", absent for reads and atomics) in $work/inline.
native() {
  local tool=$1 kind=$2 size=$3 iters=$4
  shift 4
  port=$((port + 1))
  local args=(-d "$device" -x "$gid_index" -s "$size" -n "$iters" -p "$port" "$@")
  timeout 300 "$tool" "${args[@]}" >/dev/null 2>&1 &
  local server=$!
  sleep 1
  timeout 300 "$tool" "${args[@]}" "$server_ip" >"$work/native.log" 2>&1 || true
  wait "$server" 2>/dev/null || true
  awk '/Max inline data/ { sub(/\[B\]/, "", $NF); print $NF }' "$work/native.log" >"$work/inline"
  awk -v kind="$kind" '
    $1 ~ /^[0-9]+$/ && NF >= 5 { v = (kind == "lat") ? $5 : $4 }
    END { if (v ~ /^[0-9]+(\.[0-9]+)?$/) printf "%.3f\n", (kind == "lat") ? v : v * 1.048576 }' \
    "$work/native.log"
}

median() {
  sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", a / b; else print "n/a" }'; }

printf "%-14s %6s %-8s %10s %10s %8s\n" workload bytes unit uniperf perftest ratio
# name kind op size perftest-tool iterations [perftest flags...]
while read -r name kind op size tool iters extra; do
  [ -z "$name" ] && continue
  : >"$work/u"; : >"$work/n"
  for _ in $(seq "$repeats"); do
    # shellcheck disable=SC2086  # extra holds perftest flags, split on purpose
    native "$tool" "$kind" "$size" "$iters" $extra >>"$work/n"
    # perftest decides inline per device (on rxe it disables it: "Device not
    # recognized to implement inline feature"); the preset's 220 B would then
    # compare inline posts with non-inline ones, so use what perftest used.
    ours "$kind" "$op" "$size" "$(cat "$work/inline")" >>"$work/u"
  done
  u=$(median <"$work/u"); n=$(median <"$work/n")
  unit=$([ "$kind" = lat ] && echo us || echo MB/s)
  printf "%-14s %6s %-8s %10.2f %10.2f %8s\n" "$name" "$size" "$unit" "$u" "$n" "$(ratio "$u" "$n")"
done <<'TABLE'
send_lat lat send 8 ib_send_lat 1000
write_lat lat write 8 ib_write_lat 1000
read_lat lat read 8 ib_read_lat 1000
fetch_add_lat lat fetch_add 8 ib_atomic_lat 1000 -A FETCH_AND_ADD
cswap_lat lat cswap 8 ib_atomic_lat 1000 -A CMP_AND_SWAP
write_bw bw write 65536 ib_write_bw 5000
send_bw bw send 65536 ib_send_bw 1000
read_bw bw read 65536 ib_read_bw 1000
write_bw bw write 4096 ib_write_bw 5000
send_bw bw send 4096 ib_send_bw 1000
read_bw bw read 4096 ib_read_bw 1000
TABLE
