#!/usr/bin/env python3
"""Where the time of an 8-byte UCP tag ping-pong goes, in uniperf and in
ucx_perftest alike: each round trip split into two flights and two
turnarounds (docs/fidelity.md, "ucx-shm latencies at 8 B").

    tests/fidelity/ucp_round_trip.py [--rounds N] [-n ITERATIONS] [--config ucx-shm]
                                     [--uniperf-config C] [--uniperf-args "ARGS"]

Both tools run with tests/fidelity/ucp_round_trip_hook.c preloaded, which
stamps every tag send call and every receive completion with the TSC; the
two sides' stamps are paired message by message. Per run it prints, in ns
(medians over the messages after the first tenth):

  flight i>r, r>i  a side's send call to the other side's receive completion
                   (UCX's send, the trip between the CPUs, the poll that finds
                   the message, UCX's receive up to the completion);
  turn i, r        a side's receive completion to its next send call (the rest
                   of UCX's progress call, then the tool's own code);
  sum/2            half of the four: the one-way time they make up;
  send i, r        each side's send calls alone (part of its flights),

beside the tool's own one-way p50 (uniperf's p50, ucx_perftest's typical).
i is the initiator, the side that sends first (its turnaround holds a clock
read in both tools), on CPU 0 in both tools: uniperf's initiator (--cpu 0) and ucx_perftest's server (its
index 0, so here the server is on CPU 0, the other way round from
fidelity.py); r is the responder on CPU 1. The rounds alternate which tool
goes first, as fidelity.py's do; a table of medians over the rounds ends the
output.
The stamps cost both tools the same (three wrapped UCP calls), so the
figures run above the tools' own; their differences are what to read.
Needs x86-64 (the TSC), a C compiler and UCX's headers (libucx-dev).
"""
import argparse
import bisect
import glob
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fidelity  # noqa: E402  (ROOT, the pinned tools, the uniperf runner)

SHIFTS = range(-4, 5)  # where the sides' first recorded messages may differ


def build_hook(work):
    library = os.path.join(work, "ucp_round_trip_hook.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", library,
                    os.path.join(HERE, "ucp_round_trip_hook.c"), "-ldl"], check=True)
    return library


def read_side(path):
    with open(path, "rb") as f:
        data = f.read()
    cpu, ticks_per_ns, sends, receives = struct.unpack_from("<idII", data)
    offset = struct.calcsize("<idII")
    side = {"cpu": cpu, "ticks_per_ns": ticks_per_ns}
    for name, count in (("sends", sends), ("sent", sends), ("receives", receives)):
        side[name] = struct.unpack_from(f"<{count}Q", data, offset)
        offset += 8 * count
    return side


