"""What the e2e scripts that run uniperf as a server share: a free port and
a `uniperf serve` that is ready for clients. Imported from the scripts' own
directory (Python puts it first on the path)."""
import os, random, socket, subprocess, time


def can_listen_on(port):
    """Whether a listener could bind `port` of 127.0.0.1 now (SO_REUSEADDR,
    as uniperf's listeners: a closed connection's TIME_WAIT does not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    """A port for a test's --listen, below Linux's ephemeral range (32768 and
    up by default), where no outgoing connection of a test running beside
    this one can take it before the server listens (a port the kernel hands
    out for port 0 lies in that range), and free of listeners as of now."""
    draw = random.Random()  # seeded by the OS: tests started together draw apart
    for _ in range(1000):
        port = draw.randrange(20000, 32000)
        if can_listen_on(port):
            return port
    raise AssertionError("no port of 20000-31999 on 127.0.0.1 could be bound")


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
