#!/usr/bin/env python3
"""Odd parameters over a real transport, as a property: every combination
of knobs a user can write either runs with valid payloads or is SKIPPED or
refused with a reason; never an error, a crash or a hang.

The same sweep as tests/unit/odd_parameters_test.cpp (which runs 400 cases
over the engine and the fake transport), smaller: a seeded sample of
combinations of window 1, signal_every 1 and equal to the window, post_list
above the window, rx_depth 1, sizes 1, 3, 4095, 4097, 65537 and 8 MiB,
bidirectional with event completion, window_ack, single buffers, duration
with margin, trials and concurrent flows, over configs/ucx-shm.yaml (one-
and two-sided ops, events) or configs/tcp.yaml where UCX is not built.

Each case is first its own suite file, given to `uniperf validate`: refused
(exit 2) with the file, line and knob named, or accepted. The accepted cases
then run as the tests of one suite in one local-pair `uniperf run`, payload
validation on, each size bounded by --timeout (a hang becomes an ERROR
record, which breaks the property). For every record: status ok with 0
corrupted bytes, iterations run and finite positive rates; or skipped with
a reason. The run must exit 0.

ODD_SEED repeats a sample (the default is fixed); ODD_CASES sets its size;
ODD_CONFIG=tcp (a config's name) runs it over another config.
"""
import json, math, os, random, subprocess, sys, tempfile, time

uniperf, source_dir = sys.argv[1], sys.argv[2]
SEED = int(os.environ.get("ODD_SEED", "7"))
CASES = int(os.environ.get("ODD_CASES", "60"))
SIZES = ["1", "3", "4095", "4097", "65537", "8M"]


