#!/usr/bin/env python3
"""Checks the lab's rails records (.ci/lab-guest): every record ok, and each
rail carrying what its policy says, byte for byte.

  rails_check.py pair RAILS.jsonl      # one process pair: lab-rails' tests
  rails_check.py job JOB.jsonl         # mpirun -np 4: two process pairs at once

Exit 0 when every check holds, else 1 with one line per broken check.
"""
import json
import sys

THRESHOLD = 8192  # the suites' stripe_threshold


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rail_bytes(r):
    return [rail["bytes"] for rail in r.get("rails", {}).get("per_rail", [])]


def check_pair(got):
    """lab-rails over two rails: stripe and stripe_lat split a message above
    the threshold into one even piece per rail and leave one below it whole
    on rail 0; round_robin alternates whole messages; bind_bi puts each
    direction on a rail of its own."""
    problems = []
    tests = {}
    for r in got:
        tests.setdefault(r["test"], []).append(r)
    for name in ("stripe", "round_robin", "bind_bi", "stripe_lat"):
        if len(tests.get(name, [])) != 2:
            problems.append(f"{name}: {len(tests.get(name, []))} records, expected 2 (4K and 64K)")
    for r in got:
        where = f"{r['test']} {r['size']} B"
        per_rail = rail_bytes(r)
        if len(per_rail) != 2:
            problems.append(f"{where}: per_rail {per_rail}, expected two rails")
            continue
        if "bandwidth" in r and sum(per_rail) != r["bandwidth"]["bytes"]:
            problems.append(f"{where}: rails carried {per_rail}, the record moved "
                            f"{r['bandwidth']['bytes']}")
        striped = r["test"] in ("stripe", "stripe_lat")
        if striped and r["size"] < THRESHOLD:
            expected_even = False
            if not (per_rail[0] > 0 and per_rail[1] == 0):
                problems.append(f"{where}: below the threshold every message is whole on rail 0, "
                                f"got {per_rail}")
        else:
            expected_even = True
        if expected_even and not (per_rail[0] == per_rail[1] > 0):
            problems.append(f"{where}: expected even shares on both rails, got {per_rail}")
    return problems


def check_job(got):
    """mpirun -np 4, `pairs: bisection`: the two pairs of the round ran at
    once; bound, the first pair's bytes all on rail 0 and the second's all
    on rail 1; striped, each pair's message split evenly over both."""
    problems = []
    first = [r for r in got if not r.get("placement", {}).get("retest")]
    bound = [rail_bytes(r) for r in first if r["test"] == "bound_pairs"]
    striped = [rail_bytes(r) for r in first if r["test"] == "striped_pairs"]
    if len(bound) != 2 or len(striped) != 2:
        problems.append(f"expected two pairs each of bound_pairs and striped_pairs, got "
                        f"{len(bound)} and {len(striped)}")
    elif not (sorted(b[0] > 0 for b in bound) == [False, True] and
              all(len(b) == 2 and (b[0] == 0) != (b[1] == 0) for b in bound)):
        problems.append(f"bound pairs: expected one pair all on rail 0 and one all on rail 1, "
                        f"got {bound}")
    for s in striped:
        if not (len(s) == 2 and s[0] == s[1] > 0):
            problems.append(f"striped pair: expected even shares on both rails, got {s}")
    ranks = {(r["placement"]["initiator"]["rank"], r["placement"]["responder"]["rank"])
             for r in first if "placement" in r}
    if len(ranks) != 2:
        problems.append(f"expected two distinct rank pairs, got {sorted(ranks)}")
    return problems


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("pair", "job"):
        print(__doc__, file=sys.stderr)
        return 2
    got = records(sys.argv[2])
    problems = [f"{r['test']} {r.get('size')} B: {r['status']}: {r.get('reason', '')}"
                for r in got if r["status"] != "ok"]
    if not got:
        problems.append("no records")
    problems += (check_pair if sys.argv[1] == "pair" else check_job)(got)
    for p in problems:
        print(f"rails_check: {sys.argv[2]}: {p}")
    if not problems:
        print(f"rails_check: {sys.argv[2]}: {len(got)} records ok, every rail's bytes as its "
              f"policy says")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
