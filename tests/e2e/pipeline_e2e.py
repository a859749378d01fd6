#!/usr/bin/env python3
"""Pipelines end to end (docs/pipeline.md): suites/pipeline.yaml, made small
(two sizes, two fragments, short durations, validation on; the ping-pongs
of a pipelined message too), over real
transports: UCX shared memory, kernel TCP (no write: its direct tests are
SKIPPED naming the op) and libfabric tcp. Asserts, per record: it ran clean
(status ok, no corrupted byte in the reassembled message), its fragments are
its messages times the fragments a message goes as (the last one shorter),
and a sweep's tests carry their fragment in their name and params. Prints the
grid; asserts no figure. Then `uniperf tune` over tcp: a fragment chosen per
size from its candidates, within the budget, written to the tuning file; and
the same against a real `uniperf serve` (tune --peer)."""
import json, math, os, re, subprocess, sys, tempfile, time
from servers import free_port, start_serve

uniperf, source_dir = sys.argv[1], sys.argv[2]
configs = ["ucx-shm", "tcp", "ofi-tcp"]
with open(os.path.join(source_dir, "suites/pipeline.yaml")) as f:
    suite = f.read()
# Whole-message tests of inline against DMA posts are no pipeline: left out.
small = re.sub(r"\n  - \{name: (inline|dma)_(latency|rate), [^\n]*", "", suite)
small = re.sub(r"(?m)^  sizes: .*", "  sizes: [4K, 100000]", small)
small = re.sub(r"(?m)^  duration: .*", "  duration: 0.1s\n  validate: true", small)
small = small.replace("256..64K x4", "[1K, 64K]")
# The auto test sweeps every candidate: `uniperf tune` below covers it.
small = re.sub(r"\n  - \{name: copy_auto, [^\n]*", "", small)
assert small != suite and "validate: true" in small and "name: copy_auto" not in small and \
    "name: inline_" not in small, \
    "suites/pipeline.yaml changed its shape"

with tempfile.TemporaryDirectory() as work:
    suite_path = os.path.join(work, "pipeline.yaml")
    with open(suite_path, "w") as f:
        f.write(small)
    out_path = os.path.join(work, "pipeline.jsonl")
    html_path = os.path.join(work, "pipeline.html")
    command = [uniperf, "run", suite_path, "--quiet", "-o", out_path, "--html", html_path]
    for config in configs:
        command += ["-c", os.path.join(source_dir, "configs", config + ".yaml")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=500)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    records = [json.loads(line) for line in open(out_path)]
    html = open(html_path).read()

tests = {r["test"] for r in records}
expected = {f"{name}.fragment_{f}" for name in
            ["direct", "direct_staged", "copy_cut_through", "copy_store_and_forward"]
            for f in ["1K", "64K"]} | {f"{name}.fragment_{f}" for name in
                                       ["latency_direct", "latency_copy"] for f in ["4K", "64K"]} | \
    {"whole_write", "whole_send", "whole_latency"}
assert tests == expected, sorted(tests)
assert len(records) == len(configs) * len(expected) * 2, len(records)
ran = 0
for r in records:
    where = f'{r["config"]} {r["test"]} {r["size"]}'
    params = r["params"]
    if r["status"] == "skipped":
        # Only kernel TCP lacks write, and says so.
        assert r["config"] == "tcp" and params["op"] == "write", where
        assert "does not support op write" in r["reason"], (where, r["reason"])
        continue
    assert r["status"] == "ok", (where, r.get("reason"))
    assert r["corrupted_bytes"] == 0, where
    b = r["bandwidth"]
    fragment = params["fragment"]
    if fragment == 0:
        assert "fragments" not in b, where
        continue
    assert r["test"].endswith(
        {1024: ".fragment_1K", 4096: ".fragment_4K", 65536: ".fragment_64K"}[fragment]), where
    per_message = max(1, math.ceil(r["size"] / fragment))
    assert b["messages"] > 0 and b["fragments"] == b["messages"] * per_message, (where, b)
    if params["pattern"] == "latency":
        # A ping-pong of the pipelined message: one sample an iteration.
        assert r["latency_us"]["samples"] == b["messages"] == 100, (where, r["latency_us"])
    ran += 1
