"""What the e2e scripts that run uniperf as a server share: a free port and
a `uniperf serve` that is ready for clients. Imported from the scripts' own
directory (Python puts it first on the path)."""
import os, socket, subprocess, time


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on (as of now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(uniperf, directory, listen, *extra, seconds=60):
    """`uniperf serve --listen LISTEN EXTRA...` in `directory` (made here,
    so it holds no suite or config), once it accepts connections. Returns
    (Popen, log): its standard output and error go to `directory`/log."""
    os.mkdir(directory)
    log = open(os.path.join(directory, "log"), "w+")
    server = subprocess.Popen([os.path.abspath(uniperf), "serve", "--listen", str(listen), *extra],
                              cwd=directory, stdout=log, stderr=log, text=True)
    port = int(str(listen).rsplit(":", 1)[-1])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, log
        except OSError:
            assert server.poll() is None, open(log.name).read()
            time.sleep(0.2)
    server.kill()
    raise AssertionError(f"the server never listened on {listen}:\n{open(log.name).read()}")
