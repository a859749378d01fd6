#!/usr/bin/env python3
"""A run killed with SIGKILL leaves libfabric shm's regions in /dev/shm
("<pid>:<n>:<m>"); a later process given the same pid must still run
(plugins/ofi/ofi_context.cpp). PID namespaces make the pids certain: the
first process of a fresh one is always pid 1, its local-pair responder 2.

  1. an ofi-shm stream in a PID namespace, killed (SIGKILL) once its
     regions exist: they stay behind, named 1:... and 2:...;
  2. a latency test in a fresh PID namespace, same pids: exit 0, its record
     ok, and no region of those pids left after it.

Before the fix, step 2 failed with "cannot enable the endpoint: Device or
resource busy". Skipped (77) without the ofi plugin, unshare or the right to
make a PID namespace."""
import os, re, shutil, signal, subprocess, sys, tempfile, time
from launched import records, run_once

uniperf, source_dir = sys.argv[1], sys.argv[2]
plugins = os.path.join(os.path.dirname(uniperf), "..", "lib", "uniperf")
if not os.path.exists(os.path.join(plugins, "libuniperf-ofi.so")):
    print("SKIP: the ofi plugin is not built")
    sys.exit(77)
unshare = shutil.which("unshare")
if unshare is None or subprocess.run([unshare, "--pid", "--fork", "true"]).returncode != 0:
    print("SKIP: cannot make a PID namespace here (unshare --pid --fork, as root)")
    sys.exit(77)
CONFIG = os.path.join(source_dir, "configs", "ofi-shm.yaml")
NAMESPACE_PID = re.compile(r"^[12]:\d+:\d+$")  # the pids a fresh namespace gives


def regions():
    return sorted(n for n in os.listdir("/dev/shm") if NAMESPACE_PID.match(n))


with tempfile.TemporaryDirectory() as work:
    for stale in regions():  # another run's, from before this test
        os.unlink(os.path.join("/dev/shm", stale))
    stream = os.path.join(work, "stream.yaml")
    open(stream, "w").write("suite: stream\ntests:\n  - {name: bw, op: send, pattern: bandwidth, "
                            "sizes: [4096], duration: 60s}\n")
    victim = subprocess.Popen([unshare, "--pid", "--fork", uniperf, "run", stream, "-c", CONFIG,
                               "-o", os.path.join(work, "killed.jsonl"), "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    deadline = time.monotonic() + 60
    while len(regions()) < 2 and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.1)
    time.sleep(0.5)  # inside the stream, not only past the endpoints' creation
    os.killpg(victim.pid, signal.SIGKILL)  # unshare, uniperf and its responder
    victim.wait()
    left = regions()
    if not left:
        print("SKIP: this libfabric left no region behind a killed process: nothing to check")
        sys.exit(77)

    latency = os.path.join(work, "latency.yaml")
    open(latency, "w").write("suite: latency\ntests:\n  - {name: lat, op: send, "
                             "pattern: latency, sizes: [8], iterations: 1000}\n")
    out = os.path.join(work, "after.jsonl")
    result, seconds = run_once([unshare, "--pid", "--fork", uniperf, "run", latency, "-c", CONFIG,
                                "-o", out], dict(os.environ), 120)
    assert result.returncode == 0, (left, result.returncode, result.stdout, result.stderr)
    got = records(out)
    assert [r["status"] for r in got] == ["ok"], [(r["status"], r["reason"]) for r in got]
    assert not regions(), regions()
    print(f"ok: regions {left} left by a killed run; a run with the same pids passed in "
          f"{seconds:.1f} s and left none")
