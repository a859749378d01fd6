#!/usr/bin/env python3
"""What a per-request trace costs (docs/traces.md): message rate (8 B) and
bandwidth (64 KiB) with `trace: 0` and `trace: 1`, alternated round after
round in one process pair per run, over each config given. Prints each
round's figures and the median ratio traced / untraced (1.00 = free).

  tests/fidelity/trace_cost.py build/bin/uniperf [ROUNDS] [CONFIG...]
  (default: 5 rounds over tcp and ucx-shm)
"""
import json, os, statistics, subprocess, sys, tempfile

uniperf = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
configs = sys.argv[3:] or ["tcp", "ucx-shm"]
source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

TESTS = [("rate", "message_rate", "8", "Mmsg_per_s"), ("bw", "bandwidth", "64K", "MB_per_s")]


def suite(order):
    lines = ["suite: trace-cost", "defaults: {duration: 1s, window: 64}", "tests:"]
    for name, pattern, size, _ in TESTS:
        for trace in order:
            lines.append(f"  - {{name: {name}_trace{trace}, op: send, pattern: {pattern}, "
                         f"sizes: [{size}], trace: {trace}, trace_max: 16777216}}")
    return "\n".join(lines) + "\n"


def main():
    for config in configs:
        ratios = {name: [] for name, *_ in TESTS}
        for r in range(rounds):
            order = (0, 1) if r % 2 == 0 else (1, 0)  # alternate which goes first
            with tempfile.TemporaryDirectory() as work:
                path = os.path.join(work, "s.yaml")
                open(path, "w").write(suite(order))
                out = os.path.join(work, "r.jsonl")
                subprocess.run([uniperf, "run", path, "-c",
                                os.path.join(source, "configs", f"{config}.yaml"), "-o", out,
                                "--quiet"], check=True, capture_output=True, timeout=300)
                got = {rec["test"]: rec for rec in map(json.loads, open(out))}
            for name, _, _, metric in TESTS:
                plain = got[f"{name}_trace0"]["bandwidth"][metric]
                traced = got[f"{name}_trace1"]["bandwidth"][metric]
                rows = got[f"{name}_trace1"].get("trace", {}).get("rows")
                ratios[name].append(traced / plain)
                print(f"{config:8} round {r + 1} {name:4} untraced {plain:10.3f} traced "
                      f"{traced:10.3f} {metric} ({rows} rows)  ratio {traced / plain:.3f}")
        for name, values in ratios.items():
            print(f"{config:8} {name:4} traced/untraced median {statistics.median(values):.3f} "
                  f"(min {min(values):.3f}, max {max(values):.3f}, {rounds} rounds)")


main()
