#!/usr/bin/env python3
"""A job of more than two ranks under `mpirun --oversubscribe` (cli/rank_job.hpp):
each test's `pairs:` pairs the ranks in rounds of disjoint pairs, every
record names its two ranks (placement), and rank 0 gathers them all into
the one results file.

  * -np 4 over every local config whose plugin is built (tcp, ucx-shm,
    ucx-tcp, ofi-tcp): `pairs: all` measures each of the 6 pairs once in 3
    rounds of 2, `ring` each rank to the next in 2 rounds, `first` ranks 0
    and 1 only, `bisection` 0-2 and 1-3 at once (their sum printed); and
    the patterns whose pairs share ranks, each one round of pairs at once
    (a rank in several runs each on a thread): `incast` 1, 2, 3 into 0,
    `fanout` 0 out to 1, 2, 3, `neighbors` each rank to the next,
    `all_to_all` all 12 ordered pairs; each record has its measured
    interval, and rank 0 prints each round's sum and overlap;
  * -np 3: `all` with an odd count, 3 rounds of one pair, one rank idle in each;
  * a rank killed 4 s into a job whose rounds last 30 s: every rank ends
    within seconds (not after the rounds), mpirun exits non-zero, rank 0 says
    which rank it lost, and the results file holds only whole records;
  * a rank stopped (SIGSTOP) the same way: lost through the star's heartbeats.

Skipped (77) when mpirun is absent."""
import glob, os, shutil, sys, tempfile
from launched import rank_signalled, records, run_once

uniperf, source_dir = sys.argv[1], sys.argv[2]
SUITE = ("suite: ranks\ntests:\n"
         "  - {name: lat, op: send, pattern: latency, sizes: [8, 4096], iterations: 300, pairs: all}\n"
         "  - {name: bw, op: send, pattern: bandwidth, sizes: [65536], iterations: 300, pairs: ring}\n"
         "  - {name: one, op: send, pattern: latency, sizes: [8], iterations: 300}\n"
         "  - {name: across, op: send, pattern: bandwidth, sizes: [65536], iterations: 300, "
         "pairs: bisection}\n"
         "  - {name: in, op: send, pattern: bandwidth, sizes: [65536], iterations: 300, "
         "pairs: incast}\n"
         "  - {name: out, op: send, pattern: bandwidth, sizes: [65536], iterations: 300, "
         "pairs: fanout}\n"
         "  - {name: halo, op: send, pattern: latency, sizes: [8], iterations: 300, "
         "pairs: neighbors}\n"
         "  - {name: a2a, op: send, pattern: bandwidth, sizes: [4096], iterations: 300, "
         "pairs: all_to_all}\n")

mpirun = shutil.which("mpirun")
if mpirun is None:
    print("SKIP: mpirun is not installed (apt-get install openmpi-bin)")
    sys.exit(77)

env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
MPIRUN = [mpirun, "--allow-run-as-root", "--oversubscribe"]
PLUGINS = os.path.join(os.path.dirname(uniperf), "..", "lib", "uniperf")






def pairs_of(got, test):
    return [(r["placement"]["round"], r["placement"]["initiator"]["rank"],
             r["placement"]["responder"]["rank"]) for r in got if r["test"] == test]


def check_four(name, got, seconds):
    for r in got:
        assert r["status"] == "ok", (name, r["test"], r["size"], r["status"], r["reason"])
        p = r["placement"]
        assert p["ranks"] == 4 and r["provenance"]["bootstrap"]["ranks"] == 4, p
        assert p["initiator"]["host"] and p["responder"]["host"], p
        # Every rank is on this host: their local ranks tell them apart.
        assert p["initiator"]["local_rank"] != p["responder"]["local_rank"], p
    # The second pass (retests of suspect pairs, one pair a round) depends
    # on this machine's load; its rounds come after the first pass's 3.
    retests = [r for r in got if r["placement"].get("retest")]
    assert all(r["test"] == "lat" and r["placement"]["round"] >= 3 for r in retests), retests
    got = [r for r in got if not r["placement"].get("retest")]
    lat = pairs_of(got, "lat")
    assert len(lat) == 6 * 2, lat  # 6 pairs, 2 sizes each
    met = {(i, j) for _, i, j in lat}
    assert met == {(i, j) for i in range(4) for j in range(i + 1, 4)}, met
    for k in range(3):  # 3 rounds of 2 disjoint pairs
        in_round = {(i, j) for rnd, i, j in lat if rnd == k}
        assert len(in_round) == 2, (k, in_round)
        ranks = [x for pair in in_round for x in pair]
        assert len(set(ranks)) == 4, (k, in_round)
    ring = pairs_of(got, "bw")
    assert sorted((i, j) for _, i, j in ring) == [(0, 1), (1, 2), (2, 3), (3, 0)], ring
    assert {rnd for rnd, _, _ in ring} == {0, 1}, ring
    assert pairs_of(got, "one") == [(0, 0, 1)], pairs_of(got, "one")
    assert sorted(pairs_of(got, "across")) == [(0, 0, 2), (0, 1, 3)], pairs_of(got, "across")
    assert sorted(pairs_of(got, "in")) == [(0, 1, 0), (0, 2, 0), (0, 3, 0)], pairs_of(got, "in")
    assert sorted(pairs_of(got, "out")) == [(0, 0, 1), (0, 0, 2), (0, 0, 3)], \
        pairs_of(got, "out")
    assert sorted(pairs_of(got, "halo")) == [(0, 0, 1), (0, 1, 2), (0, 2, 3), (0, 3, 0)], \
        pairs_of(got, "halo")
    assert sorted(pairs_of(got, "a2a")) == \
        [(0, i, j) for i in range(4) for j in range(4) if i != j], pairs_of(got, "a2a")
    for r in got:
        m = r["measured"]
        assert 0 < m["from_unix_us"] <= m["to_unix_us"], m
    print(f"ok: mpirun -np 4 {name}: {len(got)} records and {len(retests)} of suspect pairs "
          f"retested alone, in {seconds:.1f} s ({got[0]['provenance']['bootstrap']['method']} "
          "bootstrap)")


