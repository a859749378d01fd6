#!/usr/bin/env bash
# ctest lab_tool_*: the softroce tool's own behaviour.
#   usage:    argument errors are reported with exit 2, nothing boots.
#   deadline: `run --timeout 3 -- sleep 60` ends within seconds with exit 124,
#             a message naming the deadline, and no qemu of ours left behind.
set -uo pipefail
softroce=$1
fail() { echo "FAIL: $*"; exit 1; }
case $2 in
usage)
  out=$("$softroce" run 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "run without COMMAND: exit $rc, expected 2"
  grep -q "no COMMAND" <<<"$out" || fail "run without COMMAND: message was: $out"
  out=$("$softroce" run --timeout nope -- true 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "bad --timeout: exit $rc, expected 2 ($out)"
  out=$("$softroce" run --timeout 0 -- true 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "--timeout 0: exit $rc, expected 2 ($out)"
  out=$("$softroce" frobnicate 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "unknown subcommand: exit $rc, expected 2 ($out)"
  echo "usage errors: ok"
  ;;
deadline)
  if ! why=$("$softroce" check); then echo "SKIPPED: $why"; exit 77; fi
  if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    echo "(host RDMA device: the command runs without a VM)"
  fi
  marker=$(mktemp -d)
  start=$(date +%s)
  # TMPDIR puts the tool's temp dir (and so qemu's command line) under $marker.
  out=$(TMPDIR=$marker "$softroce" run --timeout 3 -- sleep 60 2>&1); rc=$?
  elapsed=$(($(date +%s) - start))
  [ $rc -eq 124 ] || fail "exit $rc, expected 124 ($out)"
  [ $elapsed -le 15 ] || fail "took ${elapsed}s for a 3 s deadline"
  grep -q "deadline of 3" <<<"$out" || fail "no deadline message: $out"
  if pgrep -f "qemu-system-x86_64.*$marker" >/dev/null; then
    pgrep -af "qemu-system-x86_64.*$marker"
    fail "the run's qemu is still running"
  fi
  rmdir "$marker" || fail "temp files left behind: $(ls -A "$marker")"
  echo "deadline: ended after ${elapsed}s with exit 124; ok"
  ;;
*) fail "unknown mode $2" ;;
esac
