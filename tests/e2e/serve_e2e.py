#!/usr/bin/env python3
"""`uniperf serve`, a bare server, iperf3 style. It runs in an empty
directory, so it has no suite or config file: each client sends its own.

1. A client's suite file (which the server never saw), a config file and a
   config given inline, with --trials: the run is the client's, and the
   records say so.
2. A one-off test (`uniperf lat`) over IPv6, `--peer [::1]:PORT`.
3. A second client while the first runs is told at once that the server is
   busy (exit 3), instead of waiting 30 s in the listen queue. The first
   client, interrupted (Ctrl-C), ends its run on the server too, which
   counts it served: the client's user stopped it, nothing failed.
   A client that comes as the last run ends is served next, not refused.
4. An offer the server cannot build (a suite this version cannot parse) is
   refused with the parser's message, and the server goes on serving.
5. --once ends the server after one client with its run's exit code; a
   signal between clients ends it with 0.
6. A firewall needs one port open on the server, and the data port a config
   names: every socket the server holds while a client runs (the control
   connection, the heartbeat's, the data's) has one of those as its local
   port, none an ephemeral one."""
import json, os, re, signal, socket, struct, subprocess, sys, tempfile, time
from servers import free_port, start_serve

uniperf, source_dir = os.path.abspath(sys.argv[1]), sys.argv[2]
SUITE = ("suite: served\ntests:\n"
         "  - {name: lat, op: send, pattern: latency, sizes: [8, 64], iterations: 200}\n"
         "  - {name: bw, op: send, pattern: bandwidth, sizes: [4K], iterations: 500}\n")


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def client(*args, timeout=300):
    return subprocess.run([uniperf, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=source_dir)


def protocol_version():
    """The control protocol this build speaks (session::kProtocolVersion)."""
    header = open(os.path.join(source_dir, "framework/src/session/session.hpp")).read()
    return int(re.search(r"kProtocolVersion = (\d+);", header).group(1))


def frame(payload: bytes) -> bytes:
    return b"upf\x01" + struct.pack("!I", len(payload)) + payload


def read_frame(s) -> bytes:
    def exactly(n):
        got = b""
        while len(got) < n:
            chunk = s.recv(n - len(got))
            assert chunk, "the server closed without answering"
            got += chunk
        return got
    header = exactly(8)
    assert header[:4] == b"upf\x01", header
    return exactly(struct.unpack("!I", header[4:])[0])


def local_ports(pid):
    """(local port, state) of every TCP socket process `pid` holds, from
    /proc (no tool needed): state 0A listens, 01 is established."""
    return [(port, state) for _, port, state in local_sockets(pid)]


def local_sockets(pid):
    """(local IPv4 address or None, local port, state) of every TCP socket
    process `pid` holds, from /proc."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            found = re.match(r"socket:\[(\d+)\]", os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
        if found:
            inodes.add(found.group(1))
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in open(table).readlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                address, port = fields[1].rsplit(":", 1)
                ipv4 = (socket.inet_ntoa(bytes.fromhex(address)[::-1]) if len(address) == 8
                        else None)
                ports.append((ipv4, int(port, 16), fields[3]))
    return ports


def broken_offer(port):
    """Offers a suite this version cannot parse; returns the server's answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        offer = {"magic": "uniperf", "protocol": protocol_version(), "version": "test",
                 "suite": {"name": "broken", "hash": "0", "trials": [1]},
                 "configs": [], "provenance": None,
                 "offer": {"suite": {"label": "broken.yaml", "text": "suite: broken\ntests: 5\n"},
                           "configs": [], "overrides": {}}}
        s.sendall(frame(json.dumps(offer).encode()))
        return json.loads(read_frame(s))


def once_connected(sockets, least=3, seconds=60):
    """`sockets()` (a list of (..., state)) as soon as it holds `least`
    established ones (control, heartbeat, data), or as it is after
    `seconds`: on a loaded machine the heartbeat and data connections may
    come seconds after the server said it serves."""
    deadline = time.monotonic() + seconds
    while True:
        held = sockets()
        if sum(1 for *_, state in held if state == "01") >= least or time.monotonic() > deadline:
            return held
        time.sleep(0.05)


def wait_for(log, text, seconds=60, times=1):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if open(log.name).read().count(text) >= times:
            return
        time.sleep(0.1)
    raise AssertionError(f"the server never said {text!r}: {open(log.name).read()}")


