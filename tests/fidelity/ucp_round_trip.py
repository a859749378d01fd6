#!/usr/bin/env python3
"""Where the time of an 8-byte UCP tag ping-pong goes, in uniperf and in
ucx_perftest alike: each round trip split into two flights and two
turnarounds (docs/fidelity.md, "ucx-shm latencies at 8 B").

    tests/fidelity/ucp_round_trip.py [--rounds N] [-n ITERATIONS] [--config ucx-shm]
                                     [--uniperf-config C] [--uniperf-args "ARGS"] [--progress]
                                     [--trial-plugins DIR] [--trial-args "ARGS"] [--plain]
                                     [--perftest-spin-before-send NS]
                                     [--perftest-spin-after-progress NS]

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
read in both tools), on CPU 0 in both tools: uniperf's initiator (--cpu 0)
and ucx_perftest's server (its index 0, so here the server is on CPU 0, the
other way round from fidelity.py); r is the responder on CPU 1. The rounds
alternate which tool goes first, as fidelity.py's do; a table of medians
over the rounds ends the output, with each uniperf's differences from
ucx_perftest's. The stamps cost both tools the same (the same UCP calls
wrapped), so the figures run above the tools' own; their differences are
what to read.

With --progress the hook also stamps the start of every ucp_worker_progress
call, and a flight splits further:

  find i>r, r>i    the send call's start to the start of the progress call
                   that found the message (the send, the trip, and how long
                   the message waited for a poll);
  wait i>r, r>i    the send call's end to that call's start (find less the
                   send call: how long the sent message waited for a poll);
  missed i>r, r>i  the share of messages, in % and not ns, whose receiver
                   began a progress call after the send call had returned
                   and did not find the message in it (the call before the
                   finding one): sent, and not yet visible to that call;
  in poll i, r     that call's start to the receive's completion (UCX's
                   receive work);
  after i, r       a side's send call's end to its first progress call (what
                   it does after sending: the receive's re-post, and more);
  period i, r      a waiting side's time per idle loop: from that first
                   progress call's start to the finding call's start, over
                   the calls between;
  idle i, r        the median of that side's progress calls that found
                   nothing, and (idle90) their 90th percentile.

These stamps slow every idle loop of both tools by a few ns, and the flights
with it: read these columns against each other, not against a run without
--progress.

A trial is a third tool in the same rounds (the order rotating over the
three): uniperf with a changed plugin (--trial-plugins, the directory of its
build, searched before the tree's own) or with more arguments
(--trial-args). Its medians less uniperf's end the table: what a change does
to each part of the round trip.

--plain adds the plain UCP program of ucp_plain.py (ucx_perftest's usage of
UCP, nothing around its calls) as one more tool in the same rounds.

The --perftest-spin options are trials on ucx_perftest's loop instead: the
hook busy-waits that many ns before each of its send calls (a longer
turnaround) or after each of its progress calls (a longer idle loop), so
that what a loop's length does to the other parts can be read off.
Needs x86-64 (the TSC), a C compiler and UCX's headers (libucx-dev).
"""
import argparse
import bisect
import glob
import os
import shutil
import statistics
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fidelity  # noqa: E402  (ROOT, the pinned tools, the uniperf runner)
import ucp_plain  # noqa: E402  (the plain UCP program)

SHIFTS = range(-4, 5)  # where the sides' first recorded messages may differ
IDLE_BUCKETS = 1024  # the hook's histogram of idle progress calls, one tick each


def build_hook(work):
    return fidelity.build_c("ucp_round_trip_hook.c", os.path.join(work, "ucp_round_trip_hook.so"),
                            ["-shared", "-fPIC", "-ldl"])


def read_side(path):
    with open(path, "rb") as f:
        data = f.read()
    cpu, ticks_per_ns, sends, receives = struct.unpack_from("<idII", data)
    offset = struct.calcsize("<idII")
    side = {"cpu": cpu, "ticks_per_ns": ticks_per_ns}
    arrays = [("sends", sends), ("sent", sends), ("receives", receives)]
    if len(data) > offset + 8 * (2 * sends + receives):  # the progress calls stamped
        arrays += [("found_in", receives), ("polls_by_receive", receives),
                   ("first_poll", receives), ("polls_by_send", sends),
                   ("idle_calls", IDLE_BUCKETS), ("missed_in", receives)]
    for name, count in arrays:
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


def flight(sender, receiver, paired):
    """Median ticks from the sender's send call to the receiver's completion
    (`paired`: pairing()'s answer for the two)."""
    shift, first, last = paired
    return median_of([receiver["receives"][k + shift] - sender["sends"][k]
                      for k in range(first, last)])


