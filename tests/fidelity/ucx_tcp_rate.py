#!/usr/bin/env python3
"""Where an 8-byte tag stream over UCX's tcp transport spends its time, in
uniperf and in ucx_perftest (docs/fidelity.md, note (e)).

    tests/fidelity/ucx_tcp_rate.py [--rounds 6] [--length 10]

Runs fidelity.py's row "ucx-tcp send rate 8" (uniperf against ucx_perftest's
tag_bw, with peer error handling), taken from fidelity.py at --length K
(100,000 messages times K) and with ucx_perftest given uniperf's 1000 warm-up
messages, in rotating rounds, the sender pinned to CPU 0 and the receiver to
CPU 1. Around each
run it reads, per CPU, the user and the kernel time (/proc/stat: user and
nice; system, irq and softirq), the kernel's count of sendto and recvfrom
calls (perf's syscall tracepoints; needs perf and root), and the TCP
segments sent (/proc/net/snmp), and prints them per message: what each side
does for a message, and whether a run's speed goes with its user-space work
or with the kernel's. The counts cover each run's whole life (start-up and
warm-up too, under 1% of them at a million messages).
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402  (ROOT, the runners, the rounds)

ROW = "ucx-tcp send rate 8"
WARM_UP = 1000  # uniperf's in that row (-w 1000), given to ucx_perftest too
SENDER_CPU, RECEIVER_CPU = 0, 1
SYSCALLS = ("sendto", "recvfrom")


def cpu_times():
    """{cpu: (user, kernel)} in seconds since boot, from /proc/stat."""
    tick = os.sysconf("SC_CLK_TCK")
    times = {}
    with open("/proc/stat") as stat:
        for line in stat:
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                user, nice, system, _idle, _iowait, irq, softirq = map(int, fields[:7])
                times[int(name[3:])] = ((user + nice) / tick, (system + irq + softirq) / tick)
    return times


def tcp_segments_sent():
    with open("/proc/net/snmp") as snmp:
        rows = [line.split() for line in snmp if line.startswith("Tcp:")]
    return int(rows[1][rows[0].index("OutSegs")])


class Counted:
    """Counts what the machine does while a run goes on (see the header);
    `per_message(n)` divides it by the run's messages."""

    def __init__(self, work, with_perf):
        self.output = os.path.join(work, "syscalls.csv")
        self.with_perf = with_perf

    def __enter__(self):
        self.perf = None
        if self.with_perf:
            events = ",".join(f"syscalls:sys_enter_{s}" for s in SYSCALLS)
            if os.path.exists(self.output):
                os.remove(self.output)  # the last run's counts
            self.perf = subprocess.Popen(
                ["perf", "stat", "-a", "-A", "-x,", "-e", events, "-o", self.output],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.2)  # until it counts
        self.times, self.segments = cpu_times(), tcp_segments_sent()
        return self

    def __exit__(self, *_):
        after, segments = cpu_times(), tcp_segments_sent()
        self.delta = {cpu: tuple(a - b for a, b in zip(after[cpu], self.times[cpu]))
                      for cpu in (SENDER_CPU, RECEIVER_CPU)}
        self.delta_segments = segments - self.segments
        self.calls = {}
        if self.perf is not None:
            self.perf.send_signal(signal.SIGINT)  # perf stat writes its counts and ends
            self.perf.wait(timeout=30)
            if not os.path.exists(self.output):  # perf could not count: say so, keep the rest
                print("ucx_tcp_rate: perf stat wrote no counts", file=sys.stderr)
                return
            with open(self.output) as counts:
                for line in counts:
                    fields = line.strip().split(",")
                    # CPUn,count,unit,event,...
                    if len(fields) > 3 and fields[0].startswith("CPU") and fields[1].isdigit():
                        cpu, call = int(fields[0][3:]), fields[3].rsplit("_", 1)[-1]
                        self.calls[(cpu, call)] = int(fields[1])

    def per_message(self, messages):
        us = 1e6 / messages
        row = {"sender user us": self.delta[SENDER_CPU][0] * us,
               "sender kernel us": self.delta[SENDER_CPU][1] * us,
               "receiver user us": self.delta[RECEIVER_CPU][0] * us,
               "receiver kernel us": self.delta[RECEIVER_CPU][1] * us,
               "TCP segments": self.delta_segments / messages}
        if self.calls:
            row["sendto (sender)"] = self.calls.get((SENDER_CPU, "sendto"), 0) / messages
            row["recvfrom (receiver)"] = self.calls.get((RECEIVER_CPU, "recvfrom"), 0) / messages
        return row


