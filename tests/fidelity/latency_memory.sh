#!/usr/bin/env bash
# Peak resident memory of duration-mode latency runs against their length:
# `uniperf lat -D N` over ucx-shm (send, 8 B) for each N, one after
# another, with what each measured. A run's memory should not grow with N.
#
#   tests/fidelity/latency_memory.sh BUILD_DIR [SECONDS ...]   (default 1 10 60)
#
# Prints per run: seconds asked, iterations measured, the seconds they
# took (bandwidth.seconds), peak resident memory of the initiator (the
# process that keeps the samples; GNU time's %M) and whether the
# percentiles are exact or from the histogram (percentile_error).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1/bin/uniperf
shift
[ -x "$bin" ] || { echo "no uniperf at $bin"; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)"; exit 2; }
durations=("$@")
((${#durations[@]})) || durations=(1 10 60)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin=()
[ "$(nproc)" -ge 2 ] && pin=(--cpu 0 --peer-cpu 1)

printf '%8s %12s %10s %12s %s\n' asked_s iterations took_s max_rss_MB percentiles
for d in "${durations[@]}"; do
  /usr/bin/time -o "$work/time" -f '%M' "$bin" lat --op send -s 8 -D "${d}s" \
    -c configs/ucx-shm.yaml "${pin[@]}" -o "$work/out.jsonl" --quiet >/dev/null 2>&1
  python3 - "$d" "$work/out.jsonl" "$(cat "$work/time")" <<'EOF'
import json, sys
asked, path, rss_kb = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.loads(open(path).readline())
lat = r["latency_us"]
form = (f"histogram (within {100 * lat['percentile_error']:.3g}%)"
        if "percentile_error" in lat else "exact")
print(f"{asked:>8} {r['iterations_run']:>12} {r['bandwidth']['seconds']:>10.2f} "
      f"{rss_kb / 1024:>12.1f} {form}")
EOF
done
