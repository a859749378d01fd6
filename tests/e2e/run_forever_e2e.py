#!/usr/bin/env python3
"""Run-forever end to end: the real uniperf over real TCP on loopback, ended
by a terminal-style Ctrl-C (SIGINT to the process group, both processes):
exit 0 within seconds, interim lines printed, a final record pooling every
window, the size not reached recorded as skipped "interrupted"."""
import json, os, signal, subprocess, sys, tempfile, threading

uniperf, source_dir = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as work:
    out_path = os.path.join(work, "forever.jsonl")
    p = subprocess.Popen(
        [uniperf, "lat", "-s", "64,1K", "-c", os.path.join(source_dir, "configs/tcp.yaml"),
         "--run-infinitely", "--report-interval", "0.5", "-o", out_path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    # Two windows' interim lines (0.5 s each once the pair is up; a loaded
    # machine may take seconds to connect), then Ctrl-C. A minute at most.
    seen = []
    killer = threading.Timer(60, lambda: os.killpg(p.pid, signal.SIGKILL))
    killer.start()
    try:
        while sum("window #" in line for line in seen) < 2:
            line = p.stdout.readline()
            if not line:
                break
            seen.append(line)
    finally:
        killer.cancel()
    assert p.poll() is None, "run-forever ended: " + "".join(seen) + p.stderr.read()
    os.killpg(p.pid, signal.SIGINT)
    rest, err = p.communicate(timeout=20)
    out = "".join(seen) + rest
    assert p.returncode == 0, f"exit {p.returncode}\n{out}\n{err}"
    windows = [l for l in out.splitlines() if "window #" in l]
    assert len(windows) >= 2, out
    records = [json.loads(l) for l in open(out_path)]
    assert [r["size"] for r in records] == [64, 1024], records
    first, second = records
    assert first["status"] == "ok" and first["params"]["forever"] is True, first
    count = first["trials"]["count"]
    assert count >= len(windows) >= 2, (count, len(windows))
    pooled = sum(t["iterations_run"] for t in first["trials"]["per_trial"])
    assert first["iterations_run"] == pooled, (first["iterations_run"], pooled)
    assert second["status"] == "skipped" and "interrupted" in second["reason"], second
    print(f"ok: {count} windows, {pooled} iterations pooled, exit 0 after Ctrl-C")
