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
                 the title, and the reserve is really drawn on while they run
                 (HugePages_Free below HugePages_Total, polled).
Exit 77 (ctest: skipped) where huge pages cannot be reserved here."""
import json, os, re, subprocess, sys, tempfile, threading, time

uniperf, source_dir = sys.argv[1], sys.argv[2]
SETTING = "/proc/sys/vm/nr_hugepages"
CONFIGS = ["tcp", "ucx-shm"]


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            name, value = line.split(":", 1)
            if name == key:
                return int(value.split()[0])
    raise KeyError(key)


def reserve(n):
    with open(SETTING, "w") as f:
        f.write(str(n))
    got = meminfo("HugePages_Total")
    if got < n:
        raise OSError(f"asked for {n} huge pages, the kernel gave {got}")


def run(work, config, extra, name):
    out = os.path.join(work, name + ".jsonl")
    command = [uniperf, "bw", "-c", os.path.join(source_dir, "configs", config + ".yaml"),
               "--op", "send", "-s", "4K", "--window", "16", "--validate", "--pages", "huge",
               "--timeout", "60", "-o", out] + extra
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - started
    assert done.returncode == 0, f"{name}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    records = [json.loads(line) for line in open(out)]
    assert records, f"{name}: no record"
    return records, done.stdout, seconds


def main():
    try:
        with open(SETTING) as f:
            original = int(f.read())
        reserve(original)  # can we write it at all?
    except (OSError, ValueError) as e:
        print(f"SKIP: cannot set {SETTING} here ({e}); run as root")
        return 77
    try:
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

                reserve(16)
                total = meminfo("HugePages_Total")
                lowest = [total]
                stop = threading.Event()

                def watch():
                    while not stop.is_set():
                        lowest[0] = min(lowest[0], meminfo("HugePages_Free"))
                        time.sleep(0.02)

                watcher = threading.Thread(target=watch)
                watcher.start()
                try:
                    records, table, _ = run(work, config, ["-D", "2s"], f"{config}-huge")
                finally:
                    stop.set()
                    watcher.join()
                for r in records:
                    assert r["status"] == "ok", r
                    assert r["params"]["pages"] == "huge", r["params"]
                    assert r.get("corrupted_bytes", 0) == 0, r
                assert "huge pages" in table, table
                used = total - lowest[0]
                assert used >= 2, f"{config}: {used} huge pages were in use during the run"
                mbps = records[0]["bandwidth"]["MB_per_s"]
                print(f"{config}: 16 reserved: ok, {used} in use at most, {mbps:.0f} MB/s")
                assert meminfo("HugePages_Free") == total, "huge pages still in use after the run"
    finally:
        reserve(original)
    print(f"{SETTING} given back: {original}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
