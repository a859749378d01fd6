#!/usr/bin/env bash
# Fidelity of the ucx plugin against UCX's own ucx_perftest, on this machine,
# in one run: the same workloads over the same UCX transports, alternated and
# repeated, medians compared. Prints uniperf/native ratios (latency: lower is
# better, so a ratio above 1 means uniperf measures more; bandwidth and
# message rate: a ratio below 1 means uniperf measures less).
#
#   tests/fidelity/ucx_vs_ucx_perftest.sh [REPEATS]   (default 3)
#
# Units: ucx_perftest prints "MB/s" computed with 2^20; uniperf's MB/s is
# 10^6. The script converts ucx_perftest's figure to 10^6 before dividing.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=${1:-3}
uniperf=build/bin/uniperf
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not found (apt-get install ucx-utils)"; exit 2; }
[ -x "$uniperf" ] || { echo "build uniperf first (bash .ci/setup)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"; pkill -P $$ ucx_perftest 2>/dev/null || true' EXIT
port=$((20000 + RANDOM % 20000))

# native TLS TEST SIZE ITERS -> prints the metric (latency us | MB/s | Mmsg/s)
native() {
  local tls=$1 test=$2 size=$3 iters=$4 metric=$5
  # The ucx-tcp config's endpoints handle a peer's failure (peer_errors):
  # ucx_perftest's do so with -e, which changes UCP's protocols over tcp.
  local errors=()
  [ "$tls" = tcp,self ] && errors=(-e)
  port=$((port + 1))
  UCX_TLS=$tls ucx_perftest -p "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  local line
  line=$(UCX_TLS=$tls ucx_perftest 127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$iters" -f "${errors[@]}" 2>/dev/null | tail -1)
  wait "$server" 2>/dev/null || true
  # columns: iterations, p50 latency, avg latency, overall latency, bw avg, bw overall, rate avg, rate overall
  case $metric in
    latency) awk '{print $2}' <<<"$line" ;;
    bandwidth) awk '{printf "%.3f\n", $6 * 1.048576}' <<<"$line" ;;
    rate) awk '{printf "%.4f\n", $8 / 1e6}' <<<"$line" ;;
  esac
}

# ours CONFIG FORM OP SIZE ITERS WINDOW METRIC
ours() {
  local config=$1 form=$2 op=$3 size=$4 iters=$5 window=$6 metric=$7
  # ucx_perftest streams from one buffer into one buffer: so do we here.
  local buffers=()
  [ "$form" = lat ] || buffers=(--buffers single)
  "$uniperf" "$form" --op "$op" -s "$size" -n "$iters" -t "$window" -w 1000 "${buffers[@]}" \
    --config "configs/$config.yaml" --quiet -o "$work/r.jsonl" >/dev/null 2>&1
  python3 - "$work/r.jsonl" "$metric" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
m = sys.argv[2]
print({"latency": r.get("latency_us", {}).get("p50", 0),
       "bandwidth": r.get("bandwidth", {}).get("MB_per_s", 0),
       "rate": r.get("bandwidth", {}).get("Mmsg_per_s", 0)}[m])
PY
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf "%-9s %-22s %8s %12s %12s %8s\n" transport workload size uniperf native ratio
# config tls | label form op size iters window native_test metric
while read -r config tls label form op size iters window native_test metric; do
  [ -z "$config" ] && continue
  : >"$work/u"; : >"$work/n"
  for _ in $(seq "$repeats"); do
    ours "$config" "$form" "$op" "$size" "$iters" "$window" "$metric" >>"$work/u"
    native "$tls" "$native_test" "$size" "$iters" "$metric" >>"$work/n"
  done
  u=$(median <"$work/u"); n=$(median <"$work/n")
  ratio=$(awk -v u="$u" -v n="$n" 'BEGIN { if (n > 0) printf "%.3f", u / n; else print "n/a" }')
  printf "%-9s %-22s %8s %12s %12s %8s\n" "$tls" "$label" "$size" "$u" "$n" "$ratio"
done <<'TABLE'
ucx-shm posix,self send_latency_us lat send 8 100000 1 tag_lat latency
ucx-shm posix,self put_latency_us lat write 8 100000 1 ucp_put_lat latency
ucx-shm posix,self put_bw_MBps bw write 65536 20000 32 ucp_put_bw bandwidth
ucx-shm posix,self put_bw_MBps bw write 1048576 2000 32 ucp_put_bw bandwidth
ucx-shm posix,self send_bw_MBps bw send 65536 20000 32 tag_bw bandwidth
ucx-shm posix,self send_bw_MBps bw send 1048576 2000 32 tag_bw bandwidth
ucx-shm posix,self send_rate_Mmsgps rate send 8 200000 32 tag_bw rate
ucx-tcp tcp,self send_latency_us lat send 8 20000 1 tag_lat latency
ucx-tcp tcp,self put_latency_us lat write 8 20000 1 ucp_put_lat latency
ucx-tcp tcp,self put_bw_MBps bw write 65536 5000 32 ucp_put_bw bandwidth
ucx-tcp tcp,self put_bw_MBps bw write 1048576 500 32 ucp_put_bw bandwidth
ucx-tcp tcp,self send_bw_MBps bw send 65536 5000 32 tag_bw bandwidth
ucx-tcp tcp,self send_bw_MBps bw send 1048576 500 32 tag_bw bandwidth
ucx-tcp tcp,self send_rate_Mmsgps rate send 8 100000 32 tag_bw rate
TABLE
