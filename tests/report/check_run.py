#!/usr/bin/env python3
"""`uniperf run --csv --junit --html` on a real local pair over kernel TCP.

Usage: check_run.py UNIPERF SUITE CONFIG OUTDIR

The run's report files must be byte for byte what `uniperf report` makes
from the run's own JSON Lines (every view comes from the same records), and
those are then checked by check_views.py's independent parsers.
"""
import os
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    uniperf, suite, config, outdir = sys.argv[1:5]
    os.makedirs(outdir, exist_ok=True)
    out = {kind: os.path.join(outdir, "run." + kind) for kind in ("jsonl", "csv", "xml", "html")}
    for path in out.values():
        if os.path.exists(path):
            os.remove(path)
    run = subprocess.run(
        [uniperf, "run", suite, "-c", config, "--quiet", "-o", out["jsonl"], "--csv", out["csv"],
         "--junit", out["xml"], "--html", out["html"]],
        capture_output=True, text=True, timeout=240)
    if run.returncode != 0:
        fail(f"uniperf run exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    # The latency test keeps its samples: beside the results, and in the HTML
    # report (which `uniperf report` below must draw alike from the file).
    samples = os.path.join(outdir, "run.samples.csv")
    if not os.path.exists(samples):
        fail("no samples file beside the results")
    rows = [line for line in open(samples) if not line.startswith("#")]
    if len(rows) != 1 + 2 * 200:
        fail(f"{len(rows) - 1} sample rows, expected 400 (two sizes of 200 iterations)")
    if '"latency_samples":[{' not in open(out["html"]).read():
        fail("the run's HTML report has no latency sample series")
    leftovers = [name for name in os.listdir(outdir) if ".tmp." in name]
    if leftovers:
        fail(f"temporary files left behind: {leftovers}")
    again = {kind: os.path.join(outdir, "report." + kind) for kind in ("csv", "xml", "html")}
    subprocess.run([uniperf, "report", out["jsonl"], "--quiet", "--csv", again["csv"], "--junit",
                    again["xml"], "--html", again["html"]], check=True, timeout=60)
    for kind in ("csv", "xml", "html"):
        with open(out[kind], "rb") as a, open(again[kind], "rb") as b:
            if a.read() != b.read():
                fail(f"the run's {kind} differs from `uniperf report` on its records")
    here = os.path.dirname(os.path.abspath(__file__))
    check = subprocess.run([sys.executable, os.path.join(here, "check_views.py"), uniperf,
                            out["jsonl"], os.path.join(outdir, "views")], timeout=120)
    if check.returncode != 0:
        fail("check_views.py on the run's records failed")
    print("ok: the run's CSV, JUnit and HTML (with its latency samples) match the views of its "
          "records")


if __name__ == "__main__":
    main()
