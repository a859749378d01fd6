#!/usr/bin/env python3
"""The report views from real records, read back by independent parsers.

Usage: check_views.py UNIPERF SAMPLE.jsonl OUTDIR

Runs `uniperf report SAMPLE --csv --junit --html` and checks the files with
python's csv, xml and html parsers against the records themselves: a row and a
testcase per record, exact skipped / error counts, the HTML self-contained
(no external script, style or image) with the records in its JSON block.
"""
import csv
import html.parser
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    uniperf, sample, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    records = [json.loads(line) for line in open(sample, encoding="utf-8") if line.strip()]
    csv_path = os.path.join(outdir, "report.csv")
    junit_path = os.path.join(outdir, "report.xml")
    html_path = os.path.join(outdir, "report.html")
    run = subprocess.run(
        [uniperf, "report", sample, "--csv", csv_path, "--junit", junit_path, "--html", html_path],
        capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        fail(f"uniperf report exited {run.returncode}: {run.stderr}")
    table = run.stdout.splitlines()
    configs = list(dict.fromkeys(r["config"] for r in records))
    rows = list(dict.fromkeys((r["test"], r["size"]) for r in records))
    # header, a row per (test, size), the ratio legend when several configs
    expected_lines = 1 + len(rows) + (1 if len(configs) > 1 else 0)
    if len(table) != expected_lines:
        fail(f"table has {len(table)} lines, expected {expected_lines}:\n{run.stdout}")
    for config in configs[1:]:
        if f"{config}/{configs[0]}" not in table[0]:
            fail(f"no ratio column {config}/{configs[0]} in: {table[0]}")

    # CSV: a row per record, in order, the fields as the records say.
    with open(csv_path, newline="", encoding="utf-8") as f:
        csv_rows = list(csv.DictReader(f))
    if len(csv_rows) != len(records):
        fail(f"CSV has {len(csv_rows)} rows for {len(records)} records")
    for row, record in zip(csv_rows, records):
        for column, value in (("config", record["config"]), ("test", record["test"]),
                              ("size", str(record["size"])), ("status", record["status"])):
            if row[column] != value:
                fail(f"CSV {column} {row[column]!r} != record's {value!r}")
        if "latency_us" in record and float(row["latency_p50_us"]) != record["latency_us"]["p50"]:
            fail(f"CSV p50 {row['latency_p50_us']} != {record['latency_us']['p50']}")
        if "bandwidth" in record and float(row["MB_per_s"]) != record["bandwidth"]["MB_per_s"]:
            fail(f"CSV MB/s {row['MB_per_s']} != {record['bandwidth']['MB_per_s']}")

    # JUnit: well-formed, a testcase per record, exact counts.
    root = ET.parse(junit_path).getroot()
    cases = root.findall("./testsuite/testcase")
    skipped = sum(r["status"] == "skipped" for r in records)
    errors = sum(r["status"] == "error" for r in records)
    if root.tag != "testsuites" or len(cases) != len(records):
        fail(f"JUnit: {root.tag} with {len(cases)} testcases for {len(records)} records")
    if int(root.get("tests")) != len(records) or int(root.get("skipped")) != skipped or \
            int(root.get("errors")) != errors:
        fail(f"JUnit counts {root.attrib} != tests {len(records)} skipped {skipped} errors {errors}")
    if len(root.findall("./testsuite/testcase/skipped")) != skipped:
        fail("JUnit: <skipped> elements do not match the skipped records")
    if len(root.findall("./testsuite/testcase/error")) != errors:
        fail("JUnit: <error> elements do not match the error records")
    if [s.get("name") for s in root.findall("./testsuite")] != configs:
        fail("JUnit: a testsuite per config, in order")
    for case, record in zip(cases, records):
        if case.get("classname") != record["config"] or \
                case.get("name") != f"{record['test']}/{record['size']}":
            fail(f"JUnit testcase {case.attrib} does not name {record['config']} "
                 f"{record['test']}/{record['size']}")

    # HTML: self-contained, the records in the JSON block.
    class Scan(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.external = []
            self.data_blocks = []
            self.scripts = 0
            self._in_data = False

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "script":
                self.scripts += 1
                if attrs.get("src"):
                    self.external.append(attrs["src"])
                self._in_data = attrs.get("type") == "application/json"
                if self._in_data:
                    self.data_blocks.append("")
            for key in ("src", "href"):
                if tag in ("link", "img", "iframe", "script") and attrs.get(key):
                    self.external.append(attrs[key])

        def handle_endtag(self, tag):
            if tag == "script":
                self._in_data = False

        def handle_data(self, data):
            if self._in_data:
                self.data_blocks[-1] += data

    with open(html_path, encoding="utf-8") as f:
        page = f.read()
    scan = Scan()
    scan.feed(page)
    if scan.external:
        fail(f"HTML loads external resources: {scan.external}")
    if len(scan.data_blocks) != 1:
        fail(f"HTML has {len(scan.data_blocks)} JSON data blocks, expected 1")
    data = json.loads(scan.data_blocks[0])
    if len(data["records"]) != len(records):
        fail(f"HTML data has {len(data['records'])} records for {len(records)}")
    if "uPlot" not in page or scan.scripts < 3:
        fail("HTML lacks the embedded chart library or its scripts")
    # Deterministic: the same input gives the same bytes.
    again = os.path.join(outdir, "again.html")
    subprocess.run([uniperf, "report", sample, "--quiet", "--html", again], check=True, timeout=60)
    with open(again, encoding="utf-8") as f:
        if f.read() != page:
            fail("two reports from the same records differ")
    # The same configs in two files (a baseline and a new run): a column each,
    # named by the file, with ratios against the first file's first config.
    base = os.path.join(outdir, "base.jsonl")
    new = os.path.join(outdir, "new.jsonl")
    for path in (base, new):
        with open(sample, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
            dst.write(src.read())
    both = subprocess.run([uniperf, "report", base, new], capture_output=True, text=True,
                          timeout=60, check=True).stdout.splitlines()
    for config in configs:
        for label in ("base", "new"):
            if f"{config} [{label}]" not in both[0]:
                fail(f"no column '{config} [{label}]' in: {both[0]}")
    if both[0].count("/") != 2 * len(configs) - 1 or len(both) != 1 + len(rows) + 1:
        fail(f"two files of {len(configs)} configs: {2 * len(configs) - 1} ratio columns "
             f"expected:\n" + "\n".join(both))
    print(f"ok: {len(records)} records, {len(configs)} configs, {len(rows)} table rows, "
          f"{skipped} skipped, {errors} errors")


if __name__ == "__main__":
    main()
