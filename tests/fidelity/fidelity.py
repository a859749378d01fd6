#!/usr/bin/env python3
"""One fidelity table: uniperf against every native tool this machine can run.

    tests/fidelity/fidelity.py [--build build] [--rounds 5] [--only WORD]
                               [--output fidelity.jsonl] [--runs] [--length K]
                               [--ucx-perftest-args ARGS] [--uniperf-args ARGS]
                               [--trial-plugins DIR] [--tool-idle-thread]

Each comparison runs the same workload through uniperf and through the
stack's own tool (ucx_perftest, fi_pingpong, sockperf, qperf), pinned
(initiator or client on CPU 0, responder or server on CPU 1), alternated
(uniperf first in even rounds, the tool first in odd ones) and repeated.
It prints one table: each side's median, the median of the rounds' ratios
(uniperf / tool, each round's two runs back to back), a 95% confidence
interval of it (bootstrap over the rounds, seeded) and the ratio of each
side's best run; under the table, each side whose runs spread more than 1.5x.
A ratio above 1 means uniperf measured more (for latency, slower).

What each compares, and why the figures are the same quantity:
  ucx_perftest  its p50 latency (one-way for tag_lat, put_lat) against
                uniperf's p50; its "overall" bandwidth (2^20 B/s, converted)
                and message rate against uniperf's, one buffer each side,
                ended at the last completion and, in the rows named
                "delivered", after a flush as ucx_perftest ends them; the
                message rate once more with receives re-posted 16 at a
                time (--rx-replenish 16), the setting that closes the 8 B
                rate gap over shared memory (docs/fidelity.md); the 64 KiB
                and 1 MiB streams once more with uniperf's send buffers
                never written (--send-buffers untouched), as ucx_perftest's
                are, and with both, untouched and "delivered" (like for
                like); the 64 KiB put stream once more with uniperf's target
                reading the last byte that lands, as ucx_perftest's
                receiver reads its sequence number there (--target-watch
                last_byte); over tcp with -e, its endpoints handling a
                peer's failure as the ucx-tcp config's do (peer_errors)
  fi_pingpong   its usec/xfer (elapsed / iterations / 2: a MEAN one-way
                latency) against uniperf's mean (over shm both send with
                fi_inject and count a send done when the call returns;
                the row "provider completions" asks shm for a completion)
  sockperf      ping-pong, --nonblocked --mps=max against a --nonblocked
                server: its p50 one-way against the busy-polled tcp
                plugin's; throughput (blocking sockets, Nagle on): its
                message rate times the size against uniperf's stream of the
                same size, busy-polled with TCP_NODELAY (the tcp config's
                default) and, like for like, sleeping on events with
                nodelay off, reading each message in place and, as
                sockperf's server, up to 64 KiB a call (staging=64K)
  qperf         tcp_lat (blocking sockets: a mean one-way) against the tcp
                plugin sleeping on events (--events), mean; tcp_bw (10^9
                B/s) against uniperf's busy-polled stream and, like for
                like, its stream sleeping on events with nodelay off
  perftest      (on rxe0) its t_typical (the median) against uniperf's p50,
                one-way for send and write, round trip for read and the
                atomics; its "BW average" (2^20 B/s, converted) against
                uniperf's bandwidth; the verbs plugin under --preset
                perftest (perftest's iterations, depths, CQ moderation) and
                with no inline data, as perftest posts on rxe (a run where
                it reports inline data is refused); the udapl plugin with
                perftest's iterations (a window of 16 against its -t 16):
                its ratio over the verbs row's is roughly the DAT layer's
                cost (the verbs rows take perftest's preset besides)
  dapltest      (on rxe0) its performance test's RDMA-write bandwidth
                (-T P, polling, a pipeline of 16; 2^20 B/s, converted)
                against the udapl plugin's write stream with a window of 16
The rows on rxe0 run where the device is: inside the Soft-RoCE guest,
    tests/lab/softroce run --timeout 1800 --out DIR -- bash -c \\
        'python3 tests/fidelity/fidelity.py --only rxe --output "$LAB_OUT/lab.jsonl"'
(the guest sees this tree read-only; $LAB_OUT comes back to DIR). Elsewhere
they are listed as not run, saying why.

--runs also prints every round's figure of each side, in round order.

--length K runs every comparison K times as long on both sides (K times the
iterations, or the seconds); --ucx-perftest-args adds arguments to every
ucx_perftest run (e.g. "-O 8", its window), uniperf's side left as is, and
--uniperf-args to every uniperf run (e.g. "--send-buffers untouched"), the
tool's left as is: the by-hand variations of docs/fidelity.md, as commands.

--trial-plugins DIR runs a third side in every round: uniperf loading its
plugins from DIR first (UNIPERF_PLUGIN_PATH), e.g. a copy of a plugin built
before a change, the three sides' order rotating from round to round. A
second table then gives the trial's median, the median of the rounds'
ratios trial / uniperf with its interval, and trial / tool: what the change
is worth against the tool, measured in the same rounds.

--tool-idle-thread preloads into every native tool a thread that only
sleeps (idle_thread_preload.c), so that the tool pays what glibc charges a
multi-threaded process, as uniperf always is: each cancellation point (recv,
send, poll) bracketed by atomic updates of the cancel state, mutexes that no
longer skip their atomics (docs/fidelity.md).

--output also writes the medians as uniperf records (JSON Lines): per
comparison (the test, named after it) one record of config "uniperf" and one
whose config is the tool's name, so `uniperf report FILE --html` draws them
side by side, with each tool's ratio to uniperf. Only the compared figure
is set (a latency's p50, or its mean where the row compares means, which
the report then heads as "mean"); the other statistics are null.
"""
import argparse
import copy
import functools
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TWO_CORES = (os.cpu_count() or 1) >= 2


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if TWO_CORES else []) + argv


