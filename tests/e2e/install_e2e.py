"""An install works from any directory: `cmake --install` into a fresh
prefix, then the installed uniperf, run from an unrelated directory, finds
its plugins (lib/uniperf) and the shipped suites and configs
(share/uniperf) by name: `uniperf run quick -c tcp` runs the stock quick
suite over kernel TCP and writes ok records. A name that is neither here nor
shipped is bad input naming it. Before, an install had the binary and the
plugins only: nothing to run.

usage: install_e2e.py CMAKE BUILD_DIR
"""
import json, os, subprocess, sys, tempfile

cmake, build = sys.argv[1], sys.argv[2]
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


with tempfile.TemporaryDirectory() as work:
    prefix = os.path.join(work, "prefix")
    installed = subprocess.run([cmake, "--install", build, "--prefix", prefix],
                               capture_output=True, text=True)
    if installed.returncode != 0:
        sys.exit(f"cmake --install failed: {installed.stderr}")
    uniperf = os.path.join(prefix, "bin", "uniperf")
    for shipped in ["share/uniperf/suites/quick.yaml", "share/uniperf/configs/tcp.yaml",
                    "share/uniperf/configs/udapl-rxe.dat.conf", "lib/uniperf/libuniperf-tcp.so"]:
        check(os.path.isfile(os.path.join(prefix, shipped)), f"not installed: {shipped}")
    check(not os.path.exists(os.path.join(prefix, "share/uniperf/configs/template.yaml")),
          "configs/template.yaml is installed, its plugin is not")

    elsewhere = os.path.join(work, "elsewhere")
    os.mkdir(elsewhere)
    run = subprocess.run([uniperf, "run", "quick", "-c", "tcp", "-o", "r.jsonl", "--quiet"],
                         cwd=elsewhere, capture_output=True, text=True, timeout=600)
    check(run.returncode == 0, f"uniperf run quick -c tcp: exit {run.returncode}: {run.stderr}")
    results = os.path.join(elsewhere, "r.jsonl")
    records = [json.loads(line) for line in open(results)] if os.path.exists(results) else []
    check(len(records) > 0, "no records")
    check(all(r["config"] == "tcp" and r["suite"] == "quick" for r in records),
          f"records of {sorted({(r['suite'], r['config']) for r in records})}")
    ok = [r for r in records if r["status"] == "ok"]
    check(len(ok) >= 5, f"only {len(ok)} ok records of {len(records)}")
    print(f"installed uniperf ran the shipped quick suite over tcp: {len(ok)} ok of "
          f"{len(records)} records")

    missing = subprocess.run([uniperf, "run", "nosuch", "-c", "tcp"], cwd=elsewhere,
                             capture_output=True, text=True, timeout=60)
    check(missing.returncode == 2 and "nosuch" in missing.stderr,
          f"a missing suite: exit {missing.returncode}: {missing.stderr}")

for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
