#!/usr/bin/env python3
"""A run started by `mpirun -np 2` measures what a local pair measures: its two
ranks find each other through the launcher (PMIx when built with libpmix,
else the launcher's environment), rank 0 writes the records, and every record
says which bootstrap it used. Jobs of more ranks are rank_job_e2e's. Over a
config of two rails (two loopback addresses, docs/rails.md) a launched pair
and a launched job of four ranks stripe, alternate and ping-pong over both,
each rail carrying its share, as a local pair does; two pairs at once,
bound, each on a rail of its own (the seed's two process pairs).
Skipped (77) when mpirun is absent."""
import csv, os, shutil, sys, tempfile
from launched import records, run_once
from servers import free_port

uniperf, source_dir = sys.argv[1], sys.argv[2]
SUITE = ("suite: launcher\ntests:\n"
         "  - {name: lat, op: send, pattern: latency, sizes: [8, 4096], iterations: 200}\n"
         "  - {name: bw, op: send, pattern: bandwidth, sizes: [65536], iterations: 200}\n")

mpirun = shutil.which("mpirun")
if mpirun is None:
    print("SKIP: mpirun is not installed (apt-get install openmpi-bin)")
    sys.exit(77)

# Open MPI refuses root without these; --oversubscribe lets ranks start
# beyond the cores of this machine.
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
MPIRUN = [mpirun, "--allow-run-as-root", "--oversubscribe"]




def launched(np, suite, config, out, timeout=240, extra=()):
    # --timeout bounds a size that hangs, so a stuck run ends well before ours.
    return run_once(MPIRUN + ["-np", str(np), uniperf, "run", suite, "-c", config, "-o", out,
                              "--timeout", "60", *extra], env, timeout)