def build_c(source, output, flags=()):
    """Compiles tests/fidelity/SOURCE into OUTPUT with cc -O2 -Wall and
    `flags` (libraries, -shared); a failed build raises."""
    subprocess.run(["cc", "-O2", "-Wall", "-o", output,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), source)]
                   + list(flags), check=True)
    return output


def rotated(items, round_):
    """`items` starting `round_` places further on, wrapping around: each
    round a different one goes first."""
    shift = round_ % len(items)
    return items[shift:] + items[:shift]


def rotating_rounds(runners, rounds, label):
    """Runs each (name, run) of `runners` once a round, `rounds` times; each
    round starts one later in the list, so that none always runs first.
    Returns {name: [what run() returned, a round each]}."""
    results = {name: [] for name, _ in runners}
    for round_ in range(rounds):
        for name, run in rotated(runners, round_):
            results[name].append(run())
        print(f"{label}: round {round_ + 1} of {rounds} done", file=sys.stderr)
    return results


# A server's port below the ephemeral range, so that no client's outgoing
# connection can take it between the draw and the server's listen.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from servers import free_port  # noqa: E402


def listening(port):
    """Whether a TCP socket listens on `port` on this host (IPv4 or IPv6),
    read from /proc/net rather than probed: a probing connection would be
    the one client a ucx_perftest server takes."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    local, state = fields[1], fields[3]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            continue
    return False


class Server:
    """A native tool's server on CPU 1 (or `cpu`), stopped when the client is
    done; one that ends by itself after its test may first take up to
    `grace` seconds to do so (what it writes at exit is then complete).
    The clients do not retry, so the client starts only once the server
    listens on `port` (up to 20 s; a fixed pause is a guess a loaded host
    can miss), and `settle` seconds later: some servers listen before their
    provider is open. Without a port, `settle` alone."""

    def __init__(self, argv, env=None, settle=0.4, cpu=1, grace=0, port=None):
        self.process = subprocess.Popen(pinned(cpu, argv), stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=env)
        self.grace = grace
        if port is not None:
            deadline = time.monotonic() + 20
            while not listening(port):
                if self.process.poll() is not None:
                    raise RuntimeError(f"{argv[0]} server ended with {self.process.returncode} "
                                       "before it listened")
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError(f"{argv[0]} server did not listen on {port} in 20 s")
                time.sleep(0.02)
        time.sleep(settle)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.grace:
            try:
                self.process.wait(timeout=self.grace)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def client(argv, env=None, timeout=120, cpu=0):
    done = subprocess.run(pinned(cpu, argv), capture_output=True, text=True, env=env,
                          timeout=timeout)
    return done.stdout + done.stderr


# --- the tools -------------------------------------------------------------

def no_figure(tool, out):
    """The error of a run whose output holds no figure, showing how that
    output ended (a client that could not connect prints no figure)."""
    return RuntimeError(f"{tool} gave no figure: {out.strip()[-300:] or 'nothing'}")


def figure(tool, pattern, out):
    """`pattern`'s match in a tool's output, or no_figure's error."""
    found = re.search(pattern, out)
    if not found:
        raise no_figure(tool, out)
    return found


def ucx_perftest(tls, test, size, iterations, metric, server_cpu=1, server_grace=0,
                 peer_errors=False, server_env=None, extra=()):
    """Its server (index 0: a ping-pong's initiator, a stream's receiver) on
    `server_cpu`, the client on the other CPU; `server_grace` as Server's.
    `peer_errors`: its endpoints handle a peer's failure (-e), as the ucx
    plugin's do with its option peer_errors. `server_env`: variables for the
    server alone (put_target_watch.py's preloaded hook). `extra`: more
    arguments for its client (which hands the test's to the server)."""
    env = dict(os.environ, UCX_TLS=tls)
    port = free_port()
    with Server(["ucx_perftest", "-p", str(port)], dict(env, **(server_env or {})),
                cpu=server_cpu, grace=server_grace, settle=0.1, port=port):
        out = client(["ucx_perftest", "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size),
                      "-n", str(iterations), "-f"] + (["-e"] if peer_errors else []) + list(extra),
                     env,
                     cpu=1 - server_cpu)
    # -f: one final line: iterations, p50, avg, overall latency (us),
    # avg, overall bandwidth (2^20 B/s), avg, overall message rate (1/s)
    columns = [line.split() for line in out.splitlines() if re.match(r"^\s*\d+\s+[\d.]", line)]
    if not columns:
        raise no_figure("ucx_perftest", out)
    last = columns[-1]
    return {"latency": float(last[1]), "bandwidth": float(last[5]) * 1.048576,
            "rate": float(last[7]) / 1e6}[metric]


