#!/usr/bin/env bash
# ctest lab_smoke: rxe0 is up and a perftest RDMA-write loopback between two
# processes in the guest works. Exit 77 (SKIPPED) where the lab is unavailable.
set -uo pipefail
softroce=$1
if ! why=$("$softroce" check); then
  echo "SKIPPED: $why"
  exit 77
fi
"$softroce" run --timeout 240 -- bash -c '
  set -u
  ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || { echo "rxe0 is not PORT_ACTIVE"; ibv_devinfo; exit 1; }
  echo "rxe0: PORT_ACTIVE"
  ib_write_lat -d rxe0 -n 100 >/tmp/server.log 2>&1 &
  server=$!
  for i in $(seq 50); do ib_write_lat -d rxe0 -n 100 10.77.0.1 >/tmp/client.log 2>&1 && break; sleep 0.2; done
  client=$?
  wait $server; server_rc=$?
  if [ $client -ne 0 ] || [ $server_rc -ne 0 ]; then
    echo "ib_write_lat loopback failed (client $client, server $server_rc)"; cat /tmp/client.log /tmp/server.log; exit 1
  fi
  grep -A1 "#bytes" /tmp/client.log | tail -1 | grep -qE "^ *2 +100 " || { echo "no result row"; cat /tmp/client.log; exit 1; }
  echo "ib_write_lat loopback: ok"'