with tempfile.TemporaryDirectory() as work:
    suite = os.path.join(work, "served.yaml")
    open(suite, "w").write(SUITE)
    port = free_port()
    server, log = start_serve(uniperf, os.path.join(work, f"server-{port}"), port)
    try:
        # 1. The client's own suite and configs, and its --trials.
        results = os.path.join(work, "r.jsonl")
        run = client("run", suite, "-c", "configs/tcp.yaml", "-c", "tcp:nodelay=false",
                     "--trials", "2", "--peer", f"127.0.0.1:{port}", "-o", results, "--quiet")
        assert run.returncode == 0, (run.returncode, run.stderr)
        records = [json.loads(l) for l in open(results)]
        assert len(records) == 6, records
        assert {r["config"] for r in records} == {"tcp", "tcp:nodelay=false"}, records
        assert all(r["status"] == "ok" for r in records), [r.get("failure") for r in records]
        assert all(r["trials"]["count"] == 2 for r in records), records[0]["trials"]
        assert records[0]["provenance"]["bootstrap"]["method"] == "peer", records[0]["provenance"]
        wait_for(log, "served 127.0.0.1")
        said = open(log.name).read()
        assert "serving 127.0.0.1: suite 'served' (2 tests) over tcp, tcp:nodelay=false" in said, said

        # 2. A one-off test over IPv6.
        if ipv6_loopback():
            lat = client("lat", "-s", "8", "-n", "200", "-c", "tcp", "--peer", f"[::1]:{port}",
                         "-o", "-", "--quiet")
            assert lat.returncode == 0, (lat.returncode, lat.stderr)
            record = json.loads(lat.stdout.splitlines()[0])
            assert record["status"] == "ok" and record["latency_us"]["p50"] > 0, record
            assert record["provenance"]["bootstrap"]["rendezvous"] == f"[::1]:{port}", record
        else:
            print("note: no IPv6 loopback here; the IPv6 client was not tried")

        # 3. Busy: a stream holds the server; a second client is told so.
        # The stream is far longer than the check needs and is interrupted
        # after it: a short one could end before a slow (sanitized, loaded)
        # second client arrives, and that client would be served.
        long_run = subprocess.Popen(
            [uniperf, "bw", "--op", "send", "-s", "4K", "-D", "120s", "-c", "tcp", "--peer",
             f"127.0.0.1:{port}", "-o", os.devnull, "--quiet"],
            cwd=source_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(log, "suite 'command-line' (1 tests)", times=2 if ipv6_loopback() else 1)
        started = time.monotonic()
        busy = client("lat", "-c", "tcp", "--peer", f"127.0.0.1:{port}", timeout=60)
        took = time.monotonic() - started
        assert long_run.poll() is None, long_run.communicate()
        assert busy.returncode == 3, (busy.returncode, busy.stderr)
        assert "the server refused the run: busy: serving 127.0.0.1" in busy.stderr, busy.stderr
        assert took < 20, f"the busy client waited {took:.1f} s"
        long_run.send_signal(signal.SIGINT)
        _, err = long_run.communicate(timeout=60)
        assert long_run.returncode == 130, (long_run.returncode, err)
        # The server's side of it ended too, told by the client that its
        # user stopped the run: served, not lost (the client says "stop"
        # before it closes its connections).
        wait_for(log, "uniperf: served 127.0.0.1 (the initiator stopped the run: interrupted)")
        assert "lost the client" not in open(log.name).read(), open(log.name).read()

        # 3b. Back to back, as `uniperf tune --peer` and scripts run: the
        # next client comes as soon as the last has its records, while the
        # server still ends that run. It is served next, never told "busy".
        # A raw offer comes sooner than a client process could; the offer of
        # step 4 is one the server cannot parse, so the answer is the parser's
        # words if it was served, "busy" if not.
        for attempt in range(4):
            quick = client("lat", "-s", "8", "-n", "50", "-c", "tcp", "--peer",
                           f"127.0.0.1:{port}", "-o", os.devnull, "--quiet")
            assert quick.returncode == 0, (attempt, quick.returncode, quick.stderr)
            answer = broken_offer(port)
            assert "broken.yaml" in answer.get("refused", ""), (attempt, answer)

        # 4. An offer the server cannot parse: refused with the parser's words.
        answer = broken_offer(port)
        assert "broken.yaml" in answer.get("refused", "") and "tests" in answer["refused"], answer
        assert "provenance" not in answer, answer
        wait_for(log, "refused the run of 127.0.0.1")
        assert server.poll() is None, "a refused offer ended the server"
        again = client("lat", "-s", "8", "-n", "100", "-c", "tcp", "--peer", f"127.0.0.1:{port}",
                       "--quiet")
        assert again.returncode == 0, (again.returncode, again.stderr)

        # 5. A signal between clients (the last one's side ended): exit 0.
        # Served: step 1's client, the IPv6 one, the interrupted stream, the
        # four quick ones and the last.
        wait_for(log, "uniperf: served", times=(4 if ipv6_loopback() else 3) + 4)
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0, open(log.name).read()
    finally:
        if server.poll() is None:
            server.kill()

    # 6. One port for a firewall, and the data port the config names.
    port, data_port = free_port(), free_port()
    single, single_log = start_serve(uniperf, os.path.join(work, f"server-{port}"), port, "--once")
    try:
        stream = subprocess.Popen(
            [uniperf, "bw", "--op", "send", "-s", "4K", "-D", "3s", "-c", f"tcp:port={data_port}",
             "--peer", f"127.0.0.1:{port}", "-o", os.devnull, "--quiet"],
            cwd=source_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(single_log, "serving 127.0.0.1")
        held = once_connected(lambda: local_ports(single.pid))
        _, err = stream.communicate(timeout=120)
        assert stream.returncode == 0, (stream.returncode, err)
        established = {p for p, state in held if state == "01"}
        assert len([1 for _, state in held if state == "01"]) >= 3, held  # control, heartbeat, data
        assert established <= {port, data_port}, f"ports {held}: only {port} and {data_port}"
        assert single.wait(timeout=60) == 0, open(single_log.name).read()
        print(f"ok: while serving, every socket of the server was on port {port} (control and "
              f"heartbeat) or {data_port} (data): {sorted(held)}")
    finally:
        if single.poll() is None:
            single.kill()

    # 7. --bind: the client's control and heartbeat connections leave from
    # 127.0.0.2, and tcp's bind_address takes its data connection there too;
    # an address this host does not have is said at once, on either.
    port = free_port()
    bound, bound_log = start_serve(uniperf, os.path.join(work, f"server-{port}"), port, "--once")
    try:
        stream = subprocess.Popen(
            [uniperf, "bw", "--op", "send", "-s", "4K", "-D", "3s", "-c",
             "tcp:bind_address=127.0.0.2", "--peer", f"127.0.0.1:{port}", "--bind", "127.0.0.2",
             "-o", os.devnull, "--quiet"],
            cwd=source_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(bound_log, "serving 127.0.0.2")
        held = once_connected(
            lambda: [(address, state) for address, _, state in local_sockets(stream.pid)])
        _, err = stream.communicate(timeout=120)
        assert stream.returncode == 0, (stream.returncode, err)
        established = [address for address, state in held if state == "01"]
        assert len(established) >= 3, held  # control, heartbeat, data
        assert set(established) == {"127.0.0.2"}, held
        assert bound.wait(timeout=60) == 0, open(bound_log.name).read()
    finally:
        if bound.poll() is None:
            bound.kill()
    start = time.monotonic()
    nowhere = client("lat", "-s", "8", "-n", "100", "-c", "tcp", "--peer", f"127.0.0.1:{port}",
                     "--bind", "192.0.2.1", "--quiet")
    assert nowhere.returncode == 3, (nowhere.returncode, nowhere.stderr)
    assert "cannot bind to 192.0.2.1" in nowhere.stderr, nowhere.stderr
    assert time.monotonic() - start < 10, "a --bind address this host lacks was retried"
    print(f"ok: --bind 127.0.0.2 and tcp's bind_address: every connection of the client left "
          f"from 127.0.0.2 ({len(established)} established); --bind 192.0.2.1 refused at once")

    # 5. --once: the first client's run decides the exit code.
    port = free_port()
    once, once_log = start_serve(uniperf, os.path.join(work, f"server-{port}"), port, "--once")
    try:
        run = client("lat", "-s", "8", "-n", "100", "-c", "tcp", "--peer", f"127.0.0.1:{port}",
                     "--quiet")
        assert run.returncode == 0, (run.returncode, run.stderr)
        assert once.wait(timeout=60) == 0, open(once_log.name).read()
    finally:
        if once.poll() is None:
            once.kill()
    print("ok: a bare server ran a client's own suite and configs, a one-off over IPv6, told a "
          "second client it was busy, refused an offer it could not parse, and ended on a signal "
          "and with --once")
