#!/usr/bin/env python3
"""The mpi plugin end to end. The in-process conformance suite runs both sides
in one process, which MPI cannot (one rank per process), so this is its
conformance under `mpirun -np 2`, then a job of four ranks:

  - outside a launcher, `uniperf run suites/quick.yaml -c configs/mpi.yaml`
    exits 0 with every record SKIPPED as "unavailable: not started by an MPI
    launcher ...", and `uniperf list` says the same;
  - under mpirun, the quick suite runs with validation: everything ok but
    write latency, SKIPPED because MPI does not order a put's bytes;
  - under mpirun, the conformance suite's tests (every advertised op at edge
    sizes and 1 MiB, validated; signal_every 1 and 8, post_list 4,
    window_ack, bidirectional, two endpoints, message rate, concurrent flows
    on threads with one Context each) end ok, and the unadvertised ones
    (write_imm, completion: event) SKIPPED with the engine's reason;
  - under `mpirun -np 4 --mca osc ucx`, `pairs: all`, an incast of writes
    and all to all of fetch_adds, every pair on a communicator of its own,
    validated and ok;
  - a rank killed mid-run ends the job within seconds, and one stopped
    (SIGSTOP) ends it with exit 3 through the heartbeat and the watchdog;
  - mpi_lifecycle (tests/e2e/mpi_lifecycle.cpp) on each rank: two Contexts
    at once, MPI finalized with the Plugin, unavailable after that.

Each record's expected status follows from the capabilities `uniperf info mpi`
cannot show without a launcher, so they are written out here and checked
against the records' own reasons. Skipped (77) without the plugin or mpirun."""
import json, os, shutil, subprocess, sys, tempfile, time
from launched import records, run_once

uniperf, source_dir = sys.argv[1], sys.argv[2]
lifecycle = sys.argv[3] if len(sys.argv) > 3 else None  # tests/e2e/mpi_lifecycle.cpp
plugin_dir = os.path.join(os.path.dirname(uniperf), "..", "lib", "uniperf")
if not os.path.exists(os.path.join(plugin_dir, "libuniperf-mpi.so")):
    print("SKIP: the mpi plugin is not built (no MPI found at configure time)")
    sys.exit(77)
mpirun = shutil.which("mpirun")
if mpirun is None:
    print("SKIP: mpirun is not installed (apt-get install openmpi-bin)")
    sys.exit(77)

env = {k: v for k, v in os.environ.items()
       if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}  # not a rank of an outer job
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# Shared memory between the two ranks of this host, whatever else is built in.
MPIRUN = [mpirun, "--allow-run-as-root", "--oversubscribe", "--mca", "pml", "ob1",
          "--mca", "btl", "self,vader", "-np", "2"]
CONFIG = os.path.join(source_dir, "configs", "mpi.yaml")

ORDERED_WRITES = ("write latency polls the last byte of the target buffer, and this plugin "
                  "does not guarantee writes become visible in address order")
NO_EVENTS = "plugin has no completion events (completion: event)"






def expected_reason(test):
    """The engine's skip reason for a test entry over the mpi plugin's
    capabilities (plan.cpp's skip_reason), "" when it must run; a test of
    several flows is skipped with its first skipped flow's reason."""
    for k, flow in enumerate(test.get("flows", [])):
        why = expected_reason(dict(test, flows=[], **flow))
        if why:
            return f"flow {k + 1}: {why}"
    if test.get("op") == "write_imm":
        return "plugin does not support op write_imm"
    if test.get("completion") == "event":
        return NO_EVENTS
    if test.get("op") == "write" and test.get("pattern", "latency") == "latency":
        return ORDERED_WRITES
    return ""


def check(name, got, tests):
    by_test = {t["name"]: t for t in tests}
    expected = sum(len(t["sizes"]) for t in tests)
    assert len(got) == expected, (name, len(got), expected)
    ok = skipped = 0
    for r in got:
        where = f"{name}: {r['test']} size {r['size']}"
        assert r["plugin"]["name"] == "mpi", (where, r["plugin"])
        why = expected_reason(by_test[r["test"]])
        if why:
            assert r["status"] == "skipped" and r["reason"] == why, (where, r["status"], r["reason"])
            skipped += 1
        else:
            assert r["status"] == "ok", (where, r["status"], r.get("reason"))
            assert r["corrupted_bytes"] == 0, (where, r["corrupted_bytes"])
            assert r["iterations_run"] > 0, where
            for k, flow in enumerate(r.get("flows") or []):
                assert flow["iterations_run"] > 0 and flow["corrupted_bytes"] == 0, (where, k, flow)
            assert "rank" in r["plugin"]["device"], (where, r["plugin"])
            ok += 1
    return ok, skipped


def entry(name, op, pattern, sizes, **keys):
    t = {"name": name, "op": op, "pattern": pattern, "sizes": [8] if op in ("fetch_add", "cswap") else sizes}
    t.update(keys)
    return t