def draw_flow(rng, coherent):
    """A flow's keys; `coherent` keeps to the suite's rules (latency is a
    uni ping-pong of window 1, post_list divides window and signal_every,
    ...), otherwise anything may be drawn and the suite reader must refuse
    it with a reason or the engine run it."""
    op = rng.choice(["send", "send", "write", "write_imm", "read"])
    pattern = rng.choice(["latency", "bandwidth", "message_rate"])
    latency = pattern == "latency"
    window = rng.choice([1, 1, 2, 6, 16])
    if coherent and latency:
        window = 1
    keys = {"op": op, "pattern": pattern}
    if not latency or rng.random() < 0.2:
        keys["window"] = window
    signal_every = rng.choice([max(1, window // 2), 1, window] + ([] if coherent else [window + 1]))
    keys["signal_every"] = signal_every
    post_list = rng.choice([1, window, 2 * window])
    if coherent and (window % post_list or signal_every % post_list):
        post_list = 1
    if post_list != 1 or rng.random() < 0.3:
        keys["post_list"] = post_list
    if rng.random() < 0.35:
        keys["rx_depth"] = 1
        if not coherent and rng.random() < 0.3:
            keys["rx_replenish"] = 2
    if (not coherent or not latency) and rng.random() < 0.35:
        keys["direction"] = "bi"
    if rng.random() < 0.3:
        keys["completion"] = "event"
    if (not coherent or not latency) and rng.random() < 0.3:
        keys["window_mode"] = "window_ack"
    if rng.random() < 0.3:
        keys["buffers"] = "single"
    if rng.random() < 0.15:
        keys["endpoints"] = 2
    if rng.random() < 0.15:
        keys["cq_moderation"] = window
    return keys


def flow_text(keys):
    return "{" + ", ".join(f"{k}: {v}" for k, v in keys.items()) + "}"


def draw_case(rng, index):
    coherent = rng.random() < 0.8
    sizes = [rng.choice(SIZES)]
    if rng.random() < 0.4:
        second = rng.choice(SIZES)
        if second not in sizes:
            sizes.append(second)
    big = "8M" in sizes
    lines = [f"  - name: case{index}", f"    sizes: [{', '.join(sizes)}]"]
    length = rng.choice(["margin", "iterations", "duration"] + ([] if coherent else ["bad margin"]))
    if length == "margin":
        lines += ["    duration: 0.2s", "    margin: 0.05s"]
    elif length == "iterations":
        lines.append(f"    iterations: {6 if big else 200}")
    elif length == "duration":
        lines.append("    duration: 0.2s")
    else:
        lines += ["    duration: 0.2s", "    margin: 0.1s"]  # refused: twice the margin
    # The built-in warm-up (message_rate: 1000 messages) of 8 MiB messages,
    # both ways, is gigabytes: seconds of copying that prove nothing here.
    if rng.random() < 0.5 or big:
        lines.append(f"    warmup: {1 if big else 20}")
    if rng.random() < 0.25:
        lines.append("    trials: 2")
    if rng.random() < 0.2:
        lines.append("    flows:")
        lines.append(f"      - {flow_text(draw_flow(rng, coherent))}")
        lines.append(f"      - {flow_text(draw_flow(rng, coherent))}")
    else:
        lines += [f"    {k}: {v}" for k, v in draw_flow(rng, coherent).items()]
    return "\n".join(lines) + "\n"


def suite_of(tests):
    return "suite: odd\ndefaults:\n  validate: true\ntests:\n" + "".join(tests)


def violation(r):
    status = r.get("status")
    if status == "error":
        return "error: " + r.get("reason", "")
    if status == "skipped":
        return "" if r.get("reason") else "skipped without a reason"
    if status != "ok":
        return f"status {status!r}"
    if r.get("corrupted_bytes", 0) != 0:
        return f"{r['corrupted_bytes']} corrupted bytes"
    if not r.get("iterations_run"):
        return "ok with no iterations run"

    def finite_positive(v):
        return isinstance(v, (int, float)) and math.isfinite(v) and v > 0

    lat, bw = r.get("latency_us"), r.get("bandwidth")
    if not lat and not bw:
        return "ok with neither latency nor bandwidth"
    if lat:
        if not lat.get("samples"):
            return "a latency without samples"
        if not finite_positive(lat.get("mean")) or not (0 <= lat["min"] <= lat["max"]):
            return f"an insane latency {lat}"
    if bw:
        if not bw.get("messages"):
            return "a bandwidth of no messages"
        if not all(finite_positive(bw.get(k)) for k in ("MB_per_s", "Mmsg_per_s", "seconds")):
            return f"an insane bandwidth {bw}"
    for flow in r.get("flows", []):
        if flow.get("corrupted_bytes", 0):
            return "a flow with corrupted bytes"
        if not flow.get("iterations_run"):
            return "a flow that ran no iterations"
    return ""


def available(config):
    listing = subprocess.run([uniperf, "list"], capture_output=True, text=True, timeout=60).stdout
    plugin = [l.split()[1] for l in open(config) if l.startswith("plugin:")][0]
    return any(l.startswith(plugin + " ") and " available" in l for l in listing.splitlines())


def main():
    config = os.path.join(source_dir, "configs", os.environ.get("ODD_CONFIG", "ucx-shm") + ".yaml")
    if not available(config):
        config = os.path.join(source_dir, "configs", "tcp.yaml")
    rng = random.Random(SEED)
    cases = [draw_case(rng, i) for i in range(CASES)]
    problems = []
    with tempfile.TemporaryDirectory() as work:
        accepted = []
        refused = 0
        for i, case in enumerate(cases):
            path = os.path.join(work, f"case{i}.yaml")
            with open(path, "w") as f:
                f.write(suite_of([case]))
            check = subprocess.run([uniperf, "validate", path], capture_output=True, text=True,
                                   timeout=60)
            if check.returncode == 0:
                accepted.append(case)
            elif check.returncode == 2 and f"case{i}.yaml:" in check.stdout + check.stderr:
                refused += 1  # file:line: knob: why
            else:
                problems.append(f"case{i}: validate exit {check.returncode}: {check.stdout}"
                                f"{check.stderr}\n"
                                f"{case}")
        suite = os.path.join(work, "odd.yaml")
        with open(suite, "w") as f:
            f.write(suite_of(accepted))
        results = os.path.join(work, "odd.jsonl")
        started = time.monotonic()
        run = subprocess.run([uniperf, "run", suite, "-c", config, "-o", results, "--quiet",
                              "--timeout", "30"], capture_output=True, text=True, timeout=900)
        took = time.monotonic() - started
        if run.returncode != 0:
            problems.append(f"the run exited {run.returncode}: {run.stderr[-3000:]}")
        records = [json.loads(l) for l in open(results)] if os.path.exists(results) else []
        text_of = {f"case{c.split('case', 1)[1].split()[0]}": c for c in accepted}
        tally = {"ok": 0, "skipped": 0}
        for r in records:
            v = violation(r)
            if v:
                problems.append(f"{r['test']} size {r['size']}: {v}\n{text_of.get(r['test'], '')}")
            elif r["status"] in tally:
                tally[r["status"]] += 1
        expected = sum(len(c.split("sizes: [", 1)[1].split("]", 1)[0].split(",")) for c in accepted)
        if len(records) != expected:
            problems.append(f"{len(records)} records for {expected} sizes")
    for p in problems:
        print("FAIL " + p)
    print(f"{os.path.basename(config)}, seed {SEED}: {len(cases)} cases, {refused} refused by "
          f"validate; of {len(accepted)} run: {tally['ok']} sizes ok, {tally['skipped']} skipped, "
          f"{len(problems)} problems, {took:.0f} s")
    # The sample must measure, not only refuse or skip.
    if tally["ok"] < len(accepted) // 3:
        print("FAIL too few sizes ran: the sample no longer exercises the engine")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
