#!/usr/bin/env python3
"""Checks the lab's rails records (.ci/lab-guest): every record ok, and each
rail carrying what its policy says, byte for byte.

  rails_check.py pair RAILS.jsonl      # one process pair: lab-rails' tests
  rails_check.py job JOB.jsonl         # mpirun -np 4: two process pairs at once
  rails_check.py hosts RAILS.jsonl LINKS.json
                                       # two guests (.ci/lab-hosts): lab-hosts-rails
                                       # over configs NAME-1rail and NAME-2rails

Exit 0 when every check holds, else 1 with one line per broken check.
"""
import json
import sys

THRESHOLD = 8192  # the suites' stripe_threshold
MIN_GAIN = 1.4  # two shaped rails against one (hosts)
DELIVERED_ROOM = 0.05  # a delivered stream over its link's rate: the bucket's burst (hosts)
# A stream at this share of its shaped link's rate or more is bound by the
# link (hosts): only then do the links, not the guests' CPUs, set its pace.
LINK_BOUND = 0.7


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def rail_bytes(r):
    return [rail["bytes"] for rail in r.get("rails", {}).get("per_rail", [])]


def check_pair(got, link_mb=0):
    """lab-rails over two rails, held to the policy by request counts, which
    no pace can blur: stripe and stripe_lat put one piece of every message
    above the threshold on each rail (each rail's requests are the
    messages, its bytes an even share) and a message at or below it whole
    on rail 0; round_robin puts each message whole on one rail (the rails'
    requests sum to the messages); bind_bi puts the initiator's direction
    on rail 0 and the responder's on rail 1 (rail 0's requests are the
    initiator's iterations, rail 1's the rest). A counted stream's shares
    are even to the byte besides. A timed stream stops on the clock, so its
    rails' or directions' shares are what each one's own pace allowed:
    over links shaped to `link_mb` MB/s each way (hosts) the link's, or on
    a busy host the guests' CPUs', which the emulator serves unevenly (1.57
    against 2.01 MB/s seen between bind_bi's directions, 1.28 against 1.76
    between round_robin's rails at 4 KiB, in CI runs). Those shares are
    printed against the link and only held to be non-zero: a sibling
    comparison would judge the host's load, not the policy."""
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
        requests = [rail.get("requests", 0) for rail in r.get("rails", {}).get("per_rail", [])]
        if len(per_rail) != 2:
            problems.append(f"{where}: per_rail {per_rail}, expected two rails")
            continue
        if "bandwidth" in r and sum(per_rail) != r["bandwidth"]["bytes"]:
            problems.append(f"{where}: rails carried {per_rail}, the record moved "
                            f"{r['bandwidth']['bytes']}")
        messages = r.get("bandwidth", {}).get("messages", r.get("iterations_run", 0))
        striped = r["test"] in ("stripe", "stripe_lat")
        pieces = striped and r["size"] > THRESHOLD
        piece = r["size"] // 2 if pieces else r["size"]
        if per_rail != [q * piece for q in requests]:
            problems.append(f"{where}: rails carried {per_rail} B, not whole requests of "
                            f"{piece} B ({requests})")
        if pieces:
            if requests != [messages, messages]:
                problems.append(f"{where}: a striped message puts a piece on each rail, got "
                                f"{requests} requests for {messages} messages")
        elif striped:
            if not (per_rail[0] > 0 and per_rail[1] == 0):
                problems.append(f"{where}: at or below the threshold every message is whole on "
                                f"rail 0, got {per_rail}")
        elif sum(requests) != messages:
            problems.append(f"{where}: each message goes whole over one rail, got {requests} "
                            f"requests for {messages} messages")
        if r["test"] == "bind_bi" and requests[0] != r.get("iterations_run"):
            problems.append(f"{where}: the initiator's direction is bound to rail 0, which "
                            f"carried {requests[0]} requests for its "
                            f"{r.get('iterations_run')} messages")
        timed = r.get("params", {}).get("duration_s", 0) > 0 and not striped
        if timed:
            if min(per_rail) == 0:
                problems.append(f"{where}: one rail carried nothing, got {per_rail}")
            elif link_mb and r.get("bandwidth"):
                rates = [b / r["bandwidth"]["seconds"] / 1e6 for b in per_rail]
                print(f"rails_check: {r['config']} {where}: rails at "
                      f"{', '.join(f'{x:.2f}' for x in rates)} MB/s of links' {link_mb:.2f}")
        elif (pieces or not striped) and per_rail[0] != per_rail[1]:
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