def ranks(values):
    order = sorted(range(len(values)), key=values.__getitem__)
    result = [0.0] * len(values)
    for rank, index in enumerate(order):
        result[index] = float(rank)
    return result


def spearman(xs, ys):
    """Rank correlation, -1..1 (ties are rare in these figures and ranked in order)."""
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(fidelity.ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--length", type=int, default=10, metavar="K",
                        help="fidelity.py's --length: 100,000 messages times K a run")
    args = parser.parse_args()
    if args.rounds < 1 or args.length < 1:
        parser.error("--rounds and --length are at least 1")
    if not fidelity.TWO_CORES:
        sys.exit("needs two CPUs: the sender on CPU 0, the receiver on CPU 1")
    with_perf = os.geteuid() == 0 and shutil.which("perf") is not None
    if not with_perf:
        print("ucx_tcp_rate: no perf as root: the system call counts are left out",
              file=sys.stderr)

    # The row as fidelity.py runs it: (name, tool, metric, uniperf's
    # arguments, uniperf's figure, the native run, what it needs).
    name, _, metric, argv, figure, native, _ = next(
        row for row in fidelity.comparisons(args.length, ["-w", str(WARM_UP)])
        if row[0] == ROW)
    # Both send their warm-up messages as well, one sendto each.
    messages = int(argv[argv.index("-n") + 1]) + WARM_UP
    with tempfile.TemporaryDirectory() as work:
        uniperf = fidelity.Uniperf(args.build, work)

        def counted(run):
            with Counted(work, with_perf) as counts:
                rate = run()
            return rate, counts.per_message(messages)

        runners = [("ucx_perftest", lambda: counted(lambda: native(metric))),
                   ("uniperf", lambda: counted(lambda: uniperf.run(name, argv, figure)))]
        results = fidelity.rotating_rounds(runners, args.rounds, "ucx_tcp_rate")

    columns = max((row for runs in results.values() for _, row in runs), key=len).keys()
    print("8 B tag stream over UCX tcp, per message (µs of CPU time, or calls)")
    print(f"{'run':<20} {'Mmsg/s':>7} " + " ".join(f"{c:>{max(len(c), 8)}}" for c in columns))
    every = []
    for name, _ in runners:
        for rate, row in results[name]:
            every.append((rate, row))
            print(f"{name:<20} {rate:>7.3f} " +
                  " ".join(f"{row.get(c, float('nan')):>{max(len(c), 8)}.3f}" for c in columns))
        medians = {c: statistics.median(row.get(c, float("nan")) for _, row in results[name])
                   for c in columns}
        print(f"{name + ' median':<20} {statistics.median(r for r, _ in results[name]):>7.3f} " +
              " ".join(f"{medians[c]:>{max(len(c), 8)}.3f}" for c in columns))
    print("rank correlation of the rate with each figure: over every run, and each tool's runs")
    groups = [("every run", every)] + [(name, results[name]) for name, _ in runners]
    print(f"  {'':<20} " + " ".join(f"{label:>12}" for label, _ in groups))
    for column in [c for c in ("sender user us", "sender kernel us", "TCP segments",
                               "recvfrom (receiver)") if c in columns]:
        print(f"  {column:<20} " + " ".join(
            f"{spearman([r for r, _ in runs], [row.get(column, 0.0) for _, row in runs]):>+12.2f}"
            for _, runs in groups))


if __name__ == "__main__":
    main()