# Two sizes, three configs; four stream sweeps and two ping-pongs of two
# fragments each; tcp ran no direct test (no write).
assert ran == 2 * 3 * (4 + 2) * 2 - 2 * (2 + 1) * 2, ran

grid = {}
for r in records:
    if r["status"] == "ok":
        grid.setdefault((r["config"], r["test"].split(".")[0], r["size"]), {})[
            r["params"]["fragment"]] = r["bandwidth"]["MB_per_s"]
for (config, test, size), row in sorted(grid.items()):
    print(f"{config:8s} {test:24s} {size:7d} " +
          "  ".join(f"f={f}: {mb:8.1f} MB/s" for f, mb in sorted(row.items())))
print(f"ok: {ran} pipelined records over {len(configs)} configs, every message reassembled")

# The report's heatmap: a grid per (config, sweep) that ran, each size's best
# fragment in bold and in the envelope column.
assert 'id="fragment-sweeps"' in html
for config in configs:
    for sweep in ["direct", "direct_staged", "copy_cut_through", "copy_store_and_forward"]:
        caption = f"<caption>{config} / {sweep}: MB/s by message size and fragment"
        assert (caption in html) == (config != "tcp" or sweep.startswith("copy")), caption
        if caption in html:
            table = html[html.index(caption):]
            table = table[:table.index("</table>")]
            best = {int(size): (int(f), float(mb)) for size, f, mb in
                    re.findall(r'<tr><th class="num">(\d+)</th>.*?<td>(\d+) B: ([\d.e+]+)</td>', table)}
            for size in [4096, 100000]:
                row = grid[(config, sweep, size)]
                f, mb = best[size]
                assert row[f] == max(row.values()) and abs(mb - row[f]) <= 1e-3 * row[f] + 1e-3, \
                    (caption, size, best[size], row)
print("ok: the report draws each sweep's grid with its best fragment per size")

