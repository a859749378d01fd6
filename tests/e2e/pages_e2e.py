#!/usr/bin/env python3
"""`pages: huge` end to end (docs/pipeline.md, "Huge pages for the tests' own
buffers"): a flow's buffers on MAP_HUGETLB pages, in a real local pair over
kernel TCP and UCX shared memory.

Reserves huge pages for the run (vm.nr_hugepages, as root) and gives the
setting back at the end, whatever happens:
  none reserved  every record SKIPPED on both sides, naming the setting;
  one reserved   a local pair needs one per side: the side that cannot have
                 its page SKIPs the test on both, naming huge pages (and
                 which side: "peer: "), and the run ends promptly;
  enough         validated runs are ok, say `pages: huge` in the record and
                 the title, and both sides' processes really hold huge pages
                 while they run (their smaps, polled).
Other tests may run beside this one, and UCX in them takes reserved huge
pages where it finds some (UCX_*_HUGETLB_MODE=try): so what the run's own
processes hold is counted, never the machine's totals, and far more pages
are reserved than the run needs.
Exit 77 (ctest: skipped) where huge pages cannot be reserved here."""
import json, os, re, subprocess, sys, tempfile, threading, time

uniperf, source_dir = sys.argv[1], sys.argv[2]
SETTING = "/proc/sys/vm/nr_hugepages"
CONFIGS = ["tcp", "ucx-shm"]
PLENTY = 64  # huge pages reserved for a run that needs a few (128 MiB)


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            name, value = line.split(":", 1)
            if name == key:
                return int(value.split()[0])
    raise KeyError(key)


class Shortfall(OSError):
    """The kernel could not find the contiguous memory for the pages."""


def reserve(n):
    """Sets vm.nr_hugepages to n. On a busy machine memory may be too
    fragmented for n contiguous 2 MiB pages: compacted and asked again
    before it counts as a shortfall (the kernel's state, not uniperf's)."""
    for compactions in range(3):
        if compactions:
            with open("/proc/sys/vm/compact_memory", "w") as f:
                f.write("1")
            time.sleep(0.5)
        with open(SETTING, "w") as f:
            f.write(str(n))
        got = meminfo("HugePages_Total")
        if got >= n:
            return
    raise Shortfall(f"asked for {n} huge pages, the kernel gave {got} (compacted twice)")


def children(pid):
    """The processes whose parent is `pid` (the local pair's responder)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    # pid (comm) state ppid ...: comm may hold spaces.
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass  # it ended meanwhile
    return found


def hugetlb_kb(pid):
    """Huge-page memory process `pid` has mapped and touched, in kB."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(("Private_Hugetlb:", "Shared_Hugetlb:")):
                    total += int(line.split()[1])
    except OSError:
        pass  # it ended
    return total


def run(work, config, extra, name, held=None):
    """Runs a local pair; with `held`, a dict, polls what each of its
    processes holds in huge pages meanwhile (pid -> most kB seen)."""
    out = os.path.join(work, name + ".jsonl")
    command = [uniperf, "bw", "-c", os.path.join(source_dir, "configs", config + ".yaml"),
               "--op", "send", "-s", "4K", "--window", "16", "--validate", "--pages", "huge",
               "--timeout", "60", "-o", out] + extra
    started = time.monotonic()
    pair = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            for pid in [pair.pid] + children(pair.pid):
                held[pid] = max(held.get(pid, 0), hugetlb_kb(pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch) if held is not None else None
    if watcher:
        watcher.start()
    try:
        stdout, stderr = pair.communicate(timeout=120)
    finally:
        stop.set()
        if watcher:
            watcher.join()
        if pair.poll() is None:
            pair.kill()
    seconds = time.monotonic() - started
    assert pair.returncode == 0, f"{name}: exit {pair.returncode}\n{stdout}\n{stderr}"
    records = [json.loads(line) for line in open(out)]
    assert records, f"{name}: no record"
    return records, stdout, seconds


def main():
    try:
        with open(SETTING) as f:
            original = int(f.read())
        reserve(original)  # can we write it at all?
    except (OSError, ValueError) as e:
        print(f"SKIP: cannot set {SETTING} here ({e}); run as root")
        return 77
    try:
        return check_every_config()
    except Shortfall as e:
        print(f"SKIP: {e}")
        return 77
    finally:
        reserve(original)
        print(f"{SETTING} given back: {original}")


def check_every_config():
    with tempfile.TemporaryDirectory() as work:
        for config in CONFIGS:
            reserve(0)
            records, _, _ = run(work, config, ["-n", "200"], f"{config}-none")
            for r in records:
                assert r["status"] == "skipped", r
                assert "vm.nr_hugepages is 0" in r["reason"], r["reason"]
            print(f"{config}: none reserved: SKIPPED: {records[0]['reason']}")

            # One page: the first side to map takes it, the other cannot.
            reserve(1)
            records, _, seconds = run(work, config, ["-n", "200"], f"{config}-one")
            for r in records:
                assert r["status"] == "skipped", r
                # Whichever side lost the race says it, the other
                # side's prefixed "peer: ".
                assert re.match(r"(peer: )?huge pages: ", r["reason"]), r["reason"]
            assert seconds < 30, f"{config}: the refused run took {seconds:.1f} s"
            print(f"{config}: one reserved: SKIPPED in {seconds:.1f} s: {records[0]['reason']}")

            # A side needs a page or two; UCX beside it may take some.
            reserve(PLENTY)
            held = {}
            records, table, _ = run(work, config, ["-D", "2s"], f"{config}-huge", held)
            for r in records:
                assert r["status"] == "ok", r
                assert r["params"]["pages"] == "huge", r["params"]
                assert r.get("corrupted_bytes", 0) == 0, r
            assert "huge pages" in table, table
            holders = sorted(kb // 1024 for kb in held.values() if kb >= 2048)
            assert len(holders) >= 2, f"{config}: MiB of huge pages held, per process: {held}"
            mbps = records[0]["bandwidth"]["MB_per_s"]
            print(f"{config}: {PLENTY} reserved: ok; the two sides held {holders} MiB of huge "
                  f"pages; {mbps:.0f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
