#!/usr/bin/env python3
"""uniperf under Slurm, for real: a two-node cluster on this host
(tests/launchers/slurm-localhost: nodes n1 and n2, each its own slurmd) runs

  - `srun --mpi=pmix -N 2 -n 2 uniperf run ...` over tcp (and ucx-shm where
    built): exit 0, every record ok, the bootstrap says PMIx under Slurm, and
    rank 0 ran on one node and rank 1 on the other;
  - `srun --mpi=none`: the environment path (SLURM_PROCID in a step), at the
    port derived from the job on one node, at --coordinator on two, and a
    clear refusal on two nodes without --coordinator;
  - `srun -N 2 -n 4` with `pairs: all`: every pair of the 4 ranks once, gathered
    at rank 0, local ranks telling a node's two apart; `srun -n 1`: a local pair;
  - a rank killed 5 s into a 120 s test: the job ends within seconds, non-zero;
  - `sbatch --wait` of a batch script whose own uniperf is a local pair (the
    script is no rank) and whose `srun` is the pair of ranks.

Skipped (77) with the reason when Slurm cannot run here (not installed, not
root, a daemon refused to start)."""
import os, signal, socket, subprocess, sys, tempfile
from launched import records, run_once
from servers import free_port

uniperf, source_dir = (os.path.abspath(a) for a in sys.argv[1:3])
CLUSTER = os.path.join(source_dir, "tests", "launchers", "slurm-localhost")
SUITE = ("suite: slurm\ntests:\n"
         "  - {name: lat, op: send, pattern: latency, sizes: [8, 4096], iterations: 200}\n"
         "  - {name: bw, op: send, pattern: bandwidth, sizes: [65536], iterations: 200}\n")
LONG_SUITE = ("suite: slurm-long\ntests:\n"
              "  - {name: long, op: send, pattern: bandwidth, sizes: [4K], duration: 120s}\n")
# Slurm ends a job that outlives this (minutes) even if we could not.
SRUN = ["srun", "--time=3", "--job-name=uniperf-e2e"]






def check_ok(what, result, out, expect_method, expect_records=3):
    assert result.returncode == 0, (what, result.returncode, result.stdout, result.stderr)
    got = records(out)
    assert len(got) == expect_records, (what, got)
    for r in got:
        assert r["status"] == "ok", (what, r.get("status"), r.get("reason"))
        how = r["provenance"]["bootstrap"]
        assert how["method"] == expect_method, (what, how)
        if expect_method != "local-pair":
            assert how["launcher"] == "slurm" and how["ranks"] == 2, (what, how)
    return got, got[0]["provenance"]["bootstrap"]


def ranks_seen(work, tag):
    """What each rank's wrapper wrote: {rank: (node name, node id, step id)}."""
    seen = {}
    for rank in (0, 1):
        path = os.path.join(work, f"{tag}.rank{rank}")
        assert os.path.exists(path), f"rank {rank} of {tag} never started (no {path})"
        procid, node, nodeid, step = open(path).read().split()
        seen[int(procid)] = (node, nodeid, step)
    return seen


def wrapped(work, tag, argv):
    """sh -c: note this rank's Slurm node, then exec uniperf (same PID)."""
    note = (f'echo "$SLURM_PROCID $SLURMD_NODENAME $SLURM_NODEID $SLURM_STEP_ID" '
            f'> {work}/{tag}.rank$SLURM_PROCID; ')
    return ["sh", "-c", note + 'exec "$@"', "sh"] + argv


class Terminated(Exception):
    pass


def on_term(signum, frame):  # a timeout: take the cluster down first
    raise Terminated(f"signal {signum}")


signal.signal(signal.SIGTERM, on_term)
signal.signal(signal.SIGHUP, on_term)
# Our own deadline, well inside ctest's 300 s: ctest's SIGKILL would leave
# the cluster's daemons (they are no children of ours) running.
signal.signal(signal.SIGALRM, on_term)
signal.alarm(240)

work = tempfile.mkdtemp(prefix="uniperf-slurm-")
cluster = os.path.join(work, "cluster")
up, up_s = run_once([CLUSTER, "up", cluster], dict(os.environ), 120)
if up.returncode == 77:
    reason = next((l for l in up.stdout.splitlines() if l.startswith("unavailable:")),
                  "unavailable: (no reason given)")
    print(f"SKIP: slurm-localhost {reason}\n{up.stderr}")
    subprocess.run(["rm", "-rf", work])
    sys.exit(77)