def check_hosts(got, links):
    """Two hosts joined by two links: each NAME-2rails config passes the
    pair checks; its NAME-1rail twin has no per-rail figures; and each link's
    own byte counters (both directions, headers and warm-up included) are at
    least what the records say its rail carried, so rail 1 really crossed
    link 1. Prints each two-rail config's bandwidth ratio to its twin, and
    holds a striped or alternated 64 KiB stream to at least MIN_GAIN times
    one rail's: the links are shaped well below what the guests can move,
    so each rail is bound by its link, and a gain that physics makes stable
    (1.78-2.13x seen) is asserted with room for a slow emulator. On a host
    so busy that one rail's stream falls under LINK_BOUND of its link, the
    guests' CPUs pace it instead: the gain is printed as not judged; where a
    rail of the two-rail stream does, two rails are held only to one rail's
    figure (a striping that loses bandwidth still fails)."""
    problems = []
    by_config = {}
    for r in got:
        by_config.setdefault(r["config"], []).append(r)
    two = sorted(c for c in by_config if c.endswith("-2rails"))
    if not two:
        problems.append(f"no -2rails config among {sorted(by_config)}")
    rail_sums = [0, 0]
    link_mb = links.get("rate_bits_per_s", 0) / 8 / 1e6
    for config in two:
        problems += [f"{config}: {p}" for p in check_pair(by_config[config], link_mb)]
        for r in by_config[config]:
            for k, b in enumerate(rail_bytes(r)[:2]):
                rail_sums[k] += b
        twin = config[:-len("-2rails")] + "-1rail"
        if twin not in by_config:
            problems.append(f"{config}: its one-rail twin {twin} has no records")
            continue
        problems += [f"{twin} {r['test']} {r['size']} B: a one-rail config has per-rail figures"
                     for r in by_config[twin] if "rails" in r]
        for test in ("stripe", "round_robin", "bind_bi"):
            one = [r for r in by_config[twin] if r["test"] == test and r["size"] == 65536]
            both = [r for r in by_config[config] if r["test"] == test and r["size"] == 65536]
            if one and both and one[0].get("bandwidth") and both[0].get("bandwidth"):
                a, b = one[0]["bandwidth"]["MB_per_s"], both[0]["bandwidth"]["MB_per_s"]
                # The gain is the links' only where one rail's stream was
                # bound by its link; a slower one was paced by the guests'
                # CPUs (a busy host), and two rails need not gain on that.
                link_bound = not link_mb or a >= LINK_BOUND * link_mb
                # Nor where a rail of the two-rail stream ran under it (CI's
                # loaded lab: ucx-verbs round_robin at 1.02 MB/s a rail, 1.14x
                # one rail's 1.78): that stream is only held to one rail's.
                slowest = min(rail_bytes(both[0]) or [0]) / both[0]["bandwidth"]["seconds"] / 1e6
                rails_bound = not link_mb or slowest >= LINK_BOUND * link_mb
                gain = MIN_GAIN if rails_bound else 1.0
                note = "" if rails_bound else (f" (a rail of the two under {LINK_BOUND:.0%} "
                                               "of its link: held to 1x)")
                unjudged = f" (one rail under {LINK_BOUND:.0%} of its link: not judged)"
                if test == "bind_bi":
                    note = unjudged = (" (printed only: one rail's two directions already "
                                       "fill both ways of its link)")
                print(f"rails_check: {config} {test} 64 KiB: {b:.2f} MB/s against one rail's "
                      f"{a:.2f}: {b / a:.2f}x{note if link_bound else unjudged}")
                # Both directions of one rail already use both ways of its
                # link: binding them to two rails gains nothing on a
                # full-duplex link, so bind_bi's ratio is only printed.
                if test != "bind_bi" and link_bound and b < gain * a:
                    problems.append(f"{config} {test} 64 KiB: {b:.2f} MB/s is under {gain}x "
                                    f"one rail's {a:.2f}")
    problems += check_delivered(got, links)
    for k, dev in enumerate(("eth0", "eth1")):
        crossed = links[dev]["tx"] + links[dev]["rx"]
        if crossed < rail_sums[k]:
            problems.append(f"rail {k}'s records say {rail_sums[k]} B, but its link {dev} carried "
                            f"only {crossed} B")
    print(f"rails_check: rails 0 and 1 carried {rail_sums[0]} and {rail_sums[1]} B of payload; "
          f"links eth0 and eth1 {links['eth0']['tx'] + links['eth0']['rx']} and "
          f"{links['eth1']['tx'] + links['eth1']['rx']} B")
    return problems


