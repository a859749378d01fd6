#!/usr/bin/env python3
"""MPI level beside transport level: the quick suite under `mpirun -np 2` over
configs/mpi.yaml (Open MPI: ob1 over the vader shared-memory BTL, one-sided
through its osc component) and over a transport config (default
configs/ucx-shm.yaml), alternating, REPEATS times each, and the medians'
ratios mpi/transport (latency: p50 us, lower is better; bandwidth: MB/s,
higher is better). Timing numbers live here, never in pass/fail tests.

  tests/fidelity/mpi_vs_transport.py build/bin/uniperf [REPEATS] [CONFIG]
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

uniperf = sys.argv[1]
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
source_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
other = sys.argv[3] if len(sys.argv) > 3 else os.path.join(source_dir, "configs", "ucx-shm.yaml")
configs = {"mpi": os.path.join(source_dir, "configs", "mpi.yaml"), "transport": other}
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MPIRUN = [shutil.which("mpirun") or "mpirun", "--allow-run-as-root", "--oversubscribe",
          "--mca", "pml", "ob1", "--mca", "btl", "self,vader", "-np", "2"]
ROWS = [("send_lat", 8), ("read_lat", 8), ("fetch_add_lat", 8), ("cswap_lat", 8),
        ("send_bw", 65536), ("write_bw", 65536), ("read_bw", 65536), ("send_msgrate", 8)]


def headline(r):
    if r["status"] != "ok":
        return None
    if "latency_us" in r and r["latency_us"]:
        return r["latency_us"]["p50"]
    b = r["bandwidth"]
    return b["Mmsg_per_s"] if r["test"].endswith("msgrate") else b["MB_per_s"]


values = {name: {row: [] for row in ROWS} for name in configs}
with tempfile.TemporaryDirectory() as work:
    for i in range(repeats):
        for name, config in configs.items():
            out = os.path.join(work, f"{name}{i}.jsonl")
            subprocess.run(MPIRUN + [uniperf, "run", os.path.join(source_dir, "suites/quick.yaml"),
                                     "-c", config, "-o", out, "--timeout", "60"],
                           env=env, check=True, stdout=subprocess.DEVNULL, timeout=600)
            for line in open(out):
                r = json.loads(line)
                key = (r["test"], r["size"])
                if key in values[name] and headline(r) is not None:
                    values[name][key].append(headline(r))

print(f"| test | size | mpi | {os.path.basename(other)} | mpi / transport |")
print("|---|---|---|---|---|")
for row in ROWS:
    a, b = values["mpi"][row], values["transport"][row]
    unit = "us p50" if row[0].endswith("_lat") else ("Mmsg/s" if "msgrate" in row[0] else "MB/s")
    if not a or not b:
        print(f"| {row[0]} | {row[1]} | {'skipped' if not a else ''} | {'skipped' if not b else ''} | |")
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {row[0]} | {row[1]} B | {ma:.3f} {unit} | {mb:.3f} {unit} | {ma / mb:.2f} |")
print(f"(medians of {repeats} alternating runs each; mpi runs: {[len(v) for v in values['mpi'].values()]})")