def fi_pingpong(provider, endpoint, size, iterations, _metric):
    port = free_port()
    common = ["-p", provider, "-e", endpoint, "-I", str(iterations), "-S", str(size)]
    # Its client does not retry (with 0.4 s of settling and no look at the
    # port, one client of 22 printed nothing).
    with Server(["fi_pingpong"] + common + ["-B", str(port)], settle=0.2, port=port):
        out = client(["fi_pingpong"] + common + ["-P", str(port), "127.0.0.1"])
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d+[kmg]?\s", line)]
    if not rows:
        raise no_figure("fi_pingpong", out)
    return float(rows[-1][6])  # usec/xfer


def sockperf(mode, size, seconds, _metric):
    port = free_port()
    server = ["sockperf", "server", "-i", "127.0.0.1", "-p", str(port), "--tcp"]
    test = ["sockperf", mode, "-i", "127.0.0.1", "-p", str(port), "--tcp", "-m", str(size),
            "-t", str(seconds)]
    if mode == "ping-pong":
        server.append("--nonblocked")
        test += ["--nonblocked", "--mps=max"]
    with Server(server, settle=0.1, port=port):
        out = client(test)
    if mode == "ping-pong":
        return float(figure("sockperf", r"percentile 50\.000 =\s*([\d.]+)", out).group(1))
    rate = float(figure("sockperf", r"Message Rate is ([\d.]+) \[msg/sec\]", out).group(1))
    return rate * size / 1e6  # MB/s, 10^6 B/s


def qperf(test, size, seconds, _metric):
    port = free_port()
    with Server(["qperf", "-lp", str(port)], settle=0.1, port=port):
        out = client(["qperf", "127.0.0.1", "-lp", str(port), "-m", str(size), "-t", str(seconds),
                      test])
    value, unit = figure("qperf", r"(?:latency|bw)\s*=\s*([\d.]+)\s*(\S+)", out).groups()
    scale = {"ns": 1e-3, "us": 1, "ms": 1e3, "sec": 1e6,
             "KB/sec": 1e-3, "MB/sec": 1, "GB/sec": 1e3}[unit]
    return float(value) * scale


# The lab's tools, on rxe0 (perftest and uDAPL's dapltest). Under the
# guest's emulation a server takes longer to listen.
RXE = "rxe0"
LAB_SETTLE = 1.5


def roce_v2_ipv4_gid(device=RXE):
    """The GID index the verbs plugin picks by itself (RoCE v2, IPv4-mapped)
    and its IPv4 address, where a client finds the server."""
    port = f"/sys/class/infiniband/{device}/ports/1"
    for index in sorted(os.listdir(f"{port}/gids"), key=int):
        try:
            value = open(f"{port}/gids/{index}").read().strip()
            kind = open(f"{port}/gid_attrs/types/{index}").read().strip()
        except OSError:  # an unset entry reads as an error
            continue
        if value.startswith("0000:0000:0000:0000:0000:ffff:") and kind == "RoCE v2":
            high, low = value.split(":")[-2:]
            octets = bytes.fromhex(high + low)
            return int(index), ".".join(str(o) for o in octets)
    raise RuntimeError(f"no RoCE v2 IPv4 GID on {device}")


def perftest(tool, size, iterations, metric, extra=()):
    index, address = roce_v2_ipv4_gid()
    argv = [tool, "-d", RXE, "-x", str(index), "-s", str(size), "-n", str(iterations),
            "-p", str(free_port()), *extra]
    with Server(argv, settle=LAB_SETTLE):
        out = client(argv + [address])
    inline = re.search(r"Max inline data\s*:\s*(\d+)", out)
    if inline and int(inline.group(1)) != 0:
        raise RuntimeError(f"{tool} posted {inline.group(1)} B inline; uniperf's row posts "
                           "none (-I 0): not the same workload")
    # lat: bytes, iterations, t_min, t_max, t_typical, ...
    # bw: bytes, iterations, BW peak, BW average (2^20 B/s), MsgRate
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s*\d+\s+\d+\s+[\d.]", line)]
    if not rows:
        raise no_figure(tool, out)
    last = rows[-1]
    return float(last[4]) if metric == "latency" else float(last[3]) * 1.048576


def dapltest(size, iterations, _metric):
    ia = "ofa-v2-cma-roe-rxe"
    env = dict(os.environ, DAT_OVERRIDE=os.path.join(ROOT, "configs", "udapl-rxe.dat.conf"))
    _, address = roce_v2_ipv4_gid()
    with Server(["dapltest", "-T", "S", "-D", ia], env, settle=LAB_SETTLE):
        out = client(["dapltest", "-T", "P", "-D", ia, "-s", address, "-i", str(iterations),
                      "-p", "16", "-m", "p", "RW", str(size), "1"], env)
        client(["dapltest", "-T", "Q", "-D", ia, "-s", address], env, timeout=30)  # server, quit
    return float(figure("dapltest", r"Bandwidth\s*:?\s*([\d.]+)", out).group(1)) * 1.048576


