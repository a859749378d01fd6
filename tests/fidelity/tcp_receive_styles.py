#!/usr/bin/env python3
"""How much of a loopback TCP stream's throughput is the receiver's reading
(docs/fidelity.md, "sockperf's throughput against a stream of 16 KiB sends").

    tests/fidelity/tcp_receive_styles.py [--rounds 5] [--size 16384] [--seconds 2]

One sender (blocking sends from one buffer, Nagle on: sockperf's throughput
client) against four receivers of tcp_receive_styles.c (blocking 64 KiB or
256 KiB reads; poll, then non-blocking reads of one message or of 256 KiB
until the socket is empty), in the same rotating rounds as sockperf's
throughput test and the tcp plugin's like-for-like row of fidelity.py
(sleeping on events, nodelay off, one buffer each side) with its staging
buffer at the default 8 KiB (16 KiB messages read in place), at 64 KiB
(sockperf's server's reads) and at 256 KiB. Prints each one's median MB/s
(10^6 B/s), its median ratio to sockperf's in the same round, and the
receiver's median CPU seconds where known.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402  (ROOT, sockperf's runner, the uniperf runner)

STYLES = ["blocking-64K", "blocking-256K", "poll-message", "poll-256K"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(fidelity.ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=16384)
    parser.add_argument("--seconds", type=int, default=2)
    args = parser.parse_args()
    # The C stream's limits: its receive buffer is 256 KiB.
    if not 1 <= args.size <= 262144:
        parser.error(f"--size {args.size}: the stream's messages are 1 to 262144 bytes")
    if args.seconds < 1 or args.rounds < 1:
        parser.error("--seconds and --rounds are at least 1")

    with tempfile.TemporaryDirectory() as work:
        program = os.path.join(work, "tcp_receive_styles")
        subprocess.run(["cc", "-O2", "-Wall", "-o", program,
                        os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "tcp_receive_styles.c")], check=True)
        uniperf = fidelity.Uniperf(args.build, work)
        like_for_like = ["bw", "--op", "send", "-s", str(args.size), "-D", f"{args.seconds}s",
                         "-t", "32", "--events", "--buffers", "single"]

        def styled(style):
            out = subprocess.run([program, style, str(args.size), str(args.seconds)],
                                 capture_output=True, text=True, timeout=120, check=True).stdout
            _, rate, cpu = out.split()
            return float(rate), float(cpu)

        def plugin(staging):
            name = f"tcp staging {staging}"
            config = "tcp:nodelay=false" + (f",staging={staging}" if staging else "")
            rate = uniperf.run(name, like_for_like + ["-c", config], fidelity.mb_per_s)
            responder = uniperf.last[name]["cpu_time"]["responder"]
            return rate, responder["system_s"] + responder["user_s"]

        runners = [("sockperf", lambda: (fidelity.sockperf("throughput", args.size,
                                                           args.seconds, None), None)),
                   ("uniperf tcp (staging 8K)", lambda: plugin(None)),
                   ("uniperf tcp, staging=64K", lambda: plugin("64K")),
                   ("uniperf tcp, staging=256K", lambda: plugin("256K"))]
        runners += [(style, lambda s=style: styled(s)) for style in STYLES]
        results = {name: [] for name, _ in runners}
        for round_ in range(args.rounds):
            # Each round starts one later in the list: none always runs first.
            shift = round_ % len(runners)
            for name, run in runners[shift:] + runners[:shift]:
                results[name].append(run())
            print(f"tcp_receive_styles: round {round_ + 1} of {args.rounds} done",
                  file=sys.stderr)

    sockperf = [rate for rate, _ in results["sockperf"]]
    width = max(len(name) for name, _ in runners)
    print(f"{'receiver':<{width}} {'MB/s':>8} {'to sockperf':>11} {'receiver CPU s':>14}")
    for name, _ in runners:
        rates = [rate for rate, _ in results[name]]
        cpus = [cpu for _, cpu in results[name] if cpu is not None]
        ratio = statistics.median(r / s for r, s in zip(rates, sockperf))
        cpu = f"{statistics.median(cpus):>14.2f}" if cpus else f"{'':>14}"
        print(f"{name:<{width}} {statistics.median(rates):>8.0f} {ratio:>11.3f} {cpu}")


if __name__ == "__main__":
    main()
