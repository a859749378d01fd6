#!/usr/bin/env python3
"""`uniperf stages` end to end (docs/pipeline.md, "Stage costs"): the copy
stage on this host and the registration stage of real plugins (kernel TCP,
UCX shared memory, libfabric shm), a config whose device is missing, and
huge pages whether or not the kernel has some reserved. Asserts the file's
shape and what each row counts; prints the figures, asserts none. Then bad
input: a bad size list is refused with exit 2, naming the flag, and leaves
no file. Then the HTML report's tables of the file (`uniperf report
--stages`), and a file it cannot read refused, naming the field."""
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

    # The HTML report draws the file as tables beside a run's records.
    records = os.path.join(work, "r.jsonl")
    bw = subprocess.run([uniperf, "bw", "--plugin", "tcp", "--op", "send", "-s", "4K", "-n", "100",
                         "-o", records], capture_output=True, text=True, timeout=120)
    assert bw.returncode == 0, bw.stderr
    html = os.path.join(work, "report.html")
    report = subprocess.run([uniperf, "report", records, "--stages", out, "--html", html, "--quiet"],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    text = open(html).read()
    assert '<h2 id="stage-costs">Stage costs</h2>' in text
    assert text.count('<table class="stage-costs">') == 1 + 3, "copy, then one per config"
    for name in ["tcp", "ucx-shm", "ofi-shm"]:
        assert f"<caption>{name} (" in text, name
    assert f"{missing}: unavailable: " in text
    for size in sizes:
        assert f'<th class="num">{size}</th>' in text, size
    # A file it cannot read is refused, naming the file and the field; no report is written.
    broken = os.path.join(work, "broken.json")
    doc["copy"][0]["MB_per_s"] = "fast"
    json.dump(doc, open(broken, "w"))
    refused = subprocess.run([uniperf, "report", records, "--stages", broken, "--html",
                              html + ".2", "--quiet"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused
    assert "broken.json: --stages: copy[0].MB_per_s is missing or not a number" in refused.stderr, \
        refused.stderr
    assert not os.path.exists(html + ".2")
    # A number JSON cannot hold (found by fuzzing: it ended the process).
    with open(broken, "w") as f:
        f.write('{"schema": "1.0", "copy": [{"size": 1e999}]}')
    refused = subprocess.run([uniperf, "report", records, "--stages", broken, "--html",
                              html + ".2", "--quiet"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "number overflow" in refused.stderr, refused
    assert not os.path.exists(html + ".2")
    for leftover in ["r.jsonl", "report.html", "broken.json"]:
        os.remove(os.path.join(work, leftover))

    bad = subprocess.run([uniperf, "stages", "-s", "4K..nonsense", "-o", out + ".bad"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2, (bad.returncode, bad.stderr)
    assert "--sizes '4K..nonsense'" in bad.stderr, bad.stderr
    assert not os.path.exists(out + ".bad")
    bad = subprocess.run([uniperf, "stages", "-c", "nosuchplugin:x=1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 0 and "unavailable:" in bad.stdout, (bad.returncode, bad.stdout)
print("stages_e2e: ok")