# --- uniperf ---------------------------------------------------------------

class Uniperf:
    def __init__(self, build, work):
        self.binary = os.path.join(build, "bin", "uniperf")
        self.work = work
        self.last = {}  # comparison name -> its latest record

    def run(self, name, argv, figure, plugins=None):
        out = os.path.join(self.work, "u.jsonl")
        pins = ["--cpu", "0", "--peer-cpu", "1"] if TWO_CORES else []
        # Absolute: uniperf runs in ROOT, the caller may name DIR from elsewhere.
        env = dict(os.environ, UNIPERF_PLUGIN_PATH=os.path.abspath(plugins)) if plugins else None
        done = subprocess.run([self.binary] + argv + pins + ["-o", out, "--quiet"], cwd=ROOT,
                              capture_output=True, text=True, timeout=600, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"uniperf {' '.join(argv)}: exit {done.returncode}: "
                               f"{done.stderr.strip()[-300:]}")
        record = json.loads(open(out).readline())
        if record["status"] != "ok":
            raise RuntimeError(f"uniperf {' '.join(argv)}: {record['status']}: {record['reason']}")
        self.last[name] = record
        return figure(record)


def p50(r):
    return r["latency_us"]["p50"]


def mean(r):
    return r["latency_us"]["mean"]


def mb_per_s(r):
    return r["bandwidth"]["MB_per_s"]


def mmsg_per_s(r):
    return r["bandwidth"]["Mmsg_per_s"]


UNITS = {"latency": "us", "bandwidth": "MB/s", "rate": "Mmsg/s"}