def conformance_tests():
    """tests/conformance/conformance_test.cpp's tests for the mpi plugin's
    capabilities (no inline, max_message INT_MAX, no queue limits)."""
    edge = [1, 3, 1021, 4099, 65537]
    mib = 1 << 20
    tests = []
    for op in ("send", "write", "read", "fetch_add", "cswap"):
        tests.append(entry(f"{op}_lat", op, "latency", edge, iterations=50))
        tests.append(entry(f"{op}_bw", op, "bandwidth", edge, iterations=64, window=16))
        if op not in ("fetch_add", "cswap"):
            tests.append(entry(f"{op}_lat_1MiB", op, "latency", [mib], iterations=8, warmup=2))
            tests.append(entry(f"{op}_bw_1MiB", op, "bandwidth", [mib], iterations=32, window=8,
                               warmup=4))
        tests.append(entry(f"{op}_lat_event", op, "latency", [1, 4099], iterations=50,
                           completion="event"))
        tests.append(entry(f"{op}_bw_event", op, "bandwidth", [4099], iterations=64, window=16,
                           completion="event", cq_moderation=4))
        for every in (1, 8):
            tests.append(entry(f"{op}_signal_{every}", op, "bandwidth", [1, 4099], iterations=128,
                               window=16, signal_every=every))
        tests.append(entry(f"{op}_post_list", op, "bandwidth", [1, 4099], iterations=128,
                           window=16, signal_every=8, post_list=4))
        tests.append(entry(f"{op}_window_ack", op, "bandwidth", [4099], iterations=128, window=16,
                           window_mode="window_ack"))
        tests.append(entry(f"{op}_bi", op, "bandwidth", [4099], iterations=128, window=16,
                           direction="bi"))
        tests.append(entry(f"{op}_two_endpoints", op, "bandwidth", [4099], iterations=64,
                           window=8, endpoints=2))
        # Two flows on two threads: a second Context (MPI_THREAD_MULTIPLE).
        tests.append({"name": f"{op}_under_send_bw",
                      "sizes": [8 if op in ("fetch_add", "cswap") else 4099], "iterations": 64,
                      "flows": [{"op": op, "pattern": "latency"},
                                {"op": "send", "pattern": "bandwidth", "window": 8}]})
    for op in ("write_imm",):
        tests.append(entry(f"{op}_lat", op, "latency", [8, 4096]))
        tests.append(entry(f"{op}_bw", op, "bandwidth", [4096], window=16))
    tests.append(entry("send_msgrate", "send", "message_rate", [1], iterations=512))
    return tests


def flow_op(test):
    return test.get("op") or test["flows"][0]["op"]


