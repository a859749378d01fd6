#!/usr/bin/env python3
"""Flows in process pairs of their own (`process: separate`, the seed study's
two perftest instances) under `mpirun --oversubscribe`, over tcp:

  * -np 4, a mouse (8 B ping-pong, 2000 iterations, traced) against an
    elephant (64 KiB stream of 60 s, traced) with `until: first_done`: one
    record of both flows, flow 1 measured on ranks 0-1 and flow 2 on 2-3
    (each flow's placement), the elephant stopped by the mouse's end across
    processes (its interval ends within seconds of the mouse's, not after
    its 60 s), the two intervals overlapping, the mouse's percentiles
    while both ran, and every trace row under its own flow's pair in rank
    0's trace file; the same with the flows the other way round, the mouse
    on ranks 2-3 (its iterations sent to rank 0);
  * a flow its pair cannot run (fetch_add over tcp): the test is skipped
    naming that flow, the other flow's pair is not held at the gate, the
    job exits 0;
  * -np 2 (one pair): the test is skipped, saying how many ranks it needs;
  * a test of 3 separate flows in a job of 4 ranks: refused before anything
    runs, naming the test and the ranks it needs;
  * flow 2's responder (rank 3) killed 4 s into 60 s flows: the job ends
    within seconds, rank 0 naming the lost rank.

First, without a launcher (cli/local_job.hpp): `uniperf run` of the study
starts the 4-rank job itself and gives the same record; a test of threads'
flows beside it runs on the local pair (no placement); a rank killed ends
the run within seconds; no rank outlives the run.

The mpirun part is skipped (77) when mpirun is absent."""
import csv, os, shutil, signal, subprocess, sys, tempfile, time
from launched import rank_signalled, records, run_once

uniperf, source_dir = sys.argv[1], sys.argv[2]

mpirun = shutil.which("mpirun")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
MPIRUN = [mpirun or "mpirun", "--allow-run-as-root", "--oversubscribe"]
TCP = os.path.join(source_dir, "configs/tcp.yaml")

STUDY = """suite: separate-flows
tests:
  - name: mouse_vs_elephant
    process: separate
    until: first_done
    sizes: [65536]
    flows:
      - {op: send, pattern: latency, flow_size: 8, flow_iterations: 2000, trace: 1}
      - {op: send, pattern: bandwidth, flow_duration: 60s, trace: 16}
"""


# The study with the elephant first: the mouse runs on ranks 2-3, so its
# iterations reach rank 0 over the job's connections.
ELEPHANT_FIRST = """  - name: elephant_vs_mouse
    process: separate
    until: first_done
    sizes: [65536]
    flows:
      - {op: send, pattern: bandwidth, flow_duration: 60s}
      - {op: send, pattern: latency, flow_size: 8, flow_iterations: 2000}
"""


def check_study(r, mouse_flow=0):
    """A study's record: both flows, each on its pair, the elephant stopped
    by the mouse's end (flow `mouse_flow`). Returns how long after the
    mouse it stopped (s)."""
    assert r["status"] == "ok", (r["status"], r["reason"])
    assert len(r["flows"]) == 2, r["flows"]
    pairs = [f"{f['placement']['initiator']['rank']}-{f['placement']['responder']['rank']}"
             for f in r["flows"]]
    assert pairs == ["0-1", "2-3"], pairs
    mouse, elephant = (r["flows"][k]["measured"] for k in (mouse_flow, 1 - mouse_flow))
    # Stopped by the mouse's end, from another process: far short of its 60 s.
    stopped_after_s = (elephant["to_unix_us"] - mouse["to_unix_us"]) / 1e6
    assert stopped_after_s < 10, (mouse, elephant)
    assert elephant["from_unix_us"] < mouse["to_unix_us"] and \
        mouse["from_unix_us"] < elephant["to_unix_us"], (mouse, elephant)
    # The mouse's percentiles while both ran, from the iterations its pair
    # sent rank 0: some of its 2000, none of the elephant's (a stream).
    common = r["flows"][mouse_flow].get("common_latency_us")
    assert common and 0 < common["samples"] <= r["flows"][mouse_flow]["latency_us"]["samples"], \
        r["flows"][mouse_flow]
    assert "common_latency_us" not in r["flows"][1 - mouse_flow], r["flows"][1 - mouse_flow]
    return stopped_after_s