with tempfile.TemporaryDirectory() as work:
    suite = os.path.join(work, "suite.yaml")
    open(suite, "w").write(SUITE)

    configs = ["tcp.yaml"]
    if os.path.exists(os.path.join(os.path.dirname(uniperf), "..", "lib", "uniperf", "libuniperf-ucx.so")):
        configs.append("ucx-shm.yaml")
    for name in configs:
        config = os.path.join(source_dir, "configs", name)
        out = os.path.join(work, name + ".jsonl")
        result, seconds = launched(2, suite, config, out)
        assert result.returncode == 0, (name, result.returncode, result.stdout, result.stderr)
        got = records(out)
        assert len(got) == 3, (name, got)
        for r in got:
            assert r["status"] in ("ok", "skipped"), (name, r.get("status"), r.get("reason"))
            how = r["provenance"]["bootstrap"]
            assert how["method"] in ("pmix", "launcher-env"), how
            assert how["launcher"] == "openmpi", how
            assert how["ranks"] == 2, how
        assert any(r["status"] == "ok" for r in got), (name, got)
        # Both ranks were on this host: the responder's facts came through.
        assert got[0]["provenance"]["responder"]["host"], got[0]["provenance"]
        print(f"ok: mpirun -np 2 {name}: {len(got)} records in {seconds:.1f} s, "
              f"bootstrap {how['method']} ({how.get('pmix_version', 'no PMIx')}), "
              f"connect {how.get('connect_ms', 0):.0f} ms")

    # The environment path, as a uniperf built without libpmix takes it: at
    # the derived port when both ranks are here (no PMIx namespace in the
    # ranks' environment), and at --coordinator.
    tcp = os.path.join(source_dir, "configs/tcp.yaml")
    for rendezvous in (None, "coordinator"):
        out = os.path.join(work, "env.jsonl")
        if rendezvous:  # a free port, found now
            rendezvous = f"127.0.0.1:{free_port()}"
            extra = ["--coordinator", rendezvous]
        else:
            extra = []
        result, seconds = run_once(MPIRUN + ["-np", "2", "env", "-u", "PMIX_NAMESPACE", uniperf,
                                             "run", suite, "-c", tcp, "-o", out, "--timeout",
                                             "60"] + extra, env, 240)
        assert result.returncode == 0, (extra, result.returncode, result.stdout, result.stderr)
        got = records(out)
        assert len(got) == 3 and all(r["status"] == "ok" for r in got), got
        how = got[0]["provenance"]["bootstrap"]
        assert how["method"] == "launcher-env" and how["launcher"] == "openmpi", how
        if rendezvous:
            assert how["rendezvous"] == rendezvous, how
        else:
            port = int(how["rendezvous"].rsplit(":", 1)[1])
            assert how["rendezvous"].startswith("127.0.0.1:") and 20000 <= port < 30000, how
        print(f"ok: mpirun -np 2 without PMIx, rendezvous {how['rendezvous']}: {seconds:.1f} s, "
              f"connect {how['connect_ms']:.0f} ms")

    # Rails under a launcher: each pair's session opens every rail of the
    # config, as between two hosts. Two loopback addresses are two rails of
    # this host (the tcp plugin binds and connects each rail's own).
    rails_config = os.path.join(work, "rails.yaml")
    open(rails_config, "w").write(
        "name: tcp-loopback-rails\nplugin: tcp\ndescription: two rails, two loopback addresses\n"
        "rails:\n  - {peer_address: 127.0.0.1, bind_address: 127.0.0.1}\n"
        "  - {peer_address: 127.0.0.2, bind_address: 127.0.0.2}\n")
    rails_suites = {
        2: ("suite: launched-rails\ntests:\n"
            "  - {name: stripe, op: send, pattern: bandwidth, sizes: [1M], iterations: 200, "
            "rail_policy: stripe, validate: true}\n"
            "  - {name: round_robin, op: send, pattern: bandwidth, sizes: [64K], iterations: 200, "
            "rail_policy: round_robin, validate: true}\n"
            "  - {name: lat_stripe, op: send, pattern: latency, sizes: [1M], iterations: 50, "
            "rail_policy: stripe, validate: true}\n"),
        4: ("suite: launched-rails-job\ntests:\n"
            "  - {name: stripe, op: send, pattern: bandwidth, sizes: [1M], iterations: 200, "
            "rail_policy: stripe, validate: true, pairs: all}\n"
            "  - {name: incast, op: send, pattern: bandwidth, sizes: [64K], iterations: 200, "
            "rail_policy: round_robin, validate: true, pairs: incast}\n"
            # Two process pairs at once, bound: each pair on a rail of its own.
            "  - {name: bound_pairs, op: send, pattern: bandwidth, sizes: [64K], "
            "iterations: 200, rail_policy: bind, validate: true, pairs: bisection}\n"),
    }
    for np, text in rails_suites.items():
        rails_suite = os.path.join(work, f"rails-{np}.yaml")
        open(rails_suite, "w").write(text)
        out = os.path.join(work, f"rails-{np}.jsonl")
        result, seconds = launched(np, rails_suite, rails_config, out)
        assert result.returncode == 0, (np, result.returncode, result.stdout, result.stderr)
        got = records(out)
        assert got and all(r["status"] == "ok" for r in got), \
            (np, [(r["test"], r["status"], r.get("reason")) for r in got])
        for r in got:
            assert r["provenance"]["bootstrap"]["method"] in ("pmix", "launcher-env"), r["provenance"]
            assert r["plugin"]["device"].count(" | ") == 1, r["plugin"]
            # Every message's bytes over the two rails, half on each: a
            # striped message in two even pieces, round-robin messages in turn.
            per_rail = [rail["bytes"] for rail in r["rails"]["per_rail"]]
            moved = r["bandwidth"]["bytes"] if "bandwidth" in r else None
            if moved is not None:
                assert sum(per_rail) == moved, (r["test"], per_rail, moved)
            if r["test"] == "bound_pairs":
                continue  # below: a rail per pair
            assert len(per_rail) == 2 and per_rail[0] == per_rail[1] > 0, (r["test"], per_rail)
        # Bound, the two pairs of a bisection round each had a rail of their
        # own: the first pair's bytes all on rail 0, the second's on rail 1.
        bound = [[rail["bytes"] for rail in r["rails"]["per_rail"]]
                 for r in got if r["test"] == "bound_pairs" and not r["placement"].get("retest")]
        if np == 4:
            assert sorted(bound) == sorted([[bound[0][0] or bound[0][1], 0],
                                            [0, bound[0][0] or bound[0][1]]]) and \
                all(max(b) > 0 for b in bound), bound
        pairs = {(r["placement"]["initiator"]["rank"], r["placement"]["responder"]["rank"])
                 for r in got if "placement" in r}
        assert np == 2 or len(pairs) >= 6, pairs
        print(f"ok: mpirun -np {np} over two rails: {len(got)} records, every one half on each "
              f"rail, in {seconds:.1f} s")

    # Traces of a job of four ranks: every pair's rows, both sides, reach
    # rank 0's trace file on its clock (each rank's offset measured at the
    # job's start), named by the pair's ranks, inside the pair's measured
    # interval. --cpu and --peer-cpu pin ranks 0 and 1 only: ranks 2 and 3
    # keep the launcher's placement (one CPU for every rank would stack them).
    traced_suite = os.path.join(work, "traced.yaml")
    open(traced_suite, "w").write(
        "suite: launched-traces\ntests:\n"
        "  - {name: stream, op: send, pattern: bandwidth, sizes: [4096], iterations: 200, "
        "trace: 1, pairs: bisection}\n"
        "  - {name: pingpong, op: send, pattern: latency, sizes: [64], iterations: 100, "
        "trace: 1, keep_samples: true, pairs: bisection}\n")
    out = os.path.join(work, "traced.jsonl")
    result, seconds = launched(4, traced_suite, os.path.join(source_dir, "configs/tcp.yaml"), out,
                               extra=("--cpu", "0", "--peer-cpu", "1"))
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "ranks 2 to 3 are placed by the launcher's binding" in result.stderr, result.stderr
    got = records(out)
    # (mpirun --oversubscribe binds no rank here: each may run on every CPU.)
    for r in got:
        for side in ("initiator", "responder"):
            rank = r["placement"][side]["rank"]
            affinity = r["provenance"][side]["affinity"]
            assert affinity == [rank] if rank < 2 else len(affinity) > 1, \
                (r["test"], side, rank, affinity)
    trace_path = os.path.join(work, "traced.trace.csv")
    with open(trace_path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert len(got) == 4, [(r["test"], r["status"]) for r in got]
    for r in got:
        pair = f"{r['placement']['initiator']['rank']}-{r['placement']['responder']['rank']}"
        clock = r["provenance"]["rank0_clock"]
        # One host: every rank's clock is rank 0's, within the uncertainty.
        assert abs(clock["offset_ns"]) <= clock["uncertainty_ns"], (pair, clock)
        assert (clock["round_trips"] > 0) == (pair[0] != "0"), (pair, clock)
        mine = [x for x in rows if x["test"] == r["test"] and x["pair"] == pair]
        assert r["status"] == "ok" and len(mine) == r["trace"]["rows"] == 200, \
            (r["test"], pair, r["status"], len(mine), r.get("trace"))
        sides = {x["side"] for x in mine}
        assert sides == ({"initiator", "responder"} if r["test"] == "pingpong" else {"initiator"}), \
            (r["test"], pair, sides)
        slack_us = clock["uncertainty_ns"] / 1e3 + 2 + r["provenance"]["responder"]["wall_clock"]["uncertainty_ns"] / 1e3
        m = r["measured"]
        outside = [x for x in mine if x["side"] == "initiator" and not
                   (m["from_unix_us"] - slack_us <= int(x["posted_ns"]) / 1e3 <= m["to_unix_us"] + slack_us)]
        assert not outside, (r["test"], pair, m, outside[:2])
    # Every pair's kept samples reach rank 0's samples file too, each under its pair.
    with open(os.path.join(work, "traced.samples.csv")) as f:
        samples = list(csv.DictReader(line for line in f if not line.startswith("#")))
    per_pair = {}
    for x in samples:
        per_pair[x["pair"]] = per_pair.get(x["pair"], 0) + 1
    pingpongs = {f"{r['placement']['initiator']['rank']}-{r['placement']['responder']['rank']}":
                 r["samples_kept"] for r in got if r["test"] == "pingpong"}
    assert per_pair == pingpongs and set(per_pair.values()) == {100}, (per_pair, pingpongs)
    print(f"ok: mpirun -np 4 traced: {len(rows)} rows of 2 pairs on rank 0's trace file, "
          f"{len(samples)} kept samples under their pairs, in {seconds:.1f} s")

    # A local pair of the same suite, for the bootstrap time beside it.
    out = os.path.join(work, "pair.jsonl")
    pair, _ = run_once([uniperf, "run", suite, "-c", os.path.join(source_dir, "configs/tcp.yaml"),
                        "-o", out, "--timeout", "60"], env, 240)
    assert pair.returncode == 0, (pair.returncode, pair.stderr)
    how = records(out)[0]["provenance"]["bootstrap"]
    assert how["method"] == "local-pair", how
    print(f"ok: local pair: connect {how.get('connect_ms', 0):.0f} ms")

    # A rank that dies mid-run ends the other within seconds, not at the end
    # of its 120 s test: rank 1 kills itself 5 s in (the shell execs uniperf,
    # so $$ is uniperf).
    long_suite = os.path.join(work, "long.yaml")
    open(long_suite, "w").write("suite: launcher-long\ntests:\n"
                                "  - {name: long, op: send, pattern: bandwidth, sizes: [4K], duration: 120s}\n")
    out = os.path.join(work, "dead.jsonl")
    script = ('if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 5; kill -9 $$) & fi; '
              f'exec {uniperf} run {long_suite} -c {tcp} -o {out}')
    result, seconds = run_once(MPIRUN + ["-np", "2", "sh", "-c", script], env, 240)
    assert result.returncode != 0, (result.returncode, result.stderr)
    assert seconds < 90, f"a dead rank took {seconds:.0f} s to end the run: {result.stderr}"
    print(f"ok: rank 1 killed 5 s in: the run ended after {seconds:.1f} s, exit {result.returncode}")