assert up.returncode == 0, ("slurm-localhost up", up.returncode, up.stdout, up.stderr)
print(f"ok: two-node Slurm up in {up_s:.1f} s: {up.stderr.strip()}")

# The ranks' environment: nothing of a launcher that may have started us.
env = {k: v for k, v in os.environ.items()
       if not k.startswith(("SLURM_", "PMIX_", "PMI_", "OMPI_"))}
env["SLURM_CONF"] = os.path.join(cluster, "etc", "slurm.conf")
failed = False
try:
    suite = os.path.join(work, "suite.yaml")
    open(suite, "w").write(SUITE)
    tcp = os.path.join(source_dir, "configs", "tcp.yaml")
    host = socket.gethostname()

    # srun --mpi=pmix over two nodes: the PMIx path of the bootstrap.
    configs = ["tcp.yaml"]
    if os.path.exists(os.path.join(os.path.dirname(uniperf), "..", "lib", "uniperf",
                                   "libuniperf-ucx.so")):
        configs.append("ucx-shm.yaml")
    for name in configs:
        out = os.path.join(work, f"pmix-{name}.jsonl")
        tag = f"pmix-{name}"
        result, seconds = run_once(
            SRUN + ["--mpi=pmix", "-N", "2", "-n", "2"] +
            wrapped(work, tag, [uniperf, "run", suite, "-c", os.path.join(source_dir, "configs", name),
                                "-o", out, "--timeout", "60", "--quiet"]), env, 150, cwd=work)
        got, how = check_ok(f"srun --mpi=pmix {name}", result, out, "pmix")
        assert how.get("pmix_version"), how
        seen = ranks_seen(work, tag)
        # Rank 0 measured on one node, rank 1 served on the other; both
        # nodes are this host, so the records' host facts name it twice.
        assert {seen[0][0], seen[1][0]} == {"n1", "n2"}, seen
        assert seen[0][1] != seen[1][1], seen
        prov = got[0]["provenance"]
        assert prov["initiator"]["host"] == host and prov["responder"]["host"] == host, prov
        print(f"ok: srun --mpi=pmix -N 2 -n 2 {name}: {len(got)} records ok in {seconds:.1f} s; "
              f"bootstrap method={how['method']} launcher={how['launcher']} ranks={how['ranks']} "
              f"rendezvous={how['rendezvous']} ({how['pmix_version'].split(' (')[0]}); "
              f"rank 0 on {seen[0][0]}, rank 1 on {seen[1][0]} (different Slurm nodes, one host "
              f"'{host}'), step {seen[0][2]}, connect {how['connect_ms']:.0f} ms")

    # srun --mpi=none: no PMIx server, the ranks read SLURM_PROCID & co.
    out = os.path.join(work, "none-one-node.jsonl")
    result, seconds = run_once(
        SRUN + ["--mpi=none", "-N", "1", "-n", "2"] +
        wrapped(work, "none1", [uniperf, "run", suite, "-c", tcp, "-o", out, "--timeout", "60",
                                "--quiet"]), env, 150, cwd=work)
    got, how = check_ok("srun --mpi=none -N 1", result, out, "launcher-env")
    port = int(how["rendezvous"].rsplit(":", 1)[1])
    assert how["rendezvous"].startswith("127.0.0.1:") and 20000 <= port < 30000, how
    assert "pmix_version" not in how, how
    seen = ranks_seen(work, "none1")
    assert seen[0][0] == seen[1][0], seen
    print(f"ok: srun --mpi=none -N 1 -n 2: method={how['method']} launcher={how['launcher']}, "
          f"both ranks on {seen[0][0]}, derived rendezvous {how['rendezvous']}, {seconds:.1f} s")

    coordinator = f"127.0.0.1:{free_port()}"
    out = os.path.join(work, "none-two-nodes.jsonl")
    result, seconds = run_once(
        SRUN + ["--mpi=none", "-N", "2", "-n", "2"] +
        wrapped(work, "none2", [uniperf, "run", suite, "-c", tcp, "-o", out, "--timeout", "60",
                                "--quiet", "--coordinator", coordinator]), env, 150, cwd=work)
    got, how = check_ok("srun --mpi=none -N 2 --coordinator", result, out, "launcher-env")
    assert how["rendezvous"] == coordinator, how
    seen = ranks_seen(work, "none2")
    assert {seen[0][0], seen[1][0]} == {"n1", "n2"}, seen
    print(f"ok: srun --mpi=none -N 2 -n 2 --coordinator {coordinator}: method={how['method']} "
          f"launcher={how['launcher']}, rank 0 on {seen[0][0]}, rank 1 on {seen[1][0]}, "
          f"{seconds:.1f} s")

    # Two nodes, no PMIx and no --coordinator: nowhere to meet; said at once.
    out = os.path.join(work, "none-nowhere.jsonl")
    result, seconds = run_once(SRUN + ["--mpi=none", "-N", "2", "-n", "2", uniperf, "run", suite,
                                       "-c", tcp, "-o", out, "--quiet"], env, 150, cwd=work)
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    assert "give --coordinator HOST:PORT" in result.stderr, result.stderr
    assert not os.path.exists(out) or not records(out), "a run without a rendezvous wrote records"
    print(f"ok: srun --mpi=none -N 2 without --coordinator: refused, exit 3, {seconds:.1f} s")

    # Four ranks on two nodes, two a node: every pair once, in 3 rounds of
    # 2, the records gathered at rank 0 naming both ranks and their local
    # ranks (a node's two ranks are told apart).
    out = os.path.join(work, "four.jsonl")
    pairs_suite = os.path.join(work, "pairs.yaml")
    open(pairs_suite, "w").write(
        "suite: slurm-pairs\ntests:\n"
        "  - {name: lat, op: send, pattern: latency, sizes: [8], iterations: 200, pairs: all}\n")
    result, seconds = run_once(SRUN + ["--mpi=pmix", "-N", "2", "-n", "4", uniperf, "run",
                                       pairs_suite, "-c", tcp, "-o", out, "--timeout", "60",
                                       "--quiet"], env, 150, cwd=work)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    first_pass = [r for r in records(out) if not r["placement"].get("retest")]
    met = sorted((r["placement"]["initiator"]["rank"], r["placement"]["responder"]["rank"])
                 for r in first_pass)
    assert met == [(i, j) for i in range(4) for j in range(i + 1, 4)], met
    for r in first_pass:
        assert r["status"] == "ok", (r["status"], r["reason"])
        assert r["provenance"]["bootstrap"]["launcher"] == "slurm", r["provenance"]["bootstrap"]
        assert r["placement"]["ranks"] == 4, r["placement"]
        for side in ("initiator", "responder"):
            assert r["placement"][side]["local_rank"] in (0, 1), r["placement"]
    # One host, two Slurm nodes: the node names tell ranks 0-1 from 2-3
    # (srun fills n1 first), the host name cannot.
    nodes = {}
    for r in first_pass:
        for side in ("initiator", "responder"):
            nodes[r["placement"][side]["rank"]] = r["placement"][side]["node"]
    assert sorted(nodes.items()) == [(0, "n1"), (1, "n1"), (2, "n2"), (3, "n2")], nodes
    assert "between every pair of 4 ranks" in result.stdout and "n2/1" in result.stdout, \
        result.stdout
    print(f"ok: srun --mpi=pmix -N 2 -n 4: every pair once, gathered at rank 0, ranks named by "
          f"node and local rank, {seconds:.1f} s")

    # One task is no pair: a plain run, i.e. a local pair inside the step.
    out = os.path.join(work, "one-task.jsonl")
    result, seconds = run_once(SRUN + ["--mpi=pmix", "-n", "1", uniperf, "run", suite, "-c", tcp,
                                       "-o", out, "--timeout", "60", "--quiet"], env, 150, cwd=work)
    check_ok("srun -n 1", result, out, "local-pair")
    print(f"ok: srun --mpi=pmix -n 1: a local pair in the step, {seconds:.1f} s")

    # A rank that dies mid-run ends the job within seconds, not at the end of
    # its 120 s test: rank 1 kills itself 5 s in ($$ is uniperf after exec).
    long_suite = os.path.join(work, "long.yaml")
    open(long_suite, "w").write(LONG_SUITE)
    out = os.path.join(work, "dead.jsonl")
    script = ('if [ "$SLURM_PROCID" = 1 ]; then (sleep 5; kill -9 $$) & fi; '
              f'exec {uniperf} run {long_suite} -c {tcp} -o {out} --quiet')
    result, seconds = run_once(SRUN + ["--mpi=pmix", "-N", "2", "-n", "2", "sh", "-c", script],
                               env, 150, cwd=work)
    assert result.returncode not in (0, 124), (result.returncode, result.stdout, result.stderr)
    assert seconds < 60, f"a dead rank took {seconds:.0f} s to end the job: {result.stderr}"
    dead = records(out)
    assert len(dead) == 1 and dead[0]["status"] == "error", dead
    print(f"ok: rank 1 killed 5 s into a 120 s test: srun ended after {seconds:.1f} s, "
          f"exit {result.returncode}; rank 0's record: {dead[0]['status']}: "
          f"{dead[0].get('reason', '')[:80]}")

    # A rank that fails before the rendezvous: with srun -K (--kill-on-bad-exit)
    # Slurm ends rank 0's wait in the PMIx fence at once (without -K rank 0
    # waits out the bootstrap's 60 s deadline and exits 3; too slow for here).
    out = os.path.join(work, "early.jsonl")
    script = ('if [ "$SLURM_PROCID" = 1 ]; then sleep 1; exit 9; fi; '
              f'exec {uniperf} run {suite} -c {tcp} -o {out} --quiet')
    result, seconds = run_once(SRUN + ["-K", "--mpi=pmix", "-N", "2", "-n", "2", "sh", "-c", script],
                               env, 150, cwd=work)
    assert result.returncode not in (0, 124), (result.returncode, result.stdout, result.stderr)
    assert seconds < 30, f"a rank that never started took {seconds:.0f} s to end the job"
    assert not os.path.exists(out) or not records(out), "rank 0 wrote records without a peer"
    print(f"ok: srun -K, rank 1 failed before the rendezvous: ended after {seconds:.1f} s, "
          f"exit {result.returncode}")

    # sbatch: the batch script itself is no rank (SLURM_PROCID=0 without a
    # step), so its own uniperf is a local pair; its srun is the pair of ranks.
    batch = os.path.join(work, "batch.sh")
    open(batch, "w").write(
        "#!/bin/bash\n"
        "#SBATCH --job-name=uniperf-e2e-batch\n"
        "#SBATCH --nodes=2 --ntasks=2 --time=3\n"
        f"#SBATCH --output={work}/batch.out\n"
        "set -e\n"
        f"{uniperf} run {suite} -c {tcp} -o {work}/batch-pair.jsonl --quiet\n"
        f"srun --mpi=pmix {uniperf} run {suite} -c {tcp} -o {work}/batch-srun.jsonl --quiet\n")
    result, seconds = run_once(["sbatch", "--wait", f"--chdir={work}", batch], env, 150, cwd=work)
    log = open(os.path.join(work, "batch.out")).read() if os.path.exists(
        os.path.join(work, "batch.out")) else "(no batch.out)"
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr, log)
    check_ok("sbatch: the script's own uniperf", result, os.path.join(work, "batch-pair.jsonl"),
             "local-pair")
    _, how = check_ok("sbatch: srun in the script", result, os.path.join(work, "batch-srun.jsonl"),
                      "pmix")
    print(f"ok: sbatch --wait ({result.stdout.strip()}): ended after {seconds:.1f} s; the script's "
          f"own uniperf a local pair, its srun method={how['method']} launcher={how['launcher']}")
except BaseException:
    failed = True
    raise
finally:
    signal.alarm(0)
    down, down_s = run_once([CLUSTER, "down", cluster], dict(os.environ), 120)
    print(f"{'ok' if down.returncode == 0 else 'FAILED'}: slurm-localhost down in {down_s:.1f} s: "
          f"{down.stderr.strip()}")
    if down.returncode != 0:
        failed = True
    if not failed:
        subprocess.run(["rm", "-rf", work])
    else:
        print(f"kept for a look: {work}")
sys.exit(0 if down.returncode == 0 else 1)
