#!/usr/bin/env bash
# Where an 8 B ping-pong over libfabric spends its CPU time, in uniperf and
# in fi_pingpong: each run pinned (initiator or client on CPU 0, responder
# or server on CPU 1), profiled over 2 s of its steady state (perf record
# -a), and its samples shared out by the object they ran in (the kernel,
# libc, libfabric, the tool). uniperf is multi-threaded (its watchdog and
# signal waiter), fi_pingpong is not: glibc then pays atomics in every
# socket call's cancellation bracket and in mutexes inside libfabric, which
# the libc line shows (docs/fidelity.md, note (k)).
#
#   tests/fidelity/library_shares.sh [CONFIG [BUILD_DIR]]
#     CONFIG: ofi-tcp (default) or ofi-shm; needs perf, fi_pingpong, root
set -euo pipefail
cd "$(dirname "$0")/../.."
config=${1:-ofi-tcp}
build=${2:-build}
case "$config" in
  ofi-tcp) provider=tcp endpoint=msg ;;
  ofi-shm) provider=shm endpoint=rdm ;;
  *) echo "library_shares: CONFIG is ofi-tcp or ofi-shm, not $config"; exit 2 ;;
esac
source tests/fidelity/pair_checks.sh
needs_pinned_pair library_shares "$build" perf fi_pingpong
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# shares NAME: profiles 2 s of the run started just before and prints the
# share of all samples in each object that holds at least 1% of them.
shares() {
  sleep 2.5
  perf record -q -a -e cpu-clock -o "$work/profile" -- sleep 2 2>/dev/null
  echo "$1 ($config, 8 B ping-pong), share of CPU time by object:"
  perf report -i "$work/profile" --no-children --sort dso -q 2>/dev/null |
    awk '{ gsub("%", "", $1); if ($1 >= 1) printf "  %6.1f%%  %s\n", $1, $2 }'
}

"$build/bin/uniperf" lat --op send -s 8 -D 6s -c "configs/$config.yaml" --cpu 0 --peer-cpu 1 \
  -o /dev/null --quiet >/dev/null 2>&1 &
pids+=($!)
shares uniperf
wait "${pids[-1]}"

port=$(free_port)
common=(-p "$provider" -e "$endpoint" -S 8 -I 100000000)
taskset -c 1 fi_pingpong "${common[@]}" -B "$port" >/dev/null 2>&1 &
pids+=($!)
sleep 1  # its client does not retry: the server first opens the provider and listens
taskset -c 0 fi_pingpong "${common[@]}" -P "$port" 127.0.0.1 >/dev/null 2>&1 &
pids+=($!)
shares fi_pingpong
