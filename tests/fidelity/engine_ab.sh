#!/usr/bin/env bash
# Two builds of uniperf against each other on this machine, in one run: the
# ucx plugin over shared memory, send latency and message rate at 8 bytes,
# alternated (A B, then B A, ...) and repeated, medians compared. For a
# change to the engine's timed loops: the ratio says what it cost. Pinned to
# the two cores (initiator on 0, responder on 1) when there are two.
#
#   tests/fidelity/engine_ab.sh BASE_BUILD_DIR NEW_BUILD_DIR [ROUNDS]   (default 5)
#
# Prints each round's figures, then median(NEW) / median(BASE): latency
# above 1 means NEW measures slower round trips, message rate below 1 means
# NEW streams fewer messages per second.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=$1/bin/uniperf new=$2/bin/uniperf rounds=${3:-5}
for b in "$base" "$new"; do [ -x "$b" ] || { echo "no uniperf at $b"; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin=()
[ "$(nproc)" -ge 2 ] && pin=(--cpu 0 --peer-cpu 1)

# one BIN KIND -> prints the figure (latency: p50 us; rate: Mmsg/s)
one() {
  local bin=$1 kind=$2 out=$work/out.jsonl
  case $kind in
    latency) "$bin" lat --op send -s 8 -n 200000 -w 20000 -c configs/ucx-shm.yaml "${pin[@]}" \
               -o "$out" --quiet >/dev/null 2>&1 ;;
    rate) "$bin" bw --op send -s 8 -n 2000000 -t 64 -c configs/ucx-shm.yaml "${pin[@]}" \
            -o "$out" --quiet >/dev/null 2>&1 ;;
  esac
  python3 - "$out" "$kind" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(r["latency_us"]["p50"] if sys.argv[2] == "latency" else r["bandwidth"]["Mmsg_per_s"])
PY
}

declare -A figures
for ((round = 1; round <= rounds; round++)); do
  order=(base new)
  ((round % 2 == 0)) && order=(new base)
  for kind in latency rate; do
    for who in "${order[@]}"; do
      bin=$base
      [ "$who" = new ] && bin=$new
      value=$(one "$bin" "$kind")
      figures[$who.$kind]+="$value "
      echo "round $round $kind $who $value"
    done
  done
done

python3 - "${figures[base.latency]}" "${figures[new.latency]}" "${figures[base.rate]}" \
  "${figures[new.rate]}" <<'PY'
import statistics, sys
bl, nl, br, nr = ([float(x) for x in a.split()] for a in sys.argv[1:])
m = statistics.median
print(f"send latency 8 B, p50 us: base {m(bl):.3f}  new {m(nl):.3f}  new/base {m(nl)/m(bl):.3f}")
print(f"message rate 8 B, Mmsg/s: base {m(br):.3f}  new {m(nr):.3f}  new/base {m(nr)/m(br):.3f}")
PY