def comparisons(length=1, ucx_perftest_args=()):
    """(name, tool, metric, uniperf argv, uniperf figure, native call, needs):
    needs is the tool's binary, uniperf's plugin and, for some, a device.
    `length` multiplies every run's iterations or seconds, on both sides;
    `ucx_perftest_args` go on ucx_perftest's command line (its client's)."""
    rows = []
    # configs/ucx-tcp.yaml sets peer_errors (UCP_ERR_HANDLING_MODE_PEER):
    # ucx_perftest runs with -e there, as the mode changes UCP's protocols
    # (over tcp it moved the 64 KiB and 1 MiB streams by a quarter and a
    # third, in opposite directions: docs/fidelity.md).
    ucx = [("ucx-shm", "posix,self", 100000, 20000, 2000, 200000, False),
           ("ucx-tcp", "tcp,self", 20000, 5000, 500, 100000, True)]
    for config, tls, *counts, errors in ucx:
        lat_n, bw_n, big_n, rate_n = (count * length for count in counts)
        c = ["-c", f"configs/{config}.yaml"]
        one = ["--buffers", "single", "-t", "32", "-w", "1000"]
        native = functools.partial(ucx_perftest, tls, peer_errors=errors,
                                   extra=tuple(ucx_perftest_args))
        needs = ("ucx_perftest", "ucx")
        rows += [
            (f"{config} send lat 8", "ucx_perftest", "latency",
             ["lat", "--op", "send", "-s", "8", "-n", str(lat_n), "-w", "1000"] + c, p50,
             lambda m, run=native, n=lat_n: run("tag_lat", 8, n, m), needs),
            (f"{config} put lat 8", "ucx_perftest", "latency",
             ["lat", "--op", "write", "-s", "8", "-n", str(lat_n), "-w", "1000"] + c, p50,
             lambda m, run=native, n=lat_n: run("ucp_put_lat", 8, n, m), needs),
        ]
        # The streams: (row, op, uniperf's -s, iterations, ucx_perftest's test and
        # size in bytes, uniperf's figure, metric).
        streams = [(f"{config} send rate 8", "send", "8", rate_n, "tag_bw", 8, mmsg_per_s, "rate"),
                   (f"{config} send bw 64K", "send", "64K", bw_n, "tag_bw", 65536, mb_per_s,
                    "bandwidth"),
                   (f"{config} send bw 1M", "send", "1M", big_n, "tag_bw", 1 << 20, mb_per_s,
                    "bandwidth"),
                   (f"{config} put bw 64K", "write", "64K", bw_n, "ucp_put_bw", 65536, mb_per_s,
                    "bandwidth"),
                   (f"{config} put bw 1M", "write", "1M", big_n, "ucp_put_bw", 1 << 20, mb_per_s,
                    "bandwidth")]
        # ucx_perftest takes its time after flushing the endpoint: each stream
        # also ended at delivery (--stream-end delivered), beside the one that
        # ends at the last completion.
        for ending in ([], ["--stream-end", "delivered"]):
            rows += [(name + (" delivered" if ending else ""), "ucx_perftest", metric,
                      ["bw", "--op", op, "-s", label, "-n", str(n)] + one + c + ending, figure,
                      lambda m, run=native, t=test, s=size, n=n: run(t, s, n, m), needs)
                     for name, op, label, n, test, size, figure, metric in streams]
        # ucx_perftest's put_bw receiver reads its sequence number in the last
        # bytes of the destination throughout the stream, so every put takes
        # that line back from its cache (ucx-shm 64 KiB: 4-5%); uniperf's
        # target does so only when asked (docs/fidelity.md).
        rows.append((f"{config} put bw 64K target watches", "ucx_perftest", "bandwidth",
                     ["bw", "--op", "write", "-s", "64K", "-n", str(bw_n), "--target-watch",
                      "last_byte"] + one + c, mb_per_s,
                     lambda m, run=native, n=bw_n: run("ucp_put_bw", 65536, n, m), needs))
        # ucx_perftest never writes its send buffers, so they read as the
        # kernel's zero page, one cached page: a copying transport moves a
        # megabyte faster from there (docs/fidelity.md, note (j)). The 64 KiB
        # and 1 MiB streams once more with uniperf's send buffers left
        # untouched too, ended at the last completion and, with both of
        # ucx_perftest's ways named at once, at delivery (like for like).
        rows += [(f"{config} {kind} bw {label}{' delivered' if ending else ''} untouched",
                  "ucx_perftest", "bandwidth",
                  ["bw", "--op", op, "-s", label, "-n", str(n), "--send-buffers", "untouched"]
                  + one + c + ending, mb_per_s,
                  lambda m, run=native, t=test, s=size, n=n: run(t, s, n, m), needs)
                 for ending in ([], ["--stream-end", "delivered"])
                 for label, size, n in (("64K", 65536, bw_n), ("1M", 1 << 20, big_n))
                 for kind, op, test in (("send", "send", "tag_bw"), ("put", "write", "ucp_put_bw"))]
        # The message rate with receives re-posted 16 at a time, which
        # closes the 8 B rate gap over shared memory (docs/fidelity.md).
        rows.append((f"{config} send rate 8 replenish 16", "ucx_perftest", "rate",
                     ["bw", "--op", "send", "-s", "8", "-n", str(rate_n), "--rx-replenish", "16"]
                     + one + c, mmsg_per_s,
                     lambda m, run=native, n=rate_n: run("tag_bw", 8, n, m), needs))
    ofi = [("ofi-tcp", "tcp", "msg", 20000 * length), ("ofi-shm", "shm", "rdm", 50000 * length)]
    for config, provider, endpoint, n in ofi:
        for size, label in ((8, "8"), (4096, "4K")):
            rows.append((f"{config} send lat {label}", "fi_pingpong", "latency",
                         ["lat", "--op", "send", "-s", str(size), "-n", str(n), "-w", "100",
                          "-I", "65536", "-c", f"configs/{config}.yaml"], mean,
                         lambda m, p=provider, e=endpoint, s=size, n=n: fi_pingpong(p, e, s, n, m),
                         ("fi_pingpong", "ofi")))
    # fi_pingpong sends with fi_inject, which reports nothing, and counts a
    # send done when the call returns; configs/ofi-shm.yaml does the same
    # (inject_completion: return). This row asks shm for its completions,
    # as the plugin does by default (docs/fidelity.md).
    shm_n = next(n for config, _, _, n in ofi if config == "ofi-shm")
    rows.append(("ofi-shm send lat 8 provider completions", "fi_pingpong", "latency",
                 ["lat", "--op", "send", "-s", "8", "-n", str(shm_n), "-w", "100", "-I", "65536",
                  "-c", "ofi:provider=shm,endpoint=rdm,inject_completion=provider"], mean,
                 lambda m: fi_pingpong("shm", "rdm", 8, shm_n, m), ("fi_pingpong", "ofi")))
    # On rxe0. perftest's iterations: 1000 a latency test, 5000 a write
    # stream, 1000 a send or read stream (its defaults, which --preset
    # perftest takes). Atomics' latency is a round trip, as a read's.
    verbs = ["--preset", "perftest", "-I", "0", "-c", "configs/verbs-rxe.yaml"]
    for op, tool, size, default_n, extra in [
            ("send", "ib_send_lat", 8, 1000, ()), ("write", "ib_write_lat", 8, 1000, ()),
            ("read", "ib_read_lat", 8, 1000, ()),
            ("fetch_add", "ib_atomic_lat", 8, 1000, ("-A", "FETCH_AND_ADD")),
            ("cswap", "ib_atomic_lat", 8, 1000, ("-A", "CMP_AND_SWAP")),
            ("write", "ib_write_bw", 65536, 5000, ()), ("send", "ib_send_bw", 65536, 1000, ()),
            ("read", "ib_read_bw", 65536, 1000, ()), ("write", "ib_write_bw", 4096, 5000, ()),
            ("send", "ib_send_bw", 4096, 1000, ()), ("read", "ib_read_bw", 4096, 1000, ())]:
        n = default_n * length
        metric = "latency" if tool.endswith("_lat") else "bandwidth"
        kind, label = ("lat", "lat 8") if metric == "latency" else ("bw", f"bw {size // 1024}K")
        rows.append((f"verbs-rxe {op} {label}", "perftest", metric,
                     [kind, "--op", op, "-s", str(size), "-n", str(n)] + verbs,
                     p50 if metric == "latency" else mb_per_s,
                     lambda m, t=tool, s=size, n=n, x=extra: perftest(t, s, n, m, x),
                     (tool, "verbs", RXE)))
    # The udapl plugin against the same hand-written verbs loops: the same
    # rows' ratio over verbs-rxe's is roughly the DAT layer's cost.
    udapl_n = 1000 * length
    udapl = ["-n", str(udapl_n), "-w", "50", "-c", "configs/udapl-rxe.yaml"]
    for op in ("send", "write", "read"):
        rows.append((f"udapl-rxe {op} lat 8", "perftest", "latency",
                     ["lat", "--op", op, "-s", "8"] + udapl, p50,
                     lambda m, t=f"ib_{op}_lat": perftest(t, 8, udapl_n, m),
                     (f"ib_{op}_lat", "udapl", RXE)))
    rows.append(("udapl-rxe write bw 64K", "perftest", "bandwidth",
                 ["bw", "--op", "write", "-s", "64K", "-t", "16"] + udapl, mb_per_s,
                 lambda m: perftest("ib_write_bw", 65536, udapl_n, m, ("-t", "16")),
                 ("ib_write_bw", "udapl", RXE)))
    rows.append(("udapl-rxe write bw 64K", "dapltest", "bandwidth",
                 ["bw", "--op", "write", "-s", "64K", "-t", "16"] + udapl, mb_per_s,
                 lambda m: dapltest(65536, udapl_n, m), ("dapltest", "udapl", RXE)))
    tcp = ["-c", "configs/tcp.yaml"]
    seconds = 2 * length
    rows += [
        ("tcp lat 64 polling", "sockperf", "latency",
         ["lat", "--op", "send", "-s", "64", "-D", f"{seconds}s"] + tcp, p50,
         lambda m: sockperf("ping-pong", 64, seconds, m), ("sockperf", "tcp")),
        ("tcp bw 16K", "sockperf", "bandwidth",
         ["bw", "--op", "send", "-s", "16K", "-D", f"{seconds}s", "-t", "32"] + tcp, mb_per_s,
         lambda m: sockperf("throughput", 16384, seconds, m), ("sockperf", "tcp")),
        # sockperf's throughput test blocks on its sockets, leaves Nagle on
        # (its --tcp-avoid-nodelay default there) and sends from one buffer:
        # the plugin sleeping on events, nodelay off, one buffer each side is
        # the like-for-like row (docs/fidelity.md).
        ("tcp bw 16K Nagle events", "sockperf", "bandwidth",
         ["bw", "--op", "send", "-s", "16K", "-D", f"{seconds}s", "-t", "32", "--events",
          "--buffers", "single", "-c", "tcp:nodelay=false"], mb_per_s,
         lambda m: sockperf("throughput", 16384, seconds, m), ("sockperf", "tcp")),
        # ... and reading as sockperf's server does, up to 64 KiB a call:
        # how much one read takes moves a loopback stream (docs/fidelity.md).
        ("tcp bw 16K Nagle events 64K reads", "sockperf", "bandwidth",
         ["bw", "--op", "send", "-s", "16K", "-D", f"{seconds}s", "-t", "32", "--events",
          "--buffers", "single", "-c", "tcp:nodelay=false,staging=64K"], mb_per_s,
         lambda m: sockperf("throughput", 16384, seconds, m), ("sockperf", "tcp")),
        ("tcp bw 16K Nagle events 64K reads waits in recv", "sockperf", "bandwidth",
         ["bw", "--op", "send", "-s", "16K", "-D", f"{seconds}s", "-t", "32", "--events",
          "--buffers", "single", "-c", "tcp:nodelay=false,staging=64K,wait=recv"], mb_per_s,
         lambda m: sockperf("throughput", 16384, seconds, m), ("sockperf", "tcp")),
        ("tcp lat 64 events", "qperf", "latency",
         ["lat", "--op", "send", "-s", "64", "-D", f"{seconds}s", "--events"] + tcp, mean,
         lambda m: qperf("tcp_lat", 64, seconds, m), ("qperf", "tcp")),
        # qperf's and sockperf's servers sleep inside a blocking read; the
        # plugin sleeps in poll(2) unless wait=recv (docs/fidelity.md).
        ("tcp lat 64 events waits in recv", "qperf", "latency",
         ["lat", "--op", "send", "-s", "64", "-D", f"{seconds}s", "--events", "-c",
          "tcp:nodelay=true,wait=recv"], mean,
         lambda m: qperf("tcp_lat", 64, seconds, m), ("qperf", "tcp")),
        ("tcp bw 64K", "qperf", "bandwidth",
         ["bw", "--op", "send", "-s", "64K", "-D", f"{seconds}s", "-t", "32"] + tcp, mb_per_s,
         lambda m: qperf("tcp_bw", 65536, seconds, m), ("qperf", "tcp")),
        # qperf's tcp_bw blocks on its sockets, leaves Nagle on and reads one
        # 64 KiB message a call into one buffer (strace of its server): like
        # for like, the plugin sleeps on events, nodelay off, one buffer each
        # side; its default staging already reads a 64 KiB message in place.
        ("tcp bw 64K Nagle events", "qperf", "bandwidth",
         ["bw", "--op", "send", "-s", "64K", "-D", f"{seconds}s", "-t", "32", "--events",
          "--buffers", "single", "-c", "tcp:nodelay=false"], mb_per_s,
         lambda m: qperf("tcp_bw", 65536, seconds, m), ("qperf", "tcp")),
    ]
    return rows


