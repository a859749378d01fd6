#!/usr/bin/env python3
"""A local pair replaces a responder that is gone or wedged: the real uniperf
(a local pair over kernel TCP, then UCX shared memory) loses its responder in
the middle of a bandwidth stream, once to SIGKILL and once to SIGSTOP (alive
but silent). The test under way becomes an error record, a fresh responder
takes over from the next test, and every later test and config runs. The run
exits 1 (a test failed), not 3: only a lost peer on another host ends a run.
A responder killed before the run began (while it connects and handshakes)
is replaced too: the run then exits 0 with every record. No responder
process is left behind."""
import json, os, signal, subprocess, sys, tempfile, time

uniperf, source_dir = sys.argv[1], sys.argv[2]
SUITE = """suite: replaced
defaults: {validate: true}
tests:
  - {name: first, op: send, pattern: latency, sizes: [8], iterations: 200}
  - {name: stream, op: send, pattern: bandwidth, sizes: [4K, 64K], duration: 6s}
  - {name: after, op: send, pattern: latency, sizes: [8, 64], iterations: 200}
"""
CONFIGS = ["tcp", "ucx-shm"]


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def processes_mentioning(text):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def run(work, how):
    suite = os.path.join(work, "suite.yaml")
    with open(suite, "w") as f:
        f.write(SUITE)
    results = os.path.join(work, "results.jsonl")
    command = [uniperf, "run", suite, "-o", results, "--timeout", "5"]
    for c in CONFIGS:
        command += ["-c", os.path.join(source_dir, "configs", c + ".yaml")]
    p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    # The first test's live line says it finished; then the stream runs.
    seen = []
    in_first = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        in_first = in_first or "/ first:" in line
        if in_first and line.split()[:1] == ["8"]:
            break
    else:
        p.kill()
        raise AssertionError("the first test never finished:\n" + "".join(seen))
    time.sleep(1.5)  # inside the stream's first size now
    responders = children(p.pid)
    assert len(responders) == 1, f"expected one responder, found {responders}"
    victim = responders[0]
    os.kill(victim, how)
    out, err = p.communicate(timeout=240)
    out = "".join(seen) + out
    assert p.returncode == 1, f"exit {p.returncode}\n{out}\n{err}"
    assert "a fresh one goes on from config 'tcp' test 'after'" in err, err

    records = [json.loads(line) for line in open(results)]
    by = {(r["config"], r["test"], r["size"]): r for r in records}
    assert len(records) == 10, [(r["config"], r["test"], r["size"], r["status"]) for r in records]
    assert by[("tcp", "first", 8)]["status"] == "ok"
    lost = by[("tcp", "stream", 4096)]
    assert lost["status"] == "error", lost
    assert by[("tcp", "stream", 65536)]["reason"] == "not run: size 4096 of this test failed"
    for key, r in by.items():
        if key[0] == "tcp" and key[1] == "stream":
            continue
        assert r["status"] == "ok", (key, r["status"], r["reason"])
    # Nothing is left: the lost responder was reaped (a stopped one killed),
    # and the fresh one ended with the run.
    time.sleep(0.5)
    leftovers = processes_mentioning(suite)
    assert not leftovers, f"processes left behind: {leftovers}"
    return lost["reason"]


def lost_while_connecting(work):
    """Kills the responder the moment it exists: it cannot have finished
    its handshake (its start-up alone takes longer), so this is a loss
    before the first test."""
    suite = os.path.join(work, "suite.yaml")
    with open(suite, "w") as f:
        f.write(SUITE.replace("duration: 6s", "iterations: 500"))
    results = os.path.join(work, "results.jsonl")
    p = subprocess.Popen([uniperf, "run", suite, "-o", results, "--quiet", "-c",
                          os.path.join(source_dir, "configs", "tcp.yaml")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.monotonic() + 60
    while not children(p.pid):
        assert p.poll() is None and time.monotonic() < deadline, "no responder appeared"
    os.kill(children(p.pid)[0], signal.SIGKILL)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, f"exit {p.returncode}\n{out}\n{err}"
    assert "lost the local responder while connecting" in err, err
    records = [json.loads(line) for line in open(results)]
    assert len(records) == 5 and all(r["status"] == "ok" for r in records), records
    time.sleep(0.5)
    leftovers = processes_mentioning(suite)
    assert not leftovers, f"processes left behind: {leftovers}"


with tempfile.TemporaryDirectory() as work:
    lost_while_connecting(work)
    print("SIGKILL before the handshake ended: a fresh responder ran the whole suite")
for how in (signal.SIGKILL, signal.SIGSTOP):
    with tempfile.TemporaryDirectory() as work:
        started = time.monotonic()
        reason = run(work, how)
        print(f"{signal.Signals(how).name}: replaced in a run of {time.monotonic() - started:.1f} s;"
              f" the lost size says: {reason}")
print("responder_replacement_e2e: ok")
