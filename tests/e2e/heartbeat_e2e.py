#!/usr/bin/env python3
"""A stopped peer is lost within the heartbeat's timeout: two real uniperf
processes (a --listen responder and a --peer initiator over loopback TCP)
run a long test; one of them is SIGSTOPped, so its kernel keeps the
connections open but nothing answers. The other must end within the
heartbeat timeout plus a few seconds (not the size's deadline), exit 3 (a
lost peer) and say "the peer stopped answering: no heartbeat for N s"; when
the survivor is the initiator, its results file holds the finished records,
whole, and says why the others did not run. A local pair stopped as a whole
(Ctrl-Z) and resumed runs on: neither side blames the other for the time it
was stopped itself."""
import json, os, signal, subprocess, sys, tempfile, time
from servers import free_port

uniperf, source_dir = sys.argv[1], sys.argv[2]
config = os.path.join(source_dir, "configs/tcp.yaml")
HEARTBEAT = 3  # seconds; beats go out every second
# Bounded but generous: CI runs this beside a CPU hog. The per-size deadline
# (--timeout 120 plus the 60 s duration) is far beyond it.
WITHIN = HEARTBEAT + 12
SUITE = """suite: heartbeat
tests:
  - {name: quick, op: send, pattern: latency, sizes: [8, 64], iterations: 200}
  - {name: long, op: send, pattern: bandwidth, sizes: [4K, 64K], duration: 60s}
  - {name: never, op: send, pattern: latency, sizes: [8], iterations: 100}
"""


def wait_for_listening(proc):
    """Until the server says it waits for a peer (a probe connection would
    only be refused by it)."""
    line = proc.stderr.readline()
    while line and "waiting for a peer" not in line:
        line = proc.stderr.readline()
    assert line, "the server ended before listening"


def run(work, stop):
    """Runs the suite as two processes and SIGSTOPs `stop` ("responder" or
    "initiator") once `long` runs; returns (survivor's exit, its stdout,
    stderr, seconds from the stop to its exit, results path)."""
    suite = os.path.join(work, "suite.yaml")
    with open(suite, "w") as f:
        f.write(SUITE)
    results = os.path.join(work, f"results-{stop}.jsonl")
    port = free_port()
    common = ["--heartbeat", str(HEARTBEAT)]
    server = subprocess.Popen(
        [uniperf, "run", suite, "-c", config, "--listen", f"127.0.0.1:{port}"] + common,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    client = None
    try:
        wait_for_listening(server)
        client = subprocess.Popen(
            [uniperf, "run", suite, "-c", config, "--peer", f"127.0.0.1:{port}", "-o", results]
            + common, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The live line of quick's last size says it finished; then `long` runs.
        seen, in_quick = [], False
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = client.stdout.readline()
            if not line:
                break
            seen.append(line)
            in_quick = in_quick or "/ quick:" in line
            if in_quick and line.split()[:1] == ["64"]:
                break
        else:
            raise AssertionError("the first test never finished:\n" + "".join(seen))
        time.sleep(1)  # inside `long` now
        assert client.poll() is None and server.poll() is None, "a side ended on its own"
        stopped, survivor = (server, client) if stop == "responder" else (client, server)
        stopped.send_signal(signal.SIGSTOP)
        started = time.monotonic()
        out, err = survivor.communicate(timeout=WITHIN + 60)
        took = time.monotonic() - started
        return survivor.returncode, "".join(seen) + out, err, took, results
    finally:
        for p in (server, client):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()


with tempfile.TemporaryDirectory() as work:
    # The responder stops: the initiator (which writes the results) survives.
    code, out, err, took, results = run(work, "responder")
    message = f"the peer stopped answering: no heartbeat for {HEARTBEAT} s"
    assert code == 3, f"exit {code}\n{out}\n{err}"
    assert took < WITHIN, f"took {took:.1f} s to notice"
    assert message in err, err
    lines = open(results).read().splitlines()
    records = [json.loads(l) for l in lines]  # every line a whole record
    by = {(r["test"], r["size"]): r for r in records}
    assert len(records) == 5, lines
    assert by[("quick", 8)]["status"] == "ok" and by[("quick", 64)]["status"] == "ok", records
    assert by[("long", 4096)]["status"] == "error", records
    assert message in by[("long", 4096)]["reason"], by[("long", 4096)]
    assert by[("never", 8)]["status"] == "error", records
    assert "not run: lost the peer: " + message in by[("never", 8)]["reason"], by[("never", 8)]
    leftovers = [n for n in os.listdir(work) if n not in ("suite.yaml", os.path.basename(results))]
    assert not leftovers, leftovers
    print(f"ok: the initiator noticed the stopped responder after {took:.1f} s, exit 3")

    # The initiator stops: the responder survives and says why on stderr.
    code, out, err, took, _ = run(work, "initiator")
    assert code == 3, f"exit {code}\n{err}"
    assert took < WITHIN, f"took {took:.1f} s to notice"
    assert message in err, err
    print(f"ok: the responder noticed the stopped initiator after {took:.1f} s, exit 3")

    # Ctrl-Z on a local pair stops both processes; after `fg` neither may
    # blame the other for the silence while it was stopped itself.
    suite = os.path.join(work, "pair.yaml")
    with open(suite, "w") as f:
        f.write("suite: pair\ntests:\n"
                "  - {name: quick, op: send, pattern: latency, sizes: [8, 64], iterations: 200}\n"
                "  - {name: bw, op: send, pattern: bandwidth, sizes: [4K], duration: 6s}\n")
    results = os.path.join(work, "pair.jsonl")
    pair = subprocess.Popen([uniperf, "run", suite, "-c", config, "-o", results, "--heartbeat",
                             str(HEARTBEAT), "--stall-timeout", str(HEARTBEAT)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        seen, in_quick = [], False
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = pair.stdout.readline()
            if not line:
                break
            seen.append(line)
            in_quick = in_quick or "/ quick:" in line
            if in_quick and line.split()[:1] == ["64"]:
                break
        else:
            raise AssertionError("the first test never finished:\n" + "".join(seen))
        time.sleep(1)  # inside `bw` now
        os.killpg(pair.pid, signal.SIGSTOP)
        time.sleep(2 * HEARTBEAT)
        os.killpg(pair.pid, signal.SIGCONT)
        out, err = pair.communicate(timeout=120)
    finally:
        if pair.poll() is None:
            os.killpg(pair.pid, signal.SIGKILL)
            pair.communicate()
    assert pair.returncode == 0, f"exit {pair.returncode}\n{''.join(seen)}{out}\n{err}"
    statuses = [json.loads(l)["status"] for l in open(results)]
    assert statuses == ["ok", "ok", "ok"], statuses
    print("ok: a local pair stopped as a whole and resumed runs on")
