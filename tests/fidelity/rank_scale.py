#!/usr/bin/env python3
"""How a launched job's cost grows with its ranks: for 2, 4, 8, 16 and 32
ranks under `mpirun --oversubscribe` on this machine, a `pairs: all` test of
tiny iterations over tcp, and per job:

  bootstrap ms   provenance.bootstrap.connect_ms: from connecting to the
                 launcher's ranks to rank 0 having heard every rank (PMIx
                 fence, the star of TCP connections, every rank's hello)
  rounds         the first pass's rounds (n-1, n when odd), and + the
                 second pass's (a suspect pair retested alone, a round each)
  wall s         the whole mpirun, start to end
  s per round    wall / all rounds: what one round costs here (setup of each
                 pair's session, the test, the reports), to scale by
  rank-0 MiB     rank 0's peak resident memory (GNU time's %M), where
                 /usr/bin/time is installed (Debian: apt-get install time)

Timing figures, not a test: printed, never asserted. On 2 cores, 32 ranks
are 16 pairs sharing 2 cores, so "s per round" here is a ceiling for a real
cluster's per-round setup, not its fabric.

  python3 tests/fidelity/rank_scale.py build/bin/uniperf [2 4 8 16 32] [--pairs all]

--pairs names the test's pattern (default all); with a pattern of shared
ranks (incast, fanout, neighbors, all_to_all) the one round runs many pairs
per rank at once, each on a thread with its own connection and transport,
so rank 0's memory then grows with its pairs, not with the records.
"""
import json, os, shutil, subprocess, sys, tempfile, time

uniperf = os.path.abspath(sys.argv[1])
args = sys.argv[2:]
pairs = "all"
if "--pairs" in args:
    at = args.index("--pairs")
    pairs = args[at + 1]
    del args[at:at + 2]
sizes = [int(n) for n in args] or [2, 4, 8, 16, 32]
source_dir = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
mpirun = shutil.which("mpirun")
if mpirun is None:
    sys.exit("mpirun is not installed (apt-get install openmpi-bin)")
gnu_time = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")

print(f"pairs: {pairs}")
print(f"{'ranks':>5} {'rounds':>8} {'bootstrap ms':>12} {'wall s':>7} {'s per round':>11} "
      f"{'rank-0 MiB':>10} {'records':>7}")
with tempfile.TemporaryDirectory() as work:
    suite = os.path.join(work, "scale.yaml")
    open(suite, "w").write("suite: scale\ntests:\n  - {name: lat, op: send, pattern: latency, "
                           f"sizes: [8], iterations: 20, pairs: {pairs}}}\n")
    tcp = os.path.join(source_dir, "configs", "tcp.yaml")
    for n in sizes:
        out = os.path.join(work, f"n{n}.jsonl")
        peak = os.path.join(work, f"n{n}.rss")
        run = f"{uniperf} run {suite} -c {tcp} -o {out} --quiet"
        if gnu_time:
            run = (f'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec {gnu_time} -f %M -o {peak} '
                   f'{run}; else exec {run}; fi')
        started = time.monotonic()
        result = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "--bind-to",
                                 "none", "-np", str(n), "sh", "-c", run],
                                capture_output=True, text=True, env=env, timeout=1800)
        wall = time.monotonic() - started
        if result.returncode != 0:
            print(f"{n:>5} failed (exit {result.returncode}): {result.stderr[-500:]}")
            continue
        records = [json.loads(line) for line in open(out) if line.strip()]
        # Two ranks are one pair, with no placement: one round.
        first = [r for r in records if not r.get("placement", {}).get("retest")]
        rounds = len({r.get("placement", {}).get("round", 0) for r in first})
        retests = len({r["placement"]["round"] for r in records
                       if r.get("placement", {}).get("retest")})
        connect = first[0]["provenance"]["bootstrap"]["connect_ms"]
        rss = f"{int(open(peak).read().split()[-1]) / 1024:.1f}" if gnu_time else "-"
        print(f"{n:>5} {f'{rounds}+{retests}':>8} {connect:>12.0f} {wall:>7.1f} "
              f"{wall / (rounds + retests):>11.2f} {rss:>10} {len(records):>7}")