def find(sender, receiver, paired):
    """Median ticks from the sender's send call to the start of the
    receiver's progress call that found the message."""
    shift, first, last = paired
    return median_of([receiver["found_in"][k + shift] - sender["sends"][k]
                      for k in range(first, last) if receiver["found_in"][k + shift]])


def wait(sender, receiver, paired):
    """Median ticks from the sender's send call's end to the start of the
    receiver's progress call that found the message."""
    shift, first, last = paired
    return median_of([receiver["found_in"][k + shift] - sender["sent"][k]
                      for k in range(first, last) if receiver["found_in"][k + shift]])


def missed(sender, receiver, paired):
    """The share of messages (in %) that a progress call of the receiver's
    missed although it began after the sender's send call had returned: the
    call before the finding one began after that send's end."""
    shift, first, last = paired
    found = [(receiver["missed_in"][k + shift], sender["sent"][k]) for k in range(first, last)
             if receiver["found_in"][k + shift]]
    found = steady(found)
    return 100 * sum(1 for previous, end in found if previous > end) / len(found)


def in_poll(side):
    """Median ticks from the finding progress call's start to the receive's
    completion."""
    return median_of([done - began for began, done in zip(side["found_in"], side["receives"])
                      if began])


def waits(side):
    """Per receive found by a progress call after a send of the side's own:
    that send's index, the first progress call's start after it, the
    finding call's start, and the calls from the first to the finding one."""
    s = side["sends"]
    for began, polls, first, done in zip(side["found_in"], side["polls_by_receive"],
                                         side["first_poll"], side["receives"]):
        k = bisect.bisect_right(s, done) - 1  # the side's send before this receive
        if began and k >= 0 and polls > side["polls_by_send"][k]:
            yield k, first, began, polls - side["polls_by_send"][k] - 1


def after_send(side):
    """Median ticks from a send call's end to the side's next progress call."""
    return median_of([first - side["sent"][k] for k, first, _, _ in waits(side)])


def poll_period(side):
    """Median over the side's waits of the time per idle loop: the first
    progress call's start after its send to the finding call's start, over
    the calls between them."""
    return median_of([(began - first) / calls for _, first, began, calls in waits(side)
                      if calls > 0])