with tempfile.TemporaryDirectory() as work:
    suite = os.path.join(work, "suite.yaml")
    open(suite, "w").write(SUITE)

    configs = [("tcp", "tcp"), ("ucx-shm", "ucx"), ("ucx-tcp", "ucx"), ("ofi-tcp", "ofi")]
    for name, plugin in configs:
        if not os.path.exists(os.path.join(PLUGINS, f"libuniperf-{plugin}.so")):
            print(f"note: {name} left out: the {plugin} plugin is not built")
            continue
        out = os.path.join(work, name + ".jsonl")
        result, seconds = run_once(MPIRUN + ["-np", "4", uniperf, "run", suite, "-c",
                                             os.path.join(source_dir, "configs", name + ".yaml"),
                                             "-o", out, "--timeout", "60"], env, 300)
        assert result.returncode == 0, (name, result.returncode, result.stdout, result.stderr)
        check_four(name, records(out), seconds)
        # Rank 0 names each pair above its lines.
        assert "ranks 0 (" in result.stdout and "round 3 of pairs: all" in result.stdout, \
            result.stdout
        assert "across the bisection of 4 ranks, 2 pairs at once: sum" in result.stdout, \
            result.stdout
        for said in ("into rank 0 from 3 ranks at once (incast): sum",
                     "from rank 0 to 3 ranks at once (fanout): sum",
                     "each of 4 ranks to the next, 4 pairs at once: per pair min",
                     "all to all among 4 ranks, 12 pairs at once: sum"):
            assert said in result.stdout and "all of them ran together for" in result.stdout, \
                (said, result.stdout)
        # `uniperf report` of the job's file says the same again.
        again, _ = run_once([uniperf, "report", out], env, 60)
        assert again.returncode == 0, (again.returncode, again.stderr)
        assert "into rank 0 from 3 ranks at once (incast): sum" in again.stdout and \
            "between every pair of 4 ranks" in again.stdout, again.stdout

    # An odd count: one rank sits each round out.
    out = os.path.join(work, "three.jsonl")
    result, seconds = run_once(MPIRUN + ["-np", "3", uniperf, "run", suite, "-c",
                                         os.path.join(source_dir, "configs/tcp.yaml"), "-o", out,
                                         "--timeout", "60"], env, 300)
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    lat = [(rnd, i, j) for rnd, i, j in pairs_of(records(out), "lat") if rnd < 3]
    assert sorted({(i, j) for _, i, j in lat}) == [(0, 1), (0, 2), (1, 2)], lat
    assert {rnd for rnd, _, _ in lat} == {0, 1, 2}, lat
    assert len(pairs_of(records(out), "a2a")) == 6, pairs_of(records(out), "a2a")
    print(f"ok: mpirun -np 3: every pair once in 3 rounds, {seconds:.1f} s")

    # A rank that dies mid-round ends the whole job within seconds. Each
    # rank's stderr goes to a file of its own (mpirun may drop the output
    # of the ranks it kills).
    long_suite = os.path.join(work, "long.yaml")
    open(long_suite, "w").write(
        "suite: ranks-long\ntests:\n"
        "  - {name: long, op: send, pattern: bandwidth, sizes: [4K], duration: 30s, pairs: all}\n")
    tcp = os.path.join(source_dir, "configs/tcp.yaml")

    def rank_two_signalled(name, signal_name):
        """A 4-rank job of `long_suite` whose rank 2 gets `signal_name` 4 s in:
        the job must end soon after (three rounds of 30 s would be 90 s), non-zero.
        Returns the result, its seconds, rank 0's stderr and the kept records."""
        result, seconds, said, kept = rank_signalled(MPIRUN, 4, 2, signal_name, uniperf,
                                                     long_suite, tcp, work, name, env)
        assert result.returncode != 0, (name, result.returncode, result.stderr)
        assert seconds < 45, f"{name}: rank 2 took {seconds:.0f} s to end the job: {result.stderr}"
        return result, seconds, said, kept

    result, seconds, said, kept = rank_two_signalled("dead", "9")
    assert "lost rank 2" in said, said
    for r in kept:
        assert r["status"] in ("ok", "error", "skipped") and "placement" in r, r
    # Rank 0's own pair (0-3, in the same round) was stopped, and says why.
    assert any(r["reason"] == "not run: rank 2 was lost" for r in kept), \
        [(r["status"], r["reason"]) for r in kept]
    lost_line = next(line for line in said.splitlines() if "lost rank 2" in line)
    print(f"ok: rank 2 killed 4 s in: the job ended after {seconds:.1f} s, exit "
          f"{result.returncode}; rank 0 said: {lost_line}")

    # A rank that stops answering (SIGSTOP: alive, its sockets open) is lost
    # through the heartbeats on the star, within seconds, not the round's
    # budget of minutes.
    result, seconds, said, _ = rank_two_signalled("stopped", "STOP")
    assert "lost rank 2" in said and "stopped answering" in said, \
        (said, [open(f).read() for f in glob.glob(os.path.join(work, "stopped-rank*.err"))])
    print(f"ok: rank 2 stopped 4 s in: the job ended after {seconds:.1f} s, exit "
          f"{result.returncode}")
