#!/usr/bin/env python3
"""A listening server is an attack surface: whatever connects to its port (an
HTTP probe, garbage, a huge length prefix, a client that says nothing, a
uniperf of another suite) is refused with a message naming it, learns
nothing about the host (no provenance before the peer identified itself),
and the server goes on waiting; then a real peer runs the suite with it."""
import os, socket, struct, subprocess, sys, tempfile, time
from servers import free_port

uniperf, source_dir = sys.argv[1], sys.argv[2]
config = os.path.join(source_dir, "configs/tcp.yaml")
SUITE = "suite: listener\ntests:\n  - {name: lat, op: send, pattern: latency, sizes: [8], iterations: 100}\n"
OTHER = SUITE.replace("listener", "another")


def probe(port, payload, linger=0.5):
    """Sends `payload`, returns what the server sent back before closing."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        if payload:
            s.sendall(payload)
        time.sleep(linger)
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server already refused and closed
            pass
        s.settimeout(40)  # the server's wait for a first frame is bounded
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        return got


with tempfile.TemporaryDirectory() as work:
    suite, other = os.path.join(work, "suite.yaml"), os.path.join(work, "other.yaml")
    open(suite, "w").write(SUITE)
    open(other, "w").write(OTHER)
    port = free_port()
    server = subprocess.Popen([uniperf, "run", suite, "-c", config, "--listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        probes = {
            "http": b"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
            "garbage": os.urandom(64),
            "huge length": b"upf\x01" + struct.pack("!I", 0xFFFFFFFF),
            "silence": b"",
        }
        for name, payload in probes.items():
            got = probe(port, payload)
            assert got == b"", f"{name}: the server sent {got[:200]!r}"
            assert server.poll() is None, f"{name} ended the server: {server.stderr.read()}"
        # A uniperf client of another suite: refused on both sides, and the
        # server still waits.
        wrong = subprocess.run([uniperf, "run", other, "-c", config, "--peer", f"127.0.0.1:{port}"],
                               capture_output=True, text=True, timeout=120)
        assert wrong.returncode == 3, (wrong.returncode, wrong.stderr)
        assert "another suite" in wrong.stderr, wrong.stderr
        assert server.poll() is None, "a mismatched client ended the server"
        results = os.path.join(work, "r.jsonl")
        client = subprocess.run([uniperf, "run", suite, "-c", config, "--peer",
                                 f"127.0.0.1:{port}", "-o", results],
                                capture_output=True, text=True, timeout=300)
        assert client.returncode == 0, (client.returncode, client.stderr)
        _, err = server.communicate(timeout=60)
        assert server.returncode == 0, (server.returncode, err)
        refused = [l for l in err.splitlines() if "refused a connection from 127.0.0.1" in l]
        # The probes, the wrong suite, and the readiness check's connection.
        assert len(refused) == len(probes) + 2, err
        assert any("not a uniperf process" in l for l in refused), err
        print(f"ok: {len(refused)} bad clients refused, the server then served a real peer")
    finally:
        if server.poll() is None:
            server.kill()
