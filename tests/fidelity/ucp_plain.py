#!/usr/bin/env python3
"""How much of ucx-shm's 8-byte send latency gap to ucx_perftest a plain UCP
program shows too (docs/fidelity.md, "ucx-shm latencies at 8 B").

    tests/fidelity/ucp_plain.py [--rounds 8] [-n 200000] [--each-usage] [--runs]

Builds ucp_plain_pingpong.c (an 8-byte tag ping-pong with nothing around
its UCP calls) and runs it with ucx_perftest's usage of UCP and with the ucx
plugin's, in the same rotating rounds as ucx_perftest's tag_lat and
fidelity.py's row "ucx-shm send lat 8", all pinned to the two CPUs over
posix shared memory. Prints each one's median one-way latency (µs) and the
median of its ratios to ucx_perftest's in the same round; with --runs,
every round's figure too.

--each-usage adds the plain program in ucx_perftest's usage with one of the
plugin's usages more, for each of them, to see which of them costs what.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402  (ROOT, free_port, the runners, the rounds)

TRANSPORTS = "posix,self"
# ucx_perftest's usage is the program's plain one: UCP's own requests, one
# receive posted per message, TAG alone, no send callback (ucx_perftest's
# finishes in place for 8 bytes); the plugin's, every difference at once.
USAGES = {"plain program, ucx_perftest's usage": "allocate",
          "plain program, the plugin's usage": "user,noimm,posted=64,features,sendcb,allocate"}
PERFTEST_USAGE = USAGES["plain program, ucx_perftest's usage"]
EACH_USAGE = {f"plain program, +{flag}": f"{flag},{PERFTEST_USAGE}"
              for flag in ("user", "noimm", "posted=64", "features", "sendcb")}


def build(work):
    return fidelity.build_c("ucp_plain_pingpong.c", os.path.join(work, "ucp_plain_pingpong"),
                            ["-lucp", "-lucs"])


def plain_pingpong(program, usage, iterations, env):
    """One run of the plain program: its initiator (the client) on CPU 0, as
    uniperf's; the one-way latency it prints, µs."""
    port, n = str(fidelity.free_port()), str(iterations)
    server = subprocess.Popen([program, "server", port, "1", n, usage], env=env)
    try:
        out = subprocess.run([program, "client", "127.0.0.1", port, "0", n, usage], env=env,
                             capture_output=True, text=True, timeout=120, check=True).stdout
        server.wait(timeout=30)
    finally:
        if server.poll() is None:  # the client failed: do not leave the server waiting
            server.kill()
            server.wait()
    return float(out.split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(fidelity.ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("-n", "--iterations", type=int, default=200000)
    parser.add_argument("--each-usage", action="store_true",
                        help="also the plain program with each of the plugin's usages alone")
    parser.add_argument("--runs", action="store_true", help="print every round's figure too")
    args = parser.parse_args()
    if args.rounds < 1 or args.iterations < 1:
        parser.error("--rounds and --iterations are at least 1")
    if not fidelity.TWO_CORES:
        sys.exit("needs two CPUs: the sides are pinned to CPU 0 and CPU 1")

    with tempfile.TemporaryDirectory() as work:
        program = build(work)
        uniperf = fidelity.Uniperf(args.build, work)
        n = str(args.iterations)
        env = dict(os.environ, UCX_TLS=TRANSPORTS)
        runners = [("ucx_perftest", lambda: fidelity.ucx_perftest(
                        TRANSPORTS, "tag_lat", 8, args.iterations, "latency")),
                   ("uniperf", lambda: uniperf.run(
                       "plain", ["lat", "--op", "send", "-s", "8", "-n", n, "-w", "1000",
                                 "-c", "configs/ucx-shm.yaml"], fidelity.p50))]
        usages = dict(USAGES, **(EACH_USAGE if args.each_usage else {}))
        runners += [(name, lambda u=usage: plain_pingpong(program, u, args.iterations, env))
                    for name, usage in usages.items()]
        results = fidelity.rotating_rounds(runners, args.rounds, "ucp_plain")

    reference = results["ucx_perftest"]
    width = max(len(name) for name, _ in runners)
    print(f"{'8 B tag ping-pong':<{width}} {'one-way us':>10} {'to ucx_perftest':>15}")
    for name, _ in runners:
        values = results[name]
        ratio = statistics.median(v / r for v, r in zip(values, reference))
        runs = ("  " + " ".join(f"{v:.3f}" for v in values)) if args.runs else ""
        print(f"{name:<{width}} {statistics.median(values):>10.3f} {ratio:>15.3f}{runs}")


if __name__ == "__main__":
    main()
