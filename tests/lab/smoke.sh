#!/usr/bin/env bash
# ctest lab_smoke: rxe0 and rxe1 are up and a perftest RDMA-write loopback
# between two processes in the guest works on each. Exit 77 (SKIPPED) where the lab is unavailable.
set -uo pipefail
softroce=$1
if ! why=$("$softroce" check); then
  echo "SKIPPED: $why"
  exit 77
fi
"$softroce" run --timeout 240 -- bash -c '
  set -u
  for dev in rxe0:10.77.0.1 rxe1:10.77.1.1; do
    name=${dev%%:*} addr=${dev#*:}
    ibv_devinfo -d $name | grep -q PORT_ACTIVE || { echo "$name is not PORT_ACTIVE"; ibv_devinfo; exit 1; }
    echo "$name: PORT_ACTIVE"
    ib_write_lat -d $name -n 100 >/tmp/server.log 2>&1 &
    server=$!
    for i in $(seq 50); do ib_write_lat -d $name -n 100 $addr >/tmp/client.log 2>&1 && break; sleep 0.2; done
    client=$?
    wait $server; server_rc=$?
    if [ $client -ne 0 ] || [ $server_rc -ne 0 ]; then
      echo "ib_write_lat loopback on $name failed (client $client, server $server_rc)"; cat /tmp/client.log /tmp/server.log; exit 1
    fi
    grep -A1 "#bytes" /tmp/client.log | tail -1 | grep -qE "^ *2 +100 " || { echo "no result row on $name"; cat /tmp/client.log; exit 1; }
    echo "ib_write_lat loopback on $name: ok"
  done
  true'