def idle_call(side, fraction):
    """Ticks of the side's progress calls that found nothing, at `fraction`
    of them (the hook's histogram)."""
    histogram = side["idle_calls"]
    rank = fraction * sum(histogram)
    seen = 0
    for ticks, count in enumerate(histogram):
        seen += count
        if seen >= rank:
            return ticks
    return len(histogram)


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
    i_to_r, r_to_i = pairing(i, r), pairing(r, i)
    figures = {
        "flight i>r": flight(i, r, i_to_r) / per_ns,
        "flight r>i": flight(r, i, r_to_i) / per_ns,
        "turn i": turnaround(i) / per_ns,
        "turn r": turnaround(r) / per_ns,
    }
    figures["sum/2"] = sum(figures.values()) / 2
    figures["send i"] = send_call(i) / per_ns
    figures["send r"] = send_call(r) / per_ns
    if "found_in" in i:
        figures["find i>r"] = find(i, r, i_to_r) / per_ns
        figures["find r>i"] = find(r, i, r_to_i) / per_ns
        figures["wait i>r"] = wait(i, r, i_to_r) / per_ns
        figures["wait r>i"] = wait(r, i, r_to_i) / per_ns
        figures["missed i>r"] = missed(i, r, i_to_r)
        figures["missed r>i"] = missed(r, i, r_to_i)
        figures["in poll i"] = in_poll(i) / per_ns
        figures["in poll r"] = in_poll(r) / per_ns
        figures["after i"] = after_send(i) / per_ns
        figures["after r"] = after_send(r) / per_ns
        figures["period i"] = poll_period(i) / per_ns
        figures["period r"] = poll_period(r) / per_ns
        for name, side in (("i", i), ("r", r)):
            figures[f"idle {name}"] = idle_call(side, 0.5) / per_ns
            figures[f"idle90 {name}"] = idle_call(side, 0.9) / per_ns
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("-n", "--iterations", type=int, default=100000)
    parser.add_argument("--config", default="ucx-shm", help="ucx-shm or ucx-tcp")
    parser.add_argument("--uniperf-config", default=None,
                        help="uniperf's -c instead of configs/CONFIG.yaml, e.g. "
                             "ucx:transports=posix,self,wakeup=false")
    parser.add_argument("--progress", action="store_true",
                        help="stamp every progress call too, to split the flights further")
    parser.add_argument("--uniperf-args", default="",
                        help="more arguments for uniperf's runs, e.g. \"-r 1\" (one receive posted)")
    parser.add_argument("--trial-plugins", default=None, metavar="DIR",
                        help="also run a trial uniperf that loads its plugins from DIR first "
                             "(UNIPERF_PLUGIN_PATH), e.g. a changed plugin's build")
    parser.add_argument("--trial-args", default=None, metavar="ARGS",
                        help="also run a trial uniperf with these arguments added, "
                             "e.g. \"--rx-replenish 16\"")
    parser.add_argument("--plain", action="store_true",
                        help="also run the plain UCP program (ucp_plain_pingpong.c, in "
                             "ucx_perftest's usage of UCP), the hook preloaded as in both tools")
    parser.add_argument("--perftest-spin-before-send", type=float, default=None, metavar="NS",
                        help="ucx_perftest's runs busy-wait this long before each send call")
    parser.add_argument("--perftest-spin-after-progress", type=float, default=None,
                        metavar="NS",
                        help="ucx_perftest's runs busy-wait this long after each progress call")
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
    if args.progress:
        os.environ["UCP_ROUND_TRIP_PROGRESS"] = "1"
    uniperf = fidelity.Uniperf(os.path.join(fidelity.ROOT, "build"), work)
    n = str(args.iterations)

    def run_uniperf(more=(), plugins=None):
        argv = ["lat", "--op", "send", "-s", "8", "-n", n, "-w", "1000",
                "-c", args.uniperf_config or f"configs/{args.config}.yaml"]
        argv += args.uniperf_args.split() + list(more)
        return 1000 * uniperf.run("split", argv, fidelity.p50, plugins=plugins)

    spins = {"UCP_ROUND_TRIP_SPIN_BEFORE_SEND": args.perftest_spin_before_send,
             "UCP_ROUND_TRIP_SPIN_AFTER_PROGRESS": args.perftest_spin_after_progress}
    spins = {name: str(ns) for name, ns in spins.items() if ns is not None}

    def run_ucx_perftest():
        # The server is ucx_perftest's initiator: on CPU 0, as uniperf's, and
        # given the time to exit by itself, so that the hook writes its stamps.
        # Over tcp with -e, its endpoints handling a peer's failure as the
        # ucx-tcp config's do (peer_errors), as in fidelity.py.
        return 1000 * fidelity.with_environment(
            spins, fidelity.ucx_perftest, transports, "tag_lat", 8, args.iterations,
            "latency", server_cpu=0, server_grace=30, peer_errors=args.config == "ucx-tcp")

    tools = [("uniperf", run_uniperf), ("ucx_perftest", run_ucx_perftest)]
    if args.trial_plugins or args.trial_args:
        # A third tool, the rounds rotating the order of all three.
        more = (args.trial_args or "").split()
        tools.insert(1, ("trial", lambda: run_uniperf(more, args.trial_plugins)))
    if args.plain:
        program = ucp_plain.build(work)
        env = dict(os.environ, UCX_TLS=transports)
        tools.append(("plain program", lambda: 1000 * ucp_plain.plain_pingpong(
            program, ucp_plain.PERFTEST_USAGE, args.iterations, env)))
    columns = ["p50", "flight i>r", "flight r>i", "turn i", "turn r", "sum/2", "send i",
               "send r"]
    if args.progress:
        columns += ["find i>r", "find r>i", "wait i>r", "wait r>i", "missed i>r", "missed r>i",
                    "in poll i", "in poll r", "after i", "after r",
                    "period i", "period r",
                    "idle i", "idle r", "idle90 i", "idle90 r"]
    results = {name: [] for name, _ in tools}
    print(f"{'round':>5} {'tool':>18}" + "".join(f"{c:>11}" for c in columns) + "   (ns)")
    for round_ in range(args.rounds):
        first = round_ % len(tools)
        for name, run in tools[first:] + tools[:first]:
            figures = {"p50": run()}
            figures.update(split(out))
            results[name].append(figures)
            print(f"{round_:>5} {name:>18}" + "".join(f"{figures[c]:>11.1f}" for c in columns),
                  flush=True)
    print(f"\nmedians over {args.rounds} rounds, ns:")
    medians = {name: {c: statistics.median(r[c] for r in runs) for c in columns}
               for name, runs in results.items()}
    rows = [(name, m) for name, m in medians.items()]
    rows += [(f"{name} - ucx_perftest", {c: m[c] - medians["ucx_perftest"][c] for c in columns})
             for name, m in medians.items() if name != "ucx_perftest"]
    if "trial" in medians:
        rows.append(("trial - uniperf",
                     {c: medians["trial"][c] - medians["uniperf"][c] for c in columns}))
    for label, m in rows:
        print(f"{label:>24}" + "".join(f"{m[c]:>11.1f}" for c in columns))


if __name__ == "__main__":
    main()
