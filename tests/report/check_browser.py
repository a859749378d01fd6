#!/usr/bin/env python3
"""The HTML report in a real headless browser, with no network.

Usage: check_browser.py UNIPERF SAMPLE.jsonl OUTDIR

Writes OUTDIR/report.html from the sample records, loads it in headless
chromium (a fresh profile, every network path off, host names resolving
nowhere), and checks from the DOM after the scripts ran: no script error and
no console message, every test with a measurement drew its plot (the page
sets data-plots-rendered; uPlot draws a canvas per plot), the side-by-side
table has a row per (test, size). Then takes OUTDIR/report.png (1200x1600)
for people to look at; CI keeps the build directory's copy.
Exits 77 (skipped) when no chromium is installed.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def find_browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, profile, extra, url):
    command = [browser, "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-extensions", "--disable-default-apps", "--no-default-browser-check",
               "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
               "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
               "--user-data-dir=" + profile, "--virtual-time-budget=10000"] + extra + [url]
    if os.geteuid() == 0:
        command.insert(1, "--no-sandbox")  # chromium refuses to run as root with its sandbox
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def main():
    uniperf, sample, outdir = sys.argv[1:4]
    browser = find_browser()
    if browser is None:
        print("SKIP: no chromium installed")
        sys.exit(77)
    os.makedirs(outdir, exist_ok=True)
    page = os.path.join(outdir, "report.html")
    screenshot = os.path.join(outdir, "report.png")
    for stale in (page, screenshot):
        if os.path.exists(stale):
            os.remove(stale)
    subprocess.run([uniperf, "report", sample, "--quiet", "--html", page], check=True, timeout=60)

    records = [json.loads(line) for line in open(sample, encoding="utf-8") if line.strip()]
    def measured(r):
        subject = r["flows"][0] if r.get("flows") else r  # concurrent flows: the first is plotted
        return r["status"] == "ok" and (
            "latency_us" in subject if r["params"]["pattern"] == "latency" else "bandwidth" in subject)
    expected_plots = len({r["test"] for r in records if measured(r)})
    # A test measured at one size is drawn as bars, one per config.
    sizes_of = {}
    for r in records:
        if measured(r):
            sizes_of.setdefault(r["test"], set()).add(r["size"])
    expected_bars = sum(1 for sizes in sizes_of.values() if len(sizes) == 1)
    expected_rows = len({(r["test"], r["size"]) for r in records})
    # Latency records that kept a mean and no p50 (fidelity.py's rows that
    # compare means): their bars are drawn at the mean, and the comparison
    # table heads their rows "mean".
    def mean_only(r):
        latency = r.get("latency_us") or {}
        return measured(r) and not r.get("flows") and r["params"]["pattern"] == "latency" and \
            latency.get("p50") is None and latency.get("mean") is not None
    expected_mean_bars = sum(1 for r in records if mean_only(r) and len(sizes_of[r["test"]]) == 1)
    mean_tests = {r["test"] for r in records if mean_only(r)}
    # Over several sizes, a config that kept only means somewhere gets a
    # line of its own drawn at them.
    expected_mean_lines = sum(
        len({r["config"] for r in records if r["test"] == test and mean_only(r)})
        for test, sizes in sizes_of.items() if len(sizes) > 1)
    # Records of --trials N: their 95% CI drawn, a band per (test, config)
    # on a line chart, a whisker per bar.
    # A latency record that kept only a mean has its interval at the mean,
    # as the text table's holds_mean_only reads it.
    ci_key = {"latency": "p50_us", "bandwidth": "MB_per_s", "message_rate": "Mmsg_per_s"}
    def has_ci(r):
        key = "mean_us" if mean_only(r) else ci_key[r["params"]["pattern"]]
        return measured(r) and not r.get("flows") and key in r.get("trials", {}).get("ci95", {})
    expected_trial_bands = sum(
        len({r["config"] for r in records if r["test"] == test and has_ci(r)})
        if len(sizes) > 1 else sum(1 for r in records if r["test"] == test and has_ci(r))
        for test, sizes in sizes_of.items())
    # Records over several rails: a line per rail and config under the
    # config's own on a line chart, a bar per rail under its bar.
    def rails(r):
        return len(r.get("rails", {}).get("per_rail", [])) \
            if measured(r) and not r.get("flows") and r["params"]["pattern"] != "latency" else 0
    expected_rail_series = sum(
        len({(r["config"], k) for r in records if r["test"] == test for k in range(rails(r))})
        if len(sizes) > 1 else sum(rails(r) for r in records if r["test"] == test)
        for test, sizes in sizes_of.items())
    # Concurrent flows with traced flows: a bandwidth-over-time chart each.
    expected_timelines = sum(1 for r in records
                             if any("timeline" in f for f in r.get("flows", [])))
    # Latency flows measured alone too (baseline:): a percentile chart each.
    expected_alone = sum(1 for r in records for f in r.get("flows", [])
                         if "alone" in f and "latency_us" in f)
    # The run's trace file beside the sample, if any: a completion timeline
    # per record it has rows of.
    trace = sample[:-len(".jsonl")] + ".trace.csv" if sample.endswith(".jsonl") else None
    traced = set()
    if trace and os.path.exists(trace):
        with open(trace, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("#") and not line.startswith("config,"):
                    config, test, size = line.split(",")[:3]
                    traced.add((config, test, int(size)))
    expected_completions = len({(r["config"], r["test"], r["size"]) for r in records} & traced)
    # The run's samples file beside the sample, if any: a CDF and an
    # over-time chart per kept series of a record.
    samples = sample[:-len(".jsonl")] + ".samples.csv" if sample.endswith(".jsonl") else None
    kept = set()
    if samples and os.path.exists(samples):
        import csv
        with open(samples, encoding="utf-8") as f:
            rows = csv.reader(line for line in f if not line.startswith("#"))
            next(rows)  # the header
            for config, test, size, flow, _, _ in rows:
                kept.add((config, test, int(size), int(flow)))
    expected_samples = len({k for k in kept
                            if (k[0], k[1], k[2]) in {(r["config"], r["test"], r["size"])
                                                      for r in records}})
    # Fragment sweeps (tests NAME.fragment_F of two fragments or more) over
    # two message sizes or more: a best-fragment envelope chart per config.
    sweep_cells = {}
    for r in records:
        at = r["test"].find(".fragment_")
        if measured(r) and not r.get("flows") and r["params"]["pattern"] == "bandwidth" and \
                at > 0 and r["params"].get("fragment"):
            cell = sweep_cells.setdefault((r["config"], r["test"][:at]), (set(), set()))
            cell[0].add(r["params"]["fragment"])
            cell[1].add(r["size"])
    envelope_sizes = {}
    for (config, _), (fragments, sizes) in sweep_cells.items():
        if len(fragments) >= 2:
            envelope_sizes.setdefault(config, set()).update(sizes)
    expected_envelopes = sum(1 for sizes in envelope_sizes.values() if len(sizes) >= 2)
    url = "file://" + os.path.abspath(page)

    with tempfile.TemporaryDirectory(prefix="uniperf-chromium-") as profile:
        run = chromium(browser, profile, ["--dump-dom"], url)
    if run.returncode != 0:
        fail(f"chromium --dump-dom exited {run.returncode}:\n{run.stderr[-3000:]}")
    dom = run.stdout
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line]
    if console:
        fail("console messages:\n" + "\n".join(console))
    root = re.search(r"<html[^>]*>", dom)
    if root is None:
        fail("no <html> element in the dumped DOM:\n" + dom[:2000])
    errors = re.search(r'data-errors="([^"]*)"', root.group(0))
    if errors:
        fail("script errors: " + errors.group(1))
    rendered = re.search(r'data-plots-rendered="(\d+)"', root.group(0))
    if rendered is None or int(rendered.group(1)) != expected_plots:
        fail(f"plots rendered {rendered.group(1) if rendered else None}, expected {expected_plots}")
    rail_series = re.search(r'data-rail-series-rendered="(\d+)"', root.group(0))
    if rail_series is None or int(rail_series.group(1)) != expected_rail_series:
        fail(f"rail series rendered {rail_series.group(1) if rail_series else None}, "
             f"expected {expected_rail_series}")
    envelopes = re.search(r'data-envelopes-rendered="(\d+)"', root.group(0))
    if envelopes is None or int(envelopes.group(1)) != expected_envelopes:
        fail(f"best-fragment envelope charts rendered {envelopes.group(1) if envelopes else None}, "
             f"expected {expected_envelopes}")
    bars = re.search(r'data-bars-rendered="(\d+)"', root.group(0))
    if bars is None or int(bars.group(1)) != expected_bars:
        fail(f"bar charts rendered {bars.group(1) if bars else None}, expected {expected_bars}")
    timelines = re.search(r'data-timelines-rendered="(\d+)"', root.group(0))
    if timelines is None or int(timelines.group(1)) != expected_timelines:
        fail(f"timelines rendered {timelines.group(1) if timelines else None}, "
             f"expected {expected_timelines}")
    alone = re.search(r'data-alone-rendered="(\d+)"', root.group(0))
    if alone is None or int(alone.group(1)) != expected_alone:
        fail(f"alone-against-beside charts rendered {alone.group(1) if alone else None}, "
             f"expected {expected_alone}")
    completions = re.search(r'data-completions-rendered="(\d+)"', root.group(0))
    if completions is None or int(completions.group(1)) != expected_completions:
        fail(f"completion timelines rendered {completions.group(1) if completions else None}, "
             f"expected {expected_completions}")
    bands = re.search(r'data-trial-bands-rendered="(\d+)"', root.group(0))
    if bands is None or int(bands.group(1)) != expected_trial_bands:
        fail(f"trial CI bands and whiskers drawn {bands.group(1) if bands else None}, "
             f"expected {expected_trial_bands}")
    sampled = re.search(r'data-samples-rendered="(\d+)"', root.group(0))
    if sampled is None or int(sampled.group(1)) != expected_samples:
        fail(f"latency sample series drawn {sampled.group(1) if sampled else None}, "
             f"expected {expected_samples}")
    if expected_samples == 0 and 'id="latency-samples"' in dom:
        fail("a latency-samples section without any kept samples")
    if expected_timelines + expected_alone + expected_completions == 0 and \
            'id="competing-flows"' in dom:
        fail("a competing-flows section without any traced concurrent flows")
    canvases = dom.count("<canvas")
    if canvases < (expected_plots + expected_timelines + expected_alone + expected_completions +
                   2 * expected_samples + expected_envelopes):
        fail(f"{canvases} canvases for {expected_plots} plots, {expected_timelines} timelines "
             f"and {expected_alone} alone-against-beside charts")
    table = re.search(r'<table id="comparison">(.*?)</table>', dom, re.S)
    rows = table.group(1).count("<tr") - 1 if table else -1
    if rows != expected_rows:
        fail(f"comparison table has {rows} rows, expected {expected_rows}")
    mean_bars = re.search(r'data-mean-bars-rendered="(\d+)"', root.group(0))
    if mean_bars is None or int(mean_bars.group(1)) != expected_mean_bars:
        fail(f"bars drawn at a mean {mean_bars.group(1) if mean_bars else None}, "
             f"expected {expected_mean_bars}")
    mean_lines = re.search(r'data-mean-lines-rendered="(\d+)"', root.group(0))
    if mean_lines is None or int(mean_lines.group(1)) != expected_mean_lines:
        fail(f"lines drawn at means {mean_lines.group(1) if mean_lines else None}, "
             f"expected {expected_mean_lines}")
    for test in mean_tests:
        row = re.search(r"<tr[^>]*><td>" + re.escape(test) + r"</td>(.*?)</tr>", table.group(1), re.S)
        if row is None or not re.search(r"mean (one-way|RTT) us", row.group(1)) or \
                "p50" in row.group(1):
            fail(f"the comparison table does not head {test}, which kept a mean, as a mean: "
                 f"{row.group(0) if row else None}")
    provenance = re.search(r'<table id="provenance-table">(.*?)</table>', dom, re.S)
    configs = len({r["config"] for r in records})
    if provenance is None or provenance.group(1).count("<tr") != configs:
        fail(f"provenance table lacks a row per config ({configs})")
    # One short line per config (plugin, library, device, host, clock); the
    # rest folded in a <details>, which took half the first screen unfolded.
    unfolded = re.sub(r"<details.*?</details>", "", provenance.group(1), flags=re.S)
    shown = unfolded.count('class="fact"')
    if shown > 5 * configs:
        fail(f"{shown} provenance facts unfolded for {configs} configs (at most 5 each)")

    # The bandwidth unit's toggle: the page opened on Gb/s draws every plot
    # again in it, without an error.
    if any(r["params"]["pattern"] == "bandwidth" for r in records):
        if 'class="unit-toggle"' not in dom:
            fail("no bandwidth unit toggle on a page with bandwidth tests")
        with tempfile.TemporaryDirectory(prefix="uniperf-chromium-") as profile:
            gbit = chromium(browser, profile, ["--dump-dom"], url + "#unit=Gb/s").stdout
        gbit_root = re.search(r"<html[^>]*>", gbit).group(0)
        if 'data-bandwidth-unit="Gb/s"' not in gbit_root or "data-errors" in gbit_root or \
                f'data-plots-rendered="{expected_plots}"' not in gbit_root:
            fail("the page opened on Gb/s: " + gbit_root)

    # A config keeps its colour from report to report: the last config's
    # records alone, as a report of their own, draw it in the same colour.
    colours = dict((name, colour) for colour, name in re.findall(
        r'<td class="config" style="color: ([^"]+);">([^<]+)</td>', provenance.group(1)))
    if len(colours) != configs:
        fail(f"the provenance table names {sorted(colours)}, not the {configs} configs")
    last = records[-1]["config"]
    alone_jsonl = os.path.join(outdir, "one-config.jsonl")
    alone_page = os.path.join(outdir, "one-config.html")
    with open(alone_jsonl, "w", encoding="utf-8") as out:
        for r in records:
            if r["config"] == last:
                out.write(json.dumps(r) + "\n")
    subprocess.run([uniperf, "report", alone_jsonl, "--quiet", "--html", alone_page], check=True,
                   timeout=60)
    with tempfile.TemporaryDirectory(prefix="uniperf-chromium-") as profile:
        alone_dom = chromium(browser, profile, ["--dump-dom"], "file://" +
                             os.path.abspath(alone_page)).stdout
    alone_colour = re.search(r'<td class="config" style="color: ([^"]+);">', alone_dom)
    if alone_colour is None or alone_colour.group(1) != colours[last]:
        fail(f"{last} is drawn {alone_colour.group(1) if alone_colour else None} on its own, "
             f"{colours[last]} beside the others")

    with tempfile.TemporaryDirectory(prefix="uniperf-chromium-") as profile:
        shot = chromium(browser, profile, ["--hide-scrollbars", "--window-size=1200,1600",
                                           "--screenshot=" + os.path.abspath(screenshot)], url)
    if shot.returncode != 0 or not os.path.exists(screenshot):
        fail(f"no screenshot (chromium exited {shot.returncode}):\n{shot.stderr[-3000:]}")
    with open(screenshot, "rb") as f:
        header = f.read(24)
    if header[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    width, height = struct.unpack(">II", header[16:24])
    if (width, height) != (1200, 1600):
        fail(f"screenshot is {width}x{height}, expected 1200x1600")
    print(f"ok: {expected_plots} plots ({expected_bars} as bars, {expected_mean_bars} bars at a "
          f"mean), {expected_timelines} timelines, "
          f"{expected_alone} alone-against-beside, {expected_completions} completion timelines, "
          f"{expected_samples} latency sample series, {expected_trial_bands} trial CI bands, "
          f"{expected_rail_series} rail series, {expected_envelopes} best-fragment envelopes, "
          f"{canvases} canvases, "
          f"{rows} table rows, no errors; "
          f"screenshot {screenshot}")


if __name__ == "__main__":
    main()