def steady(values):
    """The messages after the first tenth: past the warm-up's start."""
    return values[len(values) // 10:]


def median_of(values):
    return statistics.median(steady(values))


def pairing(sender, receiver):
    """The shift that pairs the sender's k-th send with the receiver's
    (k + shift)-th receive: the one whose median send-to-completion time is
    the least positive one (a pairing off by a message is off by a round
    trip, or negative)."""
    best = None
    s, r = sender["sends"], receiver["receives"]
    for shift in SHIFTS:
        first, last = max(0, -shift), min(len(s), len(r) - shift)
        if last - first < 1000:
            continue
        median = median_of([r[k + shift] - s[k] for k in range(first, last)])
        if median > 0 and (best is None or median < best[0]):
            best = (median, shift, first, last)
    if best is None:
        raise RuntimeError("the two sides' messages could not be paired")
    return best[1:]


def flight(sender, receiver):
    """Median ticks from the sender's send call to the receiver's completion."""
    shift, first, last = pairing(sender, receiver)
    return median_of([receiver["receives"][k + shift] - sender["sends"][k]
                      for k in range(first, last)])


def send_call(side):
    """Median ticks of the side's send calls: part of its flights (the call
    takes the cache lines the receiver polls; it is as long in both tools)."""
    return median_of([end - start for start, end in zip(side["sends"], side["sent"])])


def turnaround(side):
    """Median ticks from each receive completion to the side's next send."""
    s = side["sends"]
    gaps = []
    for r in side["receives"]:
        k = bisect.bisect_right(s, r)
        if k < len(s):
            gaps.append(s[k] - r)
    return median_of(gaps)


def split(out):
    paths = glob.glob(os.path.join(out, "*.bin"))
    if len(paths) != 2:
        raise RuntimeError(f"expected the two sides' records, found {len(paths)}")
    sides = [read_side(p) for p in paths]
    for p in paths:
        os.remove(p)
    if sorted(side["cpu"] for side in sides) != [0, 1]:
        raise RuntimeError("the sides did not end on CPU 0 and CPU 1")
    per_ns = statistics.mean(side["ticks_per_ns"] for side in sides)
    i, r = sorted(sides, key=lambda side: side["cpu"])
    figures = {
        "flight i>r": flight(i, r) / per_ns,
        "flight r>i": flight(r, i) / per_ns,
        "turn i": turnaround(i) / per_ns,
        "turn r": turnaround(r) / per_ns,
    }
    figures["sum/2"] = sum(figures.values()) / 2
    figures["send i"] = send_call(i) / per_ns
    figures["send r"] = send_call(r) / per_ns
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("-n", "--iterations", type=int, default=100000)
    parser.add_argument("--config", default="ucx-shm", help="ucx-shm or ucx-tcp")
    parser.add_argument("--uniperf-config", default=None,
                        help="uniperf's -c instead of configs/CONFIG.yaml, e.g. "
                             "ucx:transports=posix,self,wakeup=false")
    parser.add_argument("--uniperf-args", default="",
                        help="more arguments for uniperf's runs, e.g. \"-r 1\" (one receive posted)")
    args = parser.parse_args()
    transports = {"ucx-shm": "posix,self", "ucx-tcp": "tcp,self"}[args.config]
    if not fidelity.TWO_CORES:
        sys.exit("needs two CPUs: the sides are pinned to CPU 0 and CPU 1")

    work = tempfile.mkdtemp(prefix="ucp-round-trip-")
    try:
        measure(args, transports, work)
    finally:
        shutil.rmtree(work)


def measure(args, transports, work):
    out = os.path.join(work, "records")
    os.mkdir(out)
    os.environ["LD_PRELOAD"] = build_hook(work)
    os.environ["UCP_ROUND_TRIP_OUT"] = out
    uniperf = fidelity.Uniperf(os.path.join(fidelity.ROOT, "build"), work)
    n = str(args.iterations)

    def run_uniperf():
        argv = ["lat", "--op", "send", "-s", "8", "-n", n, "-w", "1000",
                "-c", args.uniperf_config or f"configs/{args.config}.yaml"]
        argv += args.uniperf_args.split()
        return 1000 * uniperf.run("split", argv, fidelity.p50)

    def run_ucx_perftest():
        # The server is ucx_perftest's initiator: on CPU 0, as uniperf's, and
        # given the time to exit by itself, so that the hook writes its stamps.
        return 1000 * fidelity.ucx_perftest(transports, "tag_lat", 8, args.iterations, "latency",
                                            server_cpu=0, server_grace=30)

    tools = [("uniperf", run_uniperf), ("ucx_perftest", run_ucx_perftest)]
    columns = ["p50", "flight i>r", "flight r>i", "turn i", "turn r", "sum/2", "send i",
               "send r"]
    results = {name: [] for name, _ in tools}
    print(f"{'round':>5} {'tool':<13}" + "".join(f"{c:>11}" for c in columns) + "   (ns)")
    for round_ in range(args.rounds):
        for name, run in (tools if round_ % 2 == 0 else tools[::-1]):
            figures = {"p50": run()}
            figures.update(split(out))
            results[name].append(figures)
            print(f"{round_:>5} {name:<13}" + "".join(f"{figures[c]:>11.1f}" for c in columns),
                  flush=True)
    print(f"\nmedians over {args.rounds} rounds, ns:")
    medians = {name: {c: statistics.median(r[c] for r in runs) for c in columns}
               for name, runs in results.items()}
    for name, m in medians.items():
        print(f"      {name:<13}" + "".join(f"{m[c]:>11.1f}" for c in columns))
    print(f"      {'difference':<13}" + "".join(
        f"{medians['uniperf'][c] - medians['ucx_perftest'][c]:>11.1f}" for c in columns))


if __name__ == "__main__":
    main()
