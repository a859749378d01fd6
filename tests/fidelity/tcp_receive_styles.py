#!/usr/bin/env python3
"""How much of a loopback TCP stream's throughput is the receiver's reading
(docs/fidelity.md, "sockperf's throughput against a stream of 16 KiB sends").

    tests/fidelity/tcp_receive_styles.py [--rounds 5] [--size 16384] [--seconds 2]
                                         [--only TEXT ...]

One sender (blocking sends from one buffer, Nagle on: sockperf's throughput
client) against seven receivers of tcp_receive_styles.c (blocking 64 KiB or
256 KiB reads; poll, then non-blocking reads of one message, of 64 KiB or of
256 KiB until the socket is empty; non-blocking reads of one message or of
256 KiB in a loop that never sleeps), in the same rotating rounds as
sockperf's throughput test and the tcp plugin's like-for-like row of
fidelity.py (sleeping on events, nodelay off, one buffer each side) with its
staging buffer at the default 8 KiB (16 KiB messages read in place), at 64
KiB (sockperf's server's reads; sleeping in poll, and inside recv: the
option wait=recv) and at 256 KiB, and the same row busy-polled
(both sides spinning, as fidelity.py's "tcp bw 16K" row but with Nagle on,
so that only the waiting differs). Prints each one's median MB/s
(10^6 B/s), its median ratio to sockperf's in the same round, the
receiver's median CPU seconds where known, and the machine's function-call
interrupts (/proc/interrupts, CAL: the wakeups one CPU sends another) per
message over the run, its setup included.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402  (ROOT, sockperf's runner, the uniperf runner)

def function_call_interrupts():
    """All CPUs' function-call interrupts so far, or None where the kernel
    does not count them (the CAL line is x86's)."""
    with open("/proc/interrupts") as table:
        for line in table:
            fields = line.split()
            if fields and fields[0] == "CAL:":
                return sum(int(f) for f in fields[1:] if f.isdigit())
    return None


STYLES = ["blocking-64K", "blocking-256K", "poll-message", "poll-64K", "poll-256K",
          "spin-message", "spin-256K"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(fidelity.ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=16384)
    parser.add_argument("--seconds", type=int, default=2)
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="run only the receivers whose name holds TEXT (again for more), "
                        "and sockperf's")
    args = parser.parse_args()
    # The C stream's limits: its receive buffer is 256 KiB.
    if not 1 <= args.size <= 262144:
        parser.error(f"--size {args.size}: the stream's messages are 1 to 262144 bytes")
    if args.seconds < 1 or args.rounds < 1:
        parser.error("--seconds and --rounds are at least 1")

    with tempfile.TemporaryDirectory() as work:
        program = fidelity.build_c("tcp_receive_styles.c",
                                   os.path.join(work, "tcp_receive_styles"))
        uniperf = fidelity.Uniperf(args.build, work)
        stream = ["bw", "--op", "send", "-s", str(args.size), "-D", f"{args.seconds}s", "-t",
                  "32", "--buffers", "single"]

        def styled(style):
            out = subprocess.run([program, style, str(args.size), str(args.seconds)],
                                 capture_output=True, text=True, timeout=120, check=True).stdout
            _, rate, cpu = out.split()
            return float(rate), float(cpu)

        def plugin(staging, events=True, wait=None):
            name = f"tcp staging {staging} events {events} wait {wait}"
            config = ("tcp:nodelay=false" + (f",staging={staging}" if staging else "") +
                      (f",wait={wait}" if wait else ""))
            argv = stream + (["--events"] if events else []) + ["-c", config]
            rate = uniperf.run(name, argv, fidelity.mb_per_s)
            responder = uniperf.last[name]["cpu_time"]["responder"]
            return rate, responder["system_s"] + responder["user_s"]

        runners = [("sockperf", lambda: (fidelity.sockperf("throughput", args.size,
                                                           args.seconds, None), None)),
                   ("uniperf tcp (staging 8K)", lambda: plugin(None)),
                   ("uniperf tcp, staging=64K", lambda: plugin("64K")),
                   ("uniperf tcp, staging=64K,wait=recv", lambda: plugin("64K", wait="recv")),
                   ("uniperf tcp, staging=256K", lambda: plugin("256K")),
                   ("uniperf tcp, busy-polled", lambda: plugin(None, events=False))]
        runners += [(style, lambda s=style: styled(s)) for style in STYLES]
        if args.only:
            runners = [(name, run) for name, run in runners
                       if name == "sockperf" or any(part in name for part in args.only)]

        def counted(run):
            """(MB/s, receiver CPU s, function-call interrupts per message)."""
            before = function_call_interrupts()
            rate, cpu = run()
            after = function_call_interrupts()
            messages = rate * 1e6 * args.seconds / args.size
            return rate, cpu, None if before is None else (after - before) / messages

        results = fidelity.rotating_rounds([(name, lambda run=run: counted(run))
                                            for name, run in runners],
                                           args.rounds, "tcp_receive_styles")

    def median_or_blank(values, width, decimals):
        known = [v for v in values if v is not None]
        return f"{statistics.median(known):>{width}.{decimals}f}" if known else " " * width

    sockperf = [rate for rate, _, _ in results["sockperf"]]
    width = max(len(name) for name, _ in runners)
    print(f"{'receiver':<{width}} {'MB/s':>8} {'to sockperf':>11} {'receiver CPU s':>14} "
          f"{'IPIs/msg':>8}")
    for name, _ in runners:
        rates, cpus, ipis = zip(*results[name])
        ratio = statistics.median(r / s for r, s in zip(rates, sockperf))
        print(f"{name:<{width}} {statistics.median(rates):>8.0f} {ratio:>11.3f} "
              f"{median_or_blank(cpus, 14, 2)} {median_or_blank(ipis, 8, 3)}")


if __name__ == "__main__":
    main()
