#!/usr/bin/env bash
# How often each side of a busy-polled 64 B tcp ping-pong looks at its
# socket: the tcp plugin against sockperf (--nonblocked both sides,
# --mps=max), each run for 6 s, pinned (initiator or client on CPU 0,
# responder or server on CPU 1). Over 2 s of each run's steady state the
# kernel's syscall tracepoints count, per CPU, the recv calls (recvfrom) and
# the messages sent (sendto); a receiver that calls recv more often per
# message finds a message sooner after it lands. A perf profile of the same
# 2 s gives each run's share of CPU time in glibc's cancellation bracket
# (__pthread_enable_asynccancel and __pthread_disable_asynccancel), which a
# multi-threaded process pays around every recv and send that goes through
# glibc's wrappers (docs/fidelity.md, note (k)).
#
#   tests/fidelity/tcp_polls.sh [BUILD_DIR]   (default build; needs perf, sockperf, root)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
source tests/fidelity/pair_checks.sh
needs_pinned_pair tcp_polls "$build" perf sockperf
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
events=syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto

# steady NAME: counts and profiles 2 s of the run started just before, then
# prints recv calls per message on each CPU and the bracket's share.
steady() {
  sleep 2.5
  perf stat -a -A -e "$events" -x, -o "$work/counts" -- sleep 2
  perf record -q -a -e cpu-clock -o "$work/profile" -- sleep 1 2>/dev/null
  awk -F, -v name="$1" '
    $4 ~ /recvfrom/ { recv[$1] = $2 }
    $4 ~ /sendto/ { sent[$1] = $2 }
    END {
      printf "%-9s recv calls per message: CPU0 %.1f, CPU1 %.1f\n", name,
             recv["CPU0"] / sent["CPU0"], recv["CPU1"] / sent["CPU1"]
    }' "$work/counts"
  local share
  share=$(perf report -i "$work/profile" --no-children --sort sym -q 2>/dev/null |
          awk '/asynccancel/ { gsub("%", "", $1); s += $1 } END { printf "%.1f", s }')
  echo "          CPU time in the cancellation bracket: ${share}%"
}

"$build/bin/uniperf" lat --op send -s 64 -D 6s -c configs/tcp.yaml --cpu 0 --peer-cpu 1 \
  -o "$work/uniperf.jsonl" --quiet >/dev/null 2>&1 &
run=$!
steady uniperf
wait "$run"

port=$(free_port)
taskset -c 1 sockperf server -i 127.0.0.1 -p "$port" --tcp --nonblocked >/dev/null 2>&1 &
server=$!
sleep 1
taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p "$port" --tcp -m 64 -t 6 --nonblocked \
  --mps=max >"$work/sockperf.out" 2>&1 &
run=$!
steady sockperf
wait "$run"

p50=$(python3 -c 'import json,sys; print("%.3f" % json.loads(open(sys.argv[1]).readline())["latency_us"]["p50"])' \
  "$work/uniperf.jsonl")
echo "p50 one-way, us: uniperf $p50, sockperf" \
  "$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$work/sockperf.out")"
