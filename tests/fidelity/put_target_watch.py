#!/usr/bin/env python3
"""Why uniperf's 64 KiB put stream over ucx-shm ran 3-6% above ucx_perftest's,
and the setting that matches it (docs/fidelity.md, "ucx-shm 64 KiB puts").

    tests/fidelity/put_target_watch.py [--rounds 10] [-n 200000] [--trial-build DIR]

ucx_perftest's put_bw receiver reads its sequence number in the last bytes
of the destination between progress calls, throughout the stream; every put
rewrites that cache line and must first take it back. In the same rotating
rounds, pinned, over posix shared memory, this runs:
  - uniperf as its fidelity row runs (`--target-watch none`, the default);
  - uniperf with `--target-watch last_byte` (its target reads the last byte
    that lands, as ucx_perftest's receiver does);
  - ucx_perftest;
  - ucx_perftest with its receiver held 100 us after every progress call
    (ucp_round_trip_hook.c preloaded into its server alone, busy-waiting
    UCP_ROUND_TRIP_SPIN_AFTER_PROGRESS ns), so it reads the line once per
    hold.
With --trial-build DIR, also uniperf from another build tree (DIR/bin/uniperf,
a changed engine's) with --target-watch last_byte, to measure a change in the
same rounds. Prints each one's median MB/s and the median of its ratios to
ucx_perftest's in the same round. Run it at the fidelity row's -n 20000 as well: a cost per
put keeps its ratio as the run lengthens, a fixed one would shrink.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402  (the runners, the rounds)
import ucp_round_trip  # noqa: E402  (its hook's build)

TRANSPORTS = "posix,self"
HOLD_US = 100


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(fidelity.ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("-n", "--iterations", type=int, default=200000)
    parser.add_argument("--trial-build", metavar="DIR",
                        help="a second build tree whose uniperf also runs, watching")
    args = parser.parse_args()
    if args.rounds < 1 or args.iterations < 1:
        parser.error("--rounds and -n are at least 1")
    if not fidelity.TWO_CORES:
        sys.exit("needs two CPUs: the sides are pinned to CPU 0 and CPU 1")

    with tempfile.TemporaryDirectory() as work:
        hook = ucp_round_trip.build_hook(work)
        uniperf = fidelity.Uniperf(args.build, work)
        trial = fidelity.Uniperf(args.trial_build, work) if args.trial_build else None

        def stream(watch, build=uniperf):
            return build.run("put", ["bw", "--op", "write", "-s", "64K", "-n",
                                       str(args.iterations), "--buffers", "single", "-t", "32",
                                       "-w", "1000", "-c", "configs/ucx-shm.yaml",
                                       "--target-watch", watch], fidelity.mb_per_s)

        def perftest(server_env=None):
            return fidelity.ucx_perftest(TRANSPORTS, "ucp_put_bw", 65536, args.iterations,
                                         "bandwidth", server_env=server_env)

        runners = [("ucx_perftest", perftest),
                   (f"ucx_perftest, receiver held {HOLD_US} us a progress call",
                    lambda: perftest({"LD_PRELOAD": hook, "UCP_ROUND_TRIP_SPIN_AFTER_PROGRESS":
                                      str(HOLD_US * 1000)})),
                   ("uniperf, --target-watch none", lambda: stream("none")),
                   ("uniperf, --target-watch last_byte", lambda: stream("last_byte"))]
        if trial:
            runners.append(("trial build, --target-watch last_byte",
                            lambda: stream("last_byte", trial)))
        results = fidelity.rotating_rounds(runners, args.rounds, "put_target_watch")

    reference = results["ucx_perftest"]
    width = max(len(name) for name, _ in runners)
    print(f"{'64 KiB puts, ucx-shm':<{width}} {'MB/s':>8} {'to ucx_perftest':>15}")
    for name, _ in runners:
        values = results[name]
        ratio = statistics.median(v / r for v, r in zip(values, reference))
        print(f"{name:<{width}} {statistics.median(values):>8.0f} {ratio:>15.3f}")


if __name__ == "__main__":
    main()