# `--quick`: the suite's quick: keys, two fragments and short points, over
# tcp: every sweep at those two fragments only, the whole-message and inline
# tests as they were, each point 0.1 s.
with tempfile.TemporaryDirectory() as work:
    quick_out = os.path.join(work, "quick.jsonl")
    run = subprocess.run([uniperf, "run", os.path.join(source_dir, "suites/pipeline.yaml"), "--quick",
                          "-c", os.path.join(source_dir, "configs/tcp.yaml"), "--quiet", "-o", quick_out],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    quick = [json.loads(line) for line in open(quick_out)]
    assert {r["params"]["fragment"] for r in quick} == {0, 1024, 65536}, \
        {r["params"]["fragment"] for r in quick}
    assert {r["test"] for r in quick if r["params"]["fragment"] == 0} == \
        {"whole_write", "whole_send", "whole_latency", "inline_latency.inline_off",
         "inline_latency.inline_on", "inline_rate.inline_off", "inline_rate.inline_on"}
    for r in quick:
        if r["params"]["pattern"] != "latency":
            assert r["params"]["duration_s"] == 0.1, (r["test"], r["params"]["duration_s"])
        assert r["status"] == "ok" or (r["status"] == "skipped" and r["params"]["op"] == "write"), r
print(f"ok: --quick ran {len(quick)} records over tcp")

def tune(work, suite_text, name, config="tcp", flags=()):
    """`uniperf tune` over CONFIG of `suite_text` (written to WORK/NAME.yaml) within a
    budget of 24, with FLAGS; returns the suite's path, the tuning file's path and its text."""
    suite_path = os.path.join(work, name + ".yaml")
    with open(suite_path, "w") as f:
        f.write(suite_text)
    tuning_path = os.path.join(work, "tuning.yaml")
    run = subprocess.run([uniperf, "tune", suite_path, "-c", os.path.join(source_dir, f"configs/{config}.yaml"),
                          "--budget", "24", "-o", tuning_path, *flags],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    print(run.stdout.strip())
    return suite_path, tuning_path, open(tuning_path).read()

# Self-tuning: `uniperf tune` over tcp for a copy pipeline with fragment:
# auto at two sizes, within a budget; the tuning file names a candidate per
# size with its curve. A suite with nothing to tune is refused (exit 2).
tune_suite = """suite: tune
defaults: {pattern: bandwidth, window: 16, duration: 0.05s, warmup: 4}
tests:
  - {name: copy, op: send, delivery: copy, fragment: auto, sizes: [3000, 64K]}
"""
with tempfile.TemporaryDirectory() as work:
    # Each round's two processes pinned, as `uniperf run --cpu --peer-cpu`;
    # the file's first line says so.
    suite_path, tuning_path, tuning = tune(work, tune_suite, "tune",
                                           flags=("--cpu", "0", "--peer-cpu", "1"))
    assert tuning.splitlines()[0].startswith(
        f"# uniperf tune {suite_path} -c {os.path.join(source_dir, 'configs/tcp.yaml')} --cpu 0 --peer-cpu 1:"), \
        tuning.splitlines()[0]
    rows = re.findall(r"\{size: (\d+), fragment: (\d+), .*?measurements: (\d+), curve: \{([^}]*)\}",
                      tuning)
    assert [int(r[0]) for r in rows] == [3000, 65536], tuning
    for size, fragment, measurements, curve in rows:
        candidates = [int(c.split(":")[0]) for c in curve.split(",")]
        # 256 B up to the first fragment that sends the message whole.
        assert candidates[0] == 256 and candidates[-1] >= int(size) > candidates[-2], curve
        assert int(fragment) in candidates and 2 * len(candidates) <= int(measurements) <= 24, \
            (size, fragment, measurements)

    # A later run applies the tuning file: one record per size, at its
    # chosen fragment, and the records say which file tuned them.
    chosen = {int(size): int(fragment) for size, fragment, _, _ in rows}
    tuned_out = os.path.join(work, "tuned.jsonl")
    run = subprocess.run([uniperf, "run", suite_path, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                          "--tuning", tuning_path, "--quiet", "-o", tuned_out],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    tuned = [json.loads(line) for line in open(tuned_out)]
    assert sorted((r["size"], r["params"]["fragment"], r["test"]) for r in tuned) == \
        sorted((s, f, f"copy.fragment_{f}") for s, f in chosen.items()), tuned
    for r in tuned:
        assert r["status"] == "ok" and r["provenance"]["tuned_by"] == tuning_path, r
    print(f"ok: the tuned run ran each size at its chosen fragment: {chosen}")

    # Several configs, each its own tuning file or none: tcp runs its
    # choices, ofi-shm those of a file tuned on it (1 KiB at both sizes),
    # ucx-shm, untuned, every candidate; each record names its config's file.
    shm_tuning = os.path.join(work, "ofi-shm.tuning.yaml")
    with open(shm_tuning, "w") as f:
        f.write("tuning:\n  config: configs/ofi-shm.yaml\n  tests:\n    copy:\n"
                "      - {size: 3000, fragment: 1024}\n      - {size: 65536, fragment: 1024}\n")
    config_files = [os.path.join(source_dir, f"configs/{c}.yaml") for c in ("tcp", "ofi-shm", "ucx-shm")]
    run = subprocess.run([uniperf, "run", suite_path, "--quiet", "-o", tuned_out,
                          "--tuning", tuning_path, "--tuning", shm_tuning] +
                         [arg for c in config_files for arg in ("-c", c)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    by_config = {}
    for r in map(json.loads, open(tuned_out)):
        assert r["status"] == "ok", r
        assert r["provenance"].get("tuned_by") == {"tcp": tuning_path, "ofi-shm": shm_tuning}.get(r["config"]), r
        by_config.setdefault(r["config"], set()).add((r["size"], r["params"]["fragment"]))
    assert by_config["tcp"] == set(chosen.items()), by_config["tcp"]
    assert by_config["ofi-shm"] == {(3000, 1024), (65536, 1024)}, by_config["ofi-shm"]
    assert by_config["ucx-shm"] == {(s, 256 << k) for s in (3000, 65536) for k in range(9)}, \
        by_config["ucx-shm"]
    # A tuning file is for the config it was tuned on: over another it is refused.
    run = subprocess.run([uniperf, "run", suite_path, "-c", config_files[2], "--tuning", tuning_path],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "tuned on config 'tcp'" in run.stderr and \
        "its configs: ucx-shm" in run.stderr, (run.returncode, run.stderr)
    print("ok: each config ran its own tuning file's choices, an untuned one every candidate")

    plain = os.path.join(work, "plain.yaml")
    with open(plain, "w") as f:
        f.write(tune_suite.replace("fragment: auto", "fragment: 4K"))
    run = subprocess.run([uniperf, "tune", plain, "-c", os.path.join(source_dir, "configs/tcp.yaml")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "nothing to tune" in run.stderr, (run.returncode, run.stderr)
    # A tuning file of a test the suite does not sweep is refused, naming it.
    run = subprocess.run([uniperf, "run", plain, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                          "--tuning", tuning_path], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "has no `fragment: auto`, `source: auto` or `inline: auto` test named copy" in run.stderr, \
        (run.returncode, run.stderr)
print("ok: tune chose a fragment per size within its budget")

# `source: auto`: the tuner chooses between sending from the message buffer
# and staging through a bounce buffer, alone (one fragment) or with the
# fragment; the tuned run runs each size at its choice.
source_suite = """suite: tune-source
defaults: {pattern: bandwidth, window: 16, duration: 0.05s, warmup: 4}
tests:
  - {name: staging, op: send, delivery: copy, fragment: 4K, source: auto, sizes: [64K]}
  - {name: both, op: send, delivery: copy, fragment: auto, source: auto, sizes: [3000]}
"""
with tempfile.TemporaryDirectory() as work:
    suite_path, tuning_path, tuning = tune(work, source_suite, "tune-source")
    staging = re.findall(r"staging:\n\s+- \{size: 65536, source: (zero_copy|staged), .*?curve: \{([^}]*)\}",
                         tuning)
    assert len(staging) == 1, tuning
    assert sorted(c.split(":")[0].strip() for c in staging[0][1].split(",")) == ["staged", "zero_copy"], \
        staging
    both = re.findall(r"\{size: 3000, fragment: (\d+), source: (zero_copy|staged), .*?curve: \{([^}]*)\}",
                      tuning)
    assert len(both) == 1, tuning
    labels = [c.split(":")[0].strip() for c in both[0][2].split(",")]
    # 256 B to 4 KiB (the first fragment that sends 3000 B whole), each both ways.
    assert labels == [f"{f}/{s}" for f in (256, 512, 1024, 2048, 4096) for s in ("zero_copy", "staged")], \
        labels

    tuned_out = os.path.join(work, "tuned.jsonl")
    run = subprocess.run([uniperf, "run", suite_path, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                          "--tuning", tuning_path, "--quiet", "-o", tuned_out],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    tuned = sorted((r["test"], r["size"], r["params"]["fragment"], r["params"]["source"], r["status"])
                   for r in map(json.loads, open(tuned_out)))
    fragment, source = int(both[0][0]), both[0][1]
    assert tuned == sorted([(f"staging.source_{staging[0][0]}", 65536, 4096, staging[0][0], "ok"),
                            (f"both.fragment_{fragment}.source_{source}", 3000, fragment, source, "ok")]), \
        tuned
print("ok: tune chose the source, alone and with the fragment, and the tuned run ran them")

# inline: auto, tuned for a latency test's p50: over ofi-shm (max_inline 4 KiB
# here) 8 B is measured both ways and 8 KiB is off without a measurement (the
# plugin posts nothing that large inline); over tcp (max_inline 0) every
# size is off so. The tuned run posts each size as chosen.
inline_suite = """suite: tune-inline
defaults: {op: send, pattern: latency, duration: 0.05s, warmup: 16}
tests:
  - {name: small, inline: auto, sizes: [8, 8K]}
"""
for config, measured in (("ofi-shm", [8]), ("tcp", [])):
    with tempfile.TemporaryDirectory() as work:
        suite_path, tuning_path, tuning = tune(work, inline_suite, "tune-inline", config)
        chosen = dict(re.findall(r"\{size: (\d+), inline: (on|off)", tuning))
        assert set(chosen) == {"8", "8192"}, tuning
        for size in measured:
            assert re.search(rf"\{{size: {size}, inline: (on|off), p50_us: [0-9.e-]+, .*curve: "
                             r"\{inline off: [0-9.e-]+, inline on: [0-9.e-]+\}", tuning), tuning
        for size in {8, 8192} - set(measured):
            assert re.search(rf"\{{size: {size}, inline: off, max_inline: \d+\}}", tuning), tuning
        tuned_out = os.path.join(work, "tuned.jsonl")
        run = subprocess.run([uniperf, "run", suite_path, "-c", os.path.join(source_dir, f"configs/{config}.yaml"),
                              "--tuning", tuning_path, "--quiet", "-o", tuned_out],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
        ran = sorted((r["size"], r["test"], r["status"]) for r in map(json.loads, open(tuned_out)))
        assert ran == [(8, f"small.inline_{chosen['8']}", "ok"),
                       (8192, f"small.inline_{chosen['8192']}", "ok")], ran
    print(f"ok: tune chose inline per size over {config} for the lowest p50: {chosen}")

# `uniperf tune --peer`: every round a client of a real `uniperf serve` (on
# loopback here, another host in a lab), which serves them one after another
# from an empty directory; the tuning file names the server. A server that
# is not there ends the tuning with the peer's exit code (3) and the reason.
with tempfile.TemporaryDirectory() as work:
    suite_path = os.path.join(work, "tune.yaml")
    with open(suite_path, "w") as f:
        f.write(tune_suite)
    port = free_port()
    server, server_log = start_serve(uniperf, os.path.join(work, "server"), f"127.0.0.1:{port}")
    try:
        tuning_path = os.path.join(work, "tuning.yaml")
        run = subprocess.run([uniperf, "tune", suite_path, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                              "--peer", f"127.0.0.1:{port}", "--budget", "16", "-o", tuning_path],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
        tuning = open(tuning_path).read()
        assert f"peer: 127.0.0.1:{port}" in tuning, tuning
        rows = re.findall(r"\{size: (\d+), fragment: (\d+), .*?measurements: (\d+)", tuning)
        assert [int(r[0]) for r in rows] == [3000, 65536] and int(rows[0][1]) <= 4096, tuning
        rounds = len(re.findall(r"tune: round \d+:", run.stderr))
        # The server says "served" once it has ended its side, which can be
        # after the client's exit on a loaded machine: wait for the line.
        deadline = time.monotonic() + 60
        served = open(server_log.name).read()
        while served.count("uniperf: served 127.0.0.1") < rounds and time.monotonic() < deadline:
            time.sleep(0.2)
            served = open(server_log.name).read()
        assert rounds >= 1 and served.count("uniperf: served 127.0.0.1") == rounds, (rounds, served)
        print(f"ok: tune --peer chose fragments {[int(r[1]) for r in rows]} for 3000 B and 64 KiB "
              f"in {rounds} rounds, each served by uniperf serve")
    finally:
        server.terminate()
        server.wait(timeout=30)
    started = time.monotonic()
    run = subprocess.run([uniperf, "tune", suite_path, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                          "--peer", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 3 and "round 1 failed" in run.stderr, (run.returncode, run.stderr)
    print(f"ok: tune --peer with no server there ended in {time.monotonic() - started:.1f} s: "
          f"{run.stderr.strip().splitlines()[-1]}")