def trace_pairs(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rows = [row for row in rows if row["test"] == "mouse_vs_elephant"]
    by_flow = {}
    for row in rows:
        by_flow.setdefault(row["flow"], set()).add(row["pair"])
    assert by_flow == {"1": {"0-1"}, "2": {"2-3"}}, by_flow
    return rows


def ranks_left(marker):
    """The processes still running whose command line names `marker`."""
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return [pid for pid in out.split() if int(pid) != os.getpid()]


def launched(np, suite, out, timeout=240, extra=()):
    return run_once(MPIRUN + ["-np", str(np), *extra, uniperf, "run", suite, "-c", TCP, "-o", out,
                              "--timeout", "60"], env, timeout)


with tempfile.TemporaryDirectory() as work:
    study = os.path.join(work, "study.yaml")
    open(study, "w").write(STUDY)

    # Without a launcher: the run starts its 4 ranks itself. A test of
    # threads' flows beside it runs on the local pair, as does the mouse
    # alone (baseline: solo), which rank 0 compares the mouse with.
    local_study = os.path.join(work, "local-study.yaml")
    open(local_study, "w").write(
        STUDY.replace("    until: first_done\n", "    until: first_done\n    baseline: solo\n")
        + "  - {name: beside, op: send, pattern: latency, sizes: [8], iterations: 200}\n")
    out = os.path.join(work, "local.jsonl")
    result, seconds = run_once([uniperf, "run", local_study, "-c", TCP, "-o", out,
                                "--timeout", "60"], env, 240)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "a job of 4 ranks on this host" in result.stderr, result.stderr
    got = {r["test"]: r for r in records(out)}
    assert set(got) == {"mouse_vs_elephant.alone", "mouse_vs_elephant", "beside"}, list(got)
    stopped_after_s = check_study(got["mouse_vs_elephant"])
    assert got["beside"]["status"] == "ok" and "placement" not in got["beside"], got["beside"]
    alone = got["mouse_vs_elephant"]["flows"][0]["alone"]
    assert alone["test"] == "mouse_vs_elephant.alone" and alone["slowdown_p50"] > 0, alone
    rows = trace_pairs(os.path.join(work, "local.trace.csv"))
    assert seconds < 50, f"the local study took {seconds:.0f} s: the elephant ran its own 60 s"
    assert not ranks_left(local_study), "a rank of the local job outlived its run"
    print(f"ok: a local run started its own 4 ranks: the elephant stopped "
          f"{stopped_after_s * 1e3:.1f} ms after the mouse's end, {len(rows)} trace rows, "
          f"the threads' test on the local pair, the mouse {alone['slowdown_p50']:.2f}x its p50 "
          f"alone; {seconds:.1f} s")

    # A local job's rank killed: the run ends within seconds, no rank left.
    long_suite = os.path.join(work, "long.yaml")
    open(long_suite, "w").write(
        "suite: separate-long\ntests:\n"
        "  - name: long\n    process: separate\n    sizes: [4096]\n    flows:\n"
        "      - {op: send, pattern: bandwidth, flow_duration: 60s}\n"
        "      - {op: send, pattern: bandwidth, flow_duration: 60s}\n")
    out = os.path.join(work, "local-long.jsonl")
    process = subprocess.Popen([uniperf, "run", long_suite, "-c", TCP, "-o", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while len(ranks_left(long_suite)) < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)
    victim = next(pid for pid in ranks_left(long_suite) if int(pid) != process.pid)
    os.kill(int(victim), signal.SIGKILL)
    killed = time.monotonic()
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise AssertionError("a local job went on for a minute after one of its ranks was killed")
    ended_after = time.monotonic() - killed
    assert process.returncode != 0 and "lost rank" in err, (process.returncode, err)
    assert ended_after < 30, f"the run ended {ended_after:.0f} s after a rank was killed"
    gone_by = time.monotonic() + 10  # each dies with its parent (a signal, then its exit)
    while ranks_left(long_suite) and time.monotonic() < gone_by:
        time.sleep(0.1)
    assert not ranks_left(long_suite), "a rank of the local job outlived its run"
    print(f"ok: a local job's rank killed: the run ended {ended_after:.1f} s later, exit "
          f"{process.returncode}, no rank left")

    if mpirun is None:
        print("SKIP: mpirun is not installed (apt-get install openmpi-bin)")
        sys.exit(77)

    out = os.path.join(work, "study.jsonl")
    both_orders = os.path.join(work, "both-orders.yaml")
    open(both_orders, "w").write(STUDY + ELEPHANT_FIRST)
    result, seconds = launched(4, both_orders, out)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    got = records(out)
    assert [r["test"] for r in got] == ["mouse_vs_elephant", "elephant_vs_mouse"], \
        [(r["test"], r["status"]) for r in got]
    r = got[0]
    stopped_after_s = check_study(r)
    check_study(got[1], mouse_flow=1)
    assert seconds < 50, f"the study took {seconds:.0f} s: the elephant ran its own 60 s"
    rows = trace_pairs(os.path.join(work, "study.trace.csv"))
    assert len(rows) == r["trace"]["rows"], (len(rows), r["trace"])
    print(f"ok: mpirun -np 4, mouse on ranks 0-1 against elephant on 2-3: the elephant stopped "
          f"{stopped_after_s * 1e3:.1f} ms after the mouse's end (of its 60 s), {len(rows)} trace "
          f"rows under their pairs, aggregate {r['bandwidth']['MB_per_s']:.0f} MB/s; "
          f"{seconds:.1f} s")

    # A flow its pair cannot run: the test is skipped naming it, and the
    # other pair does not wait at the gate for it.
    unsupported = os.path.join(work, "unsupported.yaml")
    open(unsupported, "w").write(
        "suite: separate-unsupported\ntests:\n"
        "  - name: one_cannot\n    process: separate\n    sizes: [8]\n    flows:\n"
        "      - {op: send, pattern: latency, flow_iterations: 2000}\n"
        "      - {op: fetch_add, pattern: latency, flow_iterations: 2000}\n")
    out = os.path.join(work, "unsupported.jsonl")
    result, seconds = launched(4, unsupported, out)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    (r,) = records(out)
    assert r["status"] == "skipped" and r["reason"].startswith("flow 2: "), (r["status"], r["reason"])
    print(f"ok: a flow tcp cannot run: skipped ({r['reason']}) in {seconds:.1f} s")

    # One pair cannot run it.
    out = os.path.join(work, "pair.jsonl")
    result, _ = launched(2, study, out)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    (r,) = records(out)
    assert r["status"] == "skipped" and "a job of at least 4 ranks" in r["reason"], r
    print(f"ok: mpirun -np 2: skipped ({r['reason'][:60]}...)")

    # Three separate flows need six ranks.
    three = os.path.join(work, "three.yaml")
    open(three, "w").write(
        "suite: separate-three\ntests:\n"
        "  - name: three\n    process: separate\n    sizes: [8]\n    flows:\n"
        + "      - {op: send, pattern: latency}\n" * 3)
    out = os.path.join(work, "three.jsonl")
    result, _ = launched(4, three, out)
    assert result.returncode != 0, (result.returncode, result.stdout, result.stderr)
    assert "test 'three'" in result.stderr and "at least 6 ranks" in result.stderr, result.stderr
    assert not os.path.exists(out), "a refused job wrote a results file"
    print("ok: 3 separate flows in a job of 4 ranks: refused before running")

    # Flow 2's responder killed mid-run: the job ends within seconds.
    result, seconds, said, kept = rank_signalled(MPIRUN, 4, 3, "9", uniperf, long_suite, TCP,
                                                 work, "long", env)
    assert result.returncode != 0, (result.returncode, result.stderr)
    assert seconds < 45, f"rank 3 took {seconds:.0f} s to end the job: {result.stderr}"
    assert "lost rank 3" in said, said
    assert all(r["status"] != "ok" for r in kept), kept
    print(f"ok: flow 2's responder killed 4 s in: the job ended after {seconds:.1f} s")