def check_delivered(got, links):
    """A stream ended at delivery (stream_end: delivered) over one shaped link
    cannot have moved its payload faster than the link carries, each way
    (DELIVERED_ROOM above its rate for the token bucket's burst); its twin
    ended at its last completion ('completed' for 'delivered', ...) is
    printed beside it, as its library counts it."""
    problems = []
    link_mb = links.get("rate_bits_per_s", 0) / 8 / 1e6
    delivered = [r for r in got if r.get("params", {}).get("stream_end") == "delivered"]
    if link_mb and not delivered:
        problems.append("no stream ended at delivery")
    for r in delivered:
        if not r.get("bandwidth"):
            continue
        mb = r["bandwidth"]["MB_per_s"]
        ways = 2 if r.get("params", {}).get("direction") == "bi" else 1
        twin = r["test"].replace("delivered", "completed")
        completed = [c for c in got if c["config"] == r["config"] and c["test"] == twin
                     and c.get("bandwidth")]
        beside = (f", at the last completion {completed[0]['bandwidth']['MB_per_s']:.2f}"
                  if completed else "")
        print(f"rails_check: {r['config']} {r['test']} {r['size']} B ended at delivery: "
              f"{mb:.2f} MB/s{beside}; the link carries {ways * link_mb:.2f}")
        if link_mb and mb > ways * link_mb * (1 + DELIVERED_ROOM):
            problems.append(f"{r['config']} {r['test']}: {mb:.2f} MB/s ended at delivery is "
                            f"more than the link carries ({ways * link_mb:.2f} MB/s)")
    return problems


def main():
    modes = {"pair": 3, "job": 3, "hosts": 4}
    if len(sys.argv) < 2 or modes.get(sys.argv[1]) != len(sys.argv):
        print(__doc__, file=sys.stderr)
        return 2
    got = records(sys.argv[2])
    problems = [f"{r['config']} {r['test']} {r.get('size')} B: {r['status']}: {r.get('reason', '')}"
                for r in got if r["status"] != "ok"]
    if not got:
        problems.append("no records")
    if sys.argv[1] == "hosts":
        with open(sys.argv[3]) as f:
            problems += check_hosts(got, json.load(f))
    else:
        problems += (check_pair if sys.argv[1] == "pair" else check_job)(got)
    for p in problems:
        print(f"rails_check: {sys.argv[2]}: {p}")
    if not problems:
        print(f"rails_check: {sys.argv[2]}: {len(got)} records ok, every rail's bytes as its "
              f"policy says")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
