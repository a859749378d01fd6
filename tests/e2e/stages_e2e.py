#!/usr/bin/env python3
"""`uniperf stages` end to end (docs/pipeline.md, "Stage costs"): the copy
stage on this host and the registration stage of real plugins (kernel TCP,
UCX shared memory, libfabric shm), a config whose device is missing, and
huge pages whether or not the kernel has some reserved. Asserts the file's
shape and what each row counts; prints the figures, asserts none. Then bad
input: a bad size list is refused with exit 2, naming the flag, and leaves
no file."""
import json, os, subprocess, sys, tempfile

uniperf, source_dir = sys.argv[1], sys.argv[2]
configs = [os.path.join(source_dir, "configs", c + ".yaml") for c in ["tcp", "ucx-shm", "ofi-shm"]]
missing = "verbs:device=uniperf_no_such_device"
sizes = [4096, 65536, 1 << 20]

with tempfile.TemporaryDirectory() as work:
    out = os.path.join(work, "stages.json")
    command = [uniperf, "stages", "--pages", "both", "-s", "4K..1M x16", "--trials", "3",
               "--repeats", "4", "--trial-ms", "1", "-o", out]
    for c in configs + [missing]:
        command += ["-c", c]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    print(run.stdout)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
    doc = json.load(open(out))
    assert os.listdir(work) == ["stages.json"], os.listdir(work)

    assert doc["schema"] == "1.0" and doc["sizes"] == sizes, doc["sizes"]
    assert doc["uniperf"]["version"] and doc["host"]["host"], "provenance missing"
    huge_skipped = {(s["stage"], s.get("config")) for s in doc["skipped"] if s["pages"] == "huge"}
    for s in doc["skipped"]:
        assert s["pages"] == "huge" and "huge pages:" in s["reason"], s
    huge = ("copy", None) not in huge_skipped
    pages = ["normal", "huge"] if huge else ["normal"]

    copies = doc["copy"]
    assert [(r["pages"], r["size"]) for r in copies] == [(p, s) for p in pages for s in sizes]
    for r in copies:
        assert r["trials"] == 3 and r["copies_per_trial"] >= 1, r
        assert r["ci95"][0] <= r["MB_per_s"] <= r["ci95"][1] and r["MB_per_s"] > 0, r

    sections = doc["configs"]
    assert [s["name"] for s in sections] == ["tcp", "ucx-shm", "ofi-shm", missing]
    assert "registration" not in sections[3] and sections[3]["unavailable"], sections[3]
    assert f"config {missing}: unavailable: " in run.stdout, run.stdout
    for s in sections[:3]:
        assert s["device"] and s["library"], s
        rows = s["registration"]
        assert [(r["pages"], r["size"]) for r in rows] == \
            [(p, z) for p in pages for z in sizes], (s["name"], rows)
        for r in rows:
            assert r["repeats"] == 4, r
            for call in ["register_us", "release_us", "again_us"]:
                t = r[call]
                assert 0 <= t["min"] <= t["p50"] <= t["p99"] <= t["max"], (s["name"], call, t)
    print(f"huge pages: {'measured' if huge else 'skipped: ' + doc['skipped'][0]['reason']}")

    bad = subprocess.run([uniperf, "stages", "-s", "4K..nonsense", "-o", out + ".bad"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2, (bad.returncode, bad.stderr)
    assert "--sizes '4K..nonsense'" in bad.stderr, bad.stderr
    assert not os.path.exists(out + ".bad")
    bad = subprocess.run([uniperf, "stages", "-c", "nosuchplugin:x=1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 0 and "unavailable:" in bad.stdout, (bad.returncode, bad.stdout)
print("stages_e2e: ok")
