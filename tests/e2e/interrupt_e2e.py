#!/usr/bin/env python3
"""Interrupts keep what finished: the real uniperf (a local pair over real
TCP on loopback) is ended by a terminal-style signal to its process group
while a long test runs. The run ends within seconds, exit 130; the results
file holds the finished records, the interrupted and later tests as skipped
"not run: interrupted"; no temporary file stays beside it. Then twice: a
second signal ends the run at once, keeping the same. Then SIGABRT to the
initiator alone, as a transport library's failed assertion raises it: the
finished records are kept, exit 1 (the responder lives on: no lost peer).
Then SIGSEGV, a crash, the same way: the finished records are kept before the
crash ends the process. Then SIGKILL: nothing can be kept, and nothing is left behind."""
import json, os, signal, subprocess, sys, tempfile, time

uniperf, source_dir = sys.argv[1], sys.argv[2]
SUITE = """suite: interrupted
defaults: {validate: true}
tests:
  - {name: quick, op: send, pattern: latency, sizes: [8, 64], iterations: 200}
  - {name: long, op: send, pattern: bandwidth, sizes: [4K, 64K], duration: 120s}
  - {name: never, op: send, pattern: latency, sizes: [8], iterations: 100}
"""


def run_and_interrupt(work, signals, expect_exit=130, group=True):
    suite = os.path.join(work, "suite.yaml")
    with open(suite, "w") as f:
        f.write(SUITE)
    results = os.path.join(work, "results.jsonl")
    p = subprocess.Popen(
        [uniperf, "run", suite, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
         "-o", results],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    # The live line of the last size of `quick` says it finished; a loaded
    # machine may take a while to get there.
    seen = []
    in_quick = False
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        in_quick = in_quick or "/ quick:" in line
        if in_quick and line.split()[:1] == ["64"]:
            break
    else:
        p.kill()
        raise AssertionError("the first test never finished:\n" + "".join(seen))
    time.sleep(1)  # inside `long` now
    assert p.poll() is None, "ended on its own: " + p.stderr.read()
    started = time.monotonic()
    for s in signals:
        if group:
            os.killpg(p.pid, s)
        else:
            os.kill(p.pid, s)
        time.sleep(0.05)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - started
    if expect_exit is None:  # a crash: whatever the libraries' handlers end it with
        assert p.returncode != 0, f"exit {p.returncode}\n{out}\n{err}"
    else:
        assert p.returncode == expect_exit, f"exit {p.returncode}\n{out}\n{err}"
    # Bounded, not timed: the long test would run for 240 s.
    assert took < 30, f"took {took:.1f} s to stop"
    leftovers = [n for n in os.listdir(work) if n not in ("suite.yaml", "results.jsonl")]
    assert not leftovers, leftovers
    if expect_exit is not None and expect_exit < 0:  # killed: nothing kept, nothing left
        assert not os.path.exists(results), "a killed run left a results file"
        return [], {}, err, took
    records = [json.loads(l) for l in open(results)]
    by_key = {(r["test"], r["size"]): r for r in records}
    assert by_key[("quick", 8)]["status"] == "ok", by_key[("quick", 8)]
    assert by_key[("quick", 64)]["status"] == "ok", by_key[("quick", 64)]
    return records, by_key, err, took


with tempfile.TemporaryDirectory() as work:
    records, by_key, err, took = run_and_interrupt(work, [signal.SIGINT])
    assert len(records) == 5, records
    for key in [("long", 4096), ("long", 65536), ("never", 8)]:
        r = by_key[key]
        assert r["status"] == "skipped" and r["reason"] == "not run: interrupted", r
    assert "interrupted; the finished records are kept" in err, err
    print(f"ok: SIGINT: 2 finished records kept, 3 not run, stopped in {took:.1f} s")

with tempfile.TemporaryDirectory() as work:
    records, by_key, err, took = run_and_interrupt(work, [signal.SIGTERM, signal.SIGTERM])
    # The second signal may land before the first took effect, after it, or
    # while the tests the first one stopped are being recorded as not run:
    # the finished records are kept either way, every record is whole, and
    # any besides them is a test not run.
    assert 2 <= len(records) <= 5, records
    for r in records:
        if r["test"] != "quick":
            assert r["status"] == "skipped" and r["reason"] == "not run: interrupted", r
    assert "interrupted" in err, err
    print(f"ok: SIGTERM twice: {len(records)} records, stopped in {took:.1f} s")

with tempfile.TemporaryDirectory() as work:
    records, by_key, err, took = run_and_interrupt(work, [signal.SIGABRT], expect_exit=1,
                                                   group=False)
    # The test under way has no record: the process ended inside it.
    assert len(records) == 2, records
    assert "SIGABRT ended the process" in err and "keeping the 2 finished records" in err, err
    print(f"ok: SIGABRT: 2 finished records kept, stopped in {took:.1f} s")


def crash_kept(work):
    """A crash (sent here; a transport library's fault takes the same path):
    what finished is written, then the crash ends the process as it would
    have (the libraries' own handlers print their backtraces)."""
    records, by_key, err, took = run_and_interrupt(work, [signal.SIGSEGV], expect_exit=None,
                                                   group=False)
    assert len(records) == 2, records
    assert "Segmentation fault (a crash" in err and "keeping the 2 finished records" in err, err
    print(f"ok: SIGSEGV: 2 finished records kept, the process ended in {took:.1f} s")


# A build with a sanitizer leaves crashes to the sanitizer's report
# (cli/stop_signals.hpp): nothing of uniperf's runs on one to test.
with open(uniperf, "rb") as f:
    binary = f.read()
if b"__asan_init" in binary or b"__tsan_init" in binary:
    print("skipped: SIGSEGV (a sanitizer build leaves crashes to the sanitizer)")
else:
    with tempfile.TemporaryDirectory() as work:
        crash_kept(work)

with tempfile.TemporaryDirectory() as work:
    _, _, _, took = run_and_interrupt(work, [signal.SIGKILL], expect_exit=-signal.SIGKILL)
    print(f"ok: SIGKILL: no results file and no temporary file left")