# A side whose fastest run was this many times its slowest is named under the
# table: a transport that switches between two speeds (the loopback's tcp
# streams do) makes the median of the rounds' ratios a matter of which speed
# each run drew, and the best-of-rounds ratio the steadier comparison.
SPREAD_NOTED = 1.5


def best_ratio(metric, ours, theirs):
    """Each side's best run against the other's: the fastest for latency,
    the most for bandwidth and message rate (the run least disturbed)."""
    pick = min if metric == "latency" else max
    return pick(ours) / pick(theirs)


def ratio_interval(paired, resamples=2000):
    """95% bootstrap interval of the median of the rounds' ratios.

    Each round's two runs ran back to back, so their ratio cancels what the
    machine's speed did between rounds (this QEMU guest's drifts by several
    times within minutes); the rounds' ratios are resampled, seeded."""
    rng = random.Random(20261125)
    medians = sorted(statistics.median(rng.choices(paired, k=len(paired)))
                     for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def as_record(template, config, tool_label, metric, figure, rounds, command, statistic="p50"):
    """A uniperf record holding one median: the figure compared, nothing else.
    A latency figure is the record's p50 or its mean (`statistic`), as the
    row compares them; `uniperf report` heads a mean-only record with "mean"."""
    r = copy.deepcopy(template)
    r["config"] = config
    r["test"] = tool_label
    r["warnings"] = [f"fidelity: the median of {rounds} runs of {command}; "
                     "only the compared figure is set"]
    if metric == "latency":
        lat = r["latency_us"]
        for key in ("min", "p50", "p90", "p99", "p99_9", "p99_99", "max", "mean", "stdev"):
            lat[key] = None
        lat.pop("percentile_error", None)
        lat[statistic] = figure
    else:
        bw = r["bandwidth"]
        size = r["size"]
        mb = figure if metric == "bandwidth" else figure * size
        bw["MB_per_s"] = mb
        bw["Gb_per_s"] = mb * 8 / 1e3
        bw["Mmsg_per_s"] = mb / size if metric == "bandwidth" else figure
        bw["MiB_per_s"] = mb * 1e6 / (1 << 20)
    r.pop("trials", None)
    r.pop("samples_kept", None)
    return r


def with_environment(variables, run, *args, **kwargs):
    """run(*args, **kwargs) with `variables` set in this process's
    environment, which the native tools' processes inherit; restored
    afterwards."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        return run(*args, **kwargs)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="run the comparisons whose name has this")
    parser.add_argument("--output", help="the medians as uniperf records (JSON Lines)")
    parser.add_argument("--runs", action="store_true",
                        help="also print every round's figures of both sides under the table, "
                        "in round order (to see a side that switches between two speeds)")
    parser.add_argument("--length", type=int, default=1, metavar="K",
                        help="run every comparison K times as long on both sides: K times "
                        "the iterations, or the seconds")
    parser.add_argument("--ucx-perftest-args", default="", metavar="ARGS",
                        help="more arguments for every ucx_perftest run, e.g. \"-O 8\" "
                        "(its window); uniperf's side is left as is")
    parser.add_argument("--uniperf-args", default="", metavar="ARGS",
                        help="more arguments for every uniperf run, e.g. \"--send-buffers "
                        "untouched\"; the tool's side is left as is")
    parser.add_argument("--trial-plugins", default=None, metavar="DIR",
                        help="also run uniperf with its plugins loaded from DIR first, as a "
                        "third side of every round, and print its ratios to both")
    parser.add_argument("--tool-idle-thread", action="store_true",
                        help="preload into every native tool a thread that only sleeps, "
                        "making it a multi-threaded process as uniperf is")
    args = parser.parse_args()
    if args.trial_plugins and not os.path.isdir(args.trial_plugins):
        parser.error(f"--trial-plugins: {args.trial_plugins} is not a directory")
    if args.length < 1:
        parser.error("--length must be 1 or more")
    plugins = os.path.join(args.build, "lib", "uniperf")
    work = tempfile.mkdtemp(prefix="uniperf-fidelity-")
    ours_runner = Uniperf(args.build, work)
    ours_extra = shlex.split(args.uniperf_args)
    tool_env = {}
    if args.tool_idle_thread:
        tool_env["LD_PRELOAD"] = build_c("idle_thread_preload.c",
                                         os.path.join(work, "idle_thread_preload.so"),
                                         ("-shared", "-fPIC", "-pthread"))

    chosen, missing = [], []
    for row in comparisons(args.length, shlex.split(args.ucx_perftest_args)):
        name, tool, _, _, _, _, (binary, plugin, *device) = row
        if args.only and args.only not in f"{name} {tool}":
            continue
        if device and not os.path.isdir(f"/sys/class/infiniband/{device[0]}"):
            missing.append(f"{name} vs {tool}: no {device[0]} here (inside the Soft-RoCE guest: "
                           "tests/lab/softroce)")
        elif not shutil.which(binary):
            missing.append(f"{name} vs {tool}: {binary} not installed")
        elif not os.path.exists(os.path.join(plugins, f"libuniperf-{plugin}.so")):
            missing.append(f"{name} vs {tool}: the {plugin} plugin is not built")
        else:
            chosen.append(row)

    # Per comparison (its name and tool: one uniperf workload may face two
    # tools), per round: [uniperf's figure, the tool's, the trial's (None
    # without --trial-plugins)].
    figures = {(row[0], row[1]): [] for row in chosen}
    for round_ in range(args.rounds):
        for name, tool, metric, argv, figure, native, _ in chosen:
            pair = [None, None, None]
            steps = [(0, lambda: ours_runner.run(name, argv + ours_extra, figure)),
                     (1, lambda: with_environment(tool_env, native, metric))]
            if args.trial_plugins:
                steps.append((2, lambda: ours_runner.run("trial", argv + ours_extra, figure,
                                                         plugins=args.trial_plugins)))
                order = rotated(steps, round_)
            else:
                order = steps if round_ % 2 == 0 else list(reversed(steps))
            for side, step in order:
                try:
                    pair[side] = step()
                except Exception as error:  # one failed run does not end the table
                    print(f"fidelity: {name} vs {tool}, round {round_ + 1}: {error}",
                          file=sys.stderr)
            figures[name, tool].append(pair)
        print(f"fidelity: round {round_ + 1} of {args.rounds} done", file=sys.stderr)

    width = max([len("comparison")] + [len(row[0]) for row in chosen])
    header = f"{'comparison':<{width}} {'tool':<13} {'unit':<7} {'uniperf':>10} {'tool':>10} " \
             f"{'ratio':>7}  {'95% CI':<15} {'best':>7} rounds"
    print(header)
    records = []
    spreads = []
    for name, tool, metric, argv, figure_of, _, _ in chosen:
        ours = [u for u, _, _ in figures[name, tool] if u is not None]
        theirs = [n for _, n, _ in figures[name, tool] if n is not None]
        paired = [u / n for u, n, _ in figures[name, tool] if u is not None and n]
        if not paired:
            print(f"{name:<{width}} {tool:<13} (no round with both runs)")
            continue
        u, n = statistics.median(ours), statistics.median(theirs)
        low, high = ratio_interval(paired)
        print(f"{name:<{width}} {tool:<13} {UNITS[metric]:<7} {u:>10.3f} {n:>10.3f} "
              f"{statistics.median(paired):>7.3f}  [{low:.3f}, {high:.3f}] "
              f"{best_ratio(metric, ours, theirs):>7.3f} {len(paired)}")
        for side, runs in (("uniperf", ours), (tool, theirs)):
            if min(runs) > 0 and max(runs) / min(runs) > SPREAD_NOTED:
                spreads.append(f"{name}: {side}'s runs spread {min(runs):.3f} to "
                               f"{max(runs):.3f} {UNITS[metric]}")
        template = ours_runner.last.get(name)
        if template:
            # A workload facing two tools is drawn once per tool.
            shared = sum(row[0] == name for row in chosen) > 1
            label = (f"{name} vs {tool}" if shared else name).replace(" ", "_")
            statistic = "mean" if figure_of is mean else "p50"
            records.append(as_record(template, "uniperf", label, metric, u, len(ours),
                                     "uniperf " + " ".join(argv), statistic))
            records.append(as_record(template, tool, label, metric, n, len(theirs), tool,
                                     statistic))
    for line in spreads:
        print(f"spread: {line}")
    if args.trial_plugins:
        print(f"\ntrial: uniperf with plugins from {args.trial_plugins} first")
        print(f"{'comparison':<{width}} {'unit':<7} {'trial':>10} {'to uniperf':>10}  "
              f"{'95% CI':<15} {'to tool':>7}  {'95% CI':<15}")
        for name, tool, metric, *_ in chosen:
            rounds = figures[name, tool]
            trial = [t for _, _, t in rounds if t is not None]
            to_ours = [t / u for u, _, t in rounds if t is not None and u]
            to_tool = [t / n for _, n, t in rounds if t is not None and n]
            if not to_ours or not to_tool:
                print(f"{name:<{width}} (no round with the trial and both sides)")
                continue
            (ours_low, ours_high), (tool_low, tool_high) = map(ratio_interval, (to_ours, to_tool))
            print(f"{name:<{width}} {UNITS[metric]:<7} {statistics.median(trial):>10.3f} "
                  f"{statistics.median(to_ours):>10.3f}  [{ours_low:.3f}, {ours_high:.3f}] "
                  f"{statistics.median(to_tool):>7.3f}  [{tool_low:.3f}, {tool_high:.3f}]")
    if args.runs:
        for name, tool, *_ in chosen:
            sides = (("uniperf", 0), (tool, 1)) + ((("trial", 2),) if args.trial_plugins else ())
            for side, index in sides:
                runs = " ".join("-" if pair[index] is None else f"{pair[index]:.3f}"
                                for pair in figures[name, tool])
                print(f"runs: {name}: {side}: {runs}")
    for line in missing:
        print(f"not run: {line}")
    if args.output:
        with open(args.output + ".tmp", "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        os.replace(args.output + ".tmp", args.output)
        print(f"fidelity: records written to {args.output}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