with tempfile.TemporaryDirectory() as work:
    quick = os.path.join(source_dir, "suites", "quick.yaml")

    # Outside a launcher: unavailable, clearly, and the run goes on (exit 0).
    out = os.path.join(work, "plain.jsonl")
    result, _ = run_once([uniperf, "run", quick, "-c", CONFIG, "-o", out], env, 120)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    got = records(out)
    assert got and all(r["status"] == "skipped" and r["reason"].startswith(
        "unavailable: not started by an MPI launcher") for r in got), got
    assert "not started by an MPI launcher" in result.stdout + result.stderr, result.stdout
    listed, _ = run_once([uniperf, "list"], env, 60)
    line = [l for l in listed.stdout.splitlines() if "mpi" in l.split()[:1]]
    assert line and "not started by an MPI launcher" in line[0], listed.stdout
    print(f"ok: outside mpirun: {len(got)} records SKIPPED: {got[0]['reason']}")

    # The quick suite under mpirun, validated.
    out = os.path.join(work, "quick.jsonl")
    result, seconds = run_once(MPIRUN + [uniperf, "run", quick, "-c", CONFIG, "-o", out,
                                    "--timeout", "60"], env, 300)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    got = records(out)
    assert len(got) == 21, len(got)  # quick.yaml's sizes
    for r in got:
        where = f"quick: {r['test']} size {r['size']}"
        if r["test"] == "write_lat":
            assert r["status"] == "skipped" and r["reason"] == ORDERED_WRITES, (where, r)
        else:
            assert r["status"] == "ok", (where, r["status"], r.get("reason"))
            assert r["corrupted_bytes"] == 0 and r["params"]["validate"], where
    print(f"ok: mpirun -np 2 quick suite: {len(got)} records in {seconds:.1f} s, "
          f"device {got[0]['plugin']['device']!r}, {got[0]['plugin']['library_version']}")

    # The conformance tests, as one suite (JSON is YAML), validated.
    tests = conformance_tests()
    suite = os.path.join(work, "conformance.yaml")
    with open(suite, "w") as f:
        json.dump({"suite": "mpi-conformance", "defaults": {"validate": True, "warmup": 8},
                   "tests": tests}, f, indent=1)
    out = os.path.join(work, "conformance.jsonl")
    result, seconds = run_once(MPIRUN + [uniperf, "run", suite, "-c", CONFIG, "-o", out,
                                    "--timeout", "60"], env, 600)
    assert result.returncode == 0, (result.returncode, result.stdout[-4000:], result.stderr)
    ok, skipped = check("conformance", records(out), tests)
    ran = {flow_op(t) for t in tests if not expected_reason(t)}
    assert ran == {"send", "write", "read", "fetch_add", "cswap"}, ran
    print(f"ok: mpirun -np 2 conformance: {ok} ok, {skipped} SKIPPED as expected, "
          f"in {seconds:.1f} s")

    # A job of four ranks: every pair, an incast and all to all, each pair
    # over a communicator and a window of its own (osc/ucx: Open MPI's
    # osc/rdma cannot make two pairs' windows at once on one node).
    ranks_suite = os.path.join(work, "ranks.yaml")
    with open(ranks_suite, "w") as f:
        f.write("suite: mpi-ranks\ndefaults: {validate: true}\ntests:\n"
                "  - {name: lat, op: send, pattern: latency, sizes: [8], iterations: 300, "
                "pairs: all}\n"
                "  - {name: in, op: write, pattern: bandwidth, sizes: [65536], iterations: 300, "
                "pairs: incast}\n"
                "  - {name: a2a, op: fetch_add, pattern: latency, sizes: [8], iterations: 200, "
                "pairs: all_to_all}\n")
    out = os.path.join(work, "ranks.jsonl")
    mpirun4 = MPIRUN[:-2] + ["--mca", "osc", "ucx", "-np", "4"]
    result, seconds = run_once(mpirun4 + [uniperf, "run", ranks_suite, "-c", CONFIG, "-o", out,
                                          "--timeout", "60"], env, 300)
    assert result.returncode == 0, (result.returncode, result.stdout[-4000:], result.stderr)
    got = records(out)
    for r in got:
        assert r["status"] == "ok", (r["test"], r["placement"], r["status"], r["reason"])
        assert r["corrupted_bytes"] == 0, r
    first = [r for r in got if not r["placement"].get("retest")]
    met = sorted((r["test"], r["placement"]["initiator"]["rank"],
                  r["placement"]["responder"]["rank"]) for r in first)
    assert met == sorted([("lat", i, j) for i in range(4) for j in range(i + 1, 4)] +
                         [("in", i, 0) for i in range(1, 4)] +
                         [("a2a", i, j) for i in range(4) for j in range(4) if i != j]), met
    print(f"ok: mpirun -np 4 --mca osc ucx: {len(got)} records ok (6 pairs, an incast of 3, "
          f"all to all of 12 with fetch_add), in {seconds:.1f} s")

    # A rank killed mid-run ends the job within seconds, though the survivor
    # may be inside MPI (a flush waits on the peer): mpirun ends it.
    long_suite = os.path.join(work, "long.yaml")
    with open(long_suite, "w") as f:
        f.write("suite: mpi-long\ntests:\n"
                "  - {name: long, op: write, pattern: bandwidth, sizes: [4K], duration: 120s}\n")
    out = os.path.join(work, "dead.jsonl")
    script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 5; kill -9 $$) & fi; '
              f'exec {uniperf} run {long_suite} -c {CONFIG} -o {out}')
    result, seconds = run_once(MPIRUN + ["sh", "-c", script], env, 240)
    assert result.returncode not in (0, 124), (result.returncode, result.stderr)
    assert seconds < 60, f"a dead rank took {seconds:.0f} s to end the run: {result.stderr}"
    print(f"ok: rank 1 killed 5 s into a write stream: the job ended after {seconds:.1f} s, "
          f"exit {result.returncode}")

    # A rank that stops answering (SIGSTOP) while the other may be blocked in
    # MPI_Win_flush: the heartbeat loses it, the watchdog ends the blocked
    # rank (exit 3) and mpirun the job, with no rank left behind.
    out = os.path.join(work, "stopped.jsonl")
    # Rank 0's stderr goes to a file: mpirun may drop output it had not
    # forwarded when it ends the job.
    said = os.path.join(work, "stopped-rank0.err")
    script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 5; kill -STOP $$) & fi; '
              f'exec {uniperf} run {long_suite} -c {CONFIG} -o {out} '
              f'2>{work}/stopped-rank$OMPI_COMM_WORLD_RANK.err')
    result, seconds = run_once(MPIRUN + ["sh", "-c", script], env, 240)
    assert result.returncode == 3, (result.returncode, result.stderr)
    assert "the peer stopped answering" in open(said).read(), open(said).read()
    assert seconds < 90, f"a stopped rank took {seconds:.0f} s to end the run: {result.stderr}"
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", long_suite], capture_output=True, text=True).stdout
    assert not left, f"ranks left running: {left}"
    print(f"ok: rank 1 stopped 5 s into a write stream: exit 3 after {seconds:.1f} s")

    # MPI's life in one process (each rank): two Contexts at once, finalized
    # with the Plugin, and a Plugin made afterwards says unavailable.
    if lifecycle:
        library = os.path.join(plugin_dir, "libuniperf-mpi.so")
        result, _ = run_once(MPIRUN + [lifecycle, library], env, 120)
        assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
        said = result.stdout.splitlines()
        assert len(said) == 2 and all(l.startswith("ok: ") for l in said), result.stdout
        print(f"ok: lifecycle, each rank: {said[0][4:]}")
