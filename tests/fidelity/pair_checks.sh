# Sourced by the fidelity scripts that profile a pinned pair of processes
# (tcp_polls.sh, library_shares.sh), from the repository root.

# needs_pinned_pair NAME BUILD TOOL...: exits 2, naming what is missing,
# unless BUILD has uniperf, every TOOL is installed and there are two CPUs
# (one per side).
needs_pinned_pair() {
  local name=$1 build=$2 tool
  shift 2
  [ -x "$build/bin/uniperf" ] || { echo "$name: no uniperf in $build"; exit 2; }
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool is not installed"; exit 2; }
  done
  [ "$(nproc)" -ge 2 ] || { echo "$name: needs two CPUs (one per side)"; exit 2; }
}

# free_port: a port no listener holds, below the ephemeral range, drawn as
# the e2e tests draw theirs (tests/e2e/servers.py).
free_port() {
  python3 -c 'import sys; sys.path.insert(0, "tests/e2e"); import servers; print(servers.free_port())'
}
