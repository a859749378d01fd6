// uniperf HTML report: draws the plots from the records in the page's JSON
// data block (the script element with id uniperf-data) with uPlot (inlined
// before this script). Runs once on load; needs no network.
//
// For the headless-browser test the page records what happened on <html>:
//   data-plots-rendered="N"  charts drawn (set last, after every chart)
//   data-bars-rendered="N"   of those, bar charts (tests measured at one size)
//   data-mean-bars-rendered="N"  latency bars drawn at a record's mean (it kept no p50)
//   data-mean-lines-rendered="N"  latency lines over sizes drawn at means (one a config)
//   data-trial-bands-rendered="N"  95% CI bands and whiskers of records of trials
//   data-bandwidth-unit="U"  the unit the bandwidth plots are drawn in (the toggle's)
//   data-timelines-rendered="N"  competing flows' bandwidth-over-time charts
//   data-alone-rendered="N"  latency flows' alone-against-beside-others charts
//   data-completions-rendered="N"  records' completion timelines (trace files)
//   data-samples-rendered="N"  kept latency samples' CDF and over-time charts
//   data-envelopes-rendered="N"  best-fragment envelope charts (one per config
//                            with a fragment sweep over two sizes or more)
//   data-errors="..."        any script error (set by the handler in <head>)
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("uniperf-data").textContent);
  const records = data.records;
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                   "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
  const configs = [...new Set(records.map((r) => r.config))];
  // A config keeps its colour from report to report: the slot comes from a
  // hash of its name (without the " [file]" a multi-file report adds), the
  // next free one when another config of this report took it.
  const colorSlot = new Map();
  {
    const hash = (text) => {
      let h = 2166136261;  // FNV-1a
      for (const c of text) h = Math.imul(h ^ c.codePointAt(0), 16777619) >>> 0;
      return h;
    };
    const used = new Set();
    for (const config of configs) {
      let slot = hash(config.replace(/ \[[^\]]*\]$/, "")) % palette.length;
      for (let i = 0; i < palette.length && used.has(slot); ++i) slot = (slot + 1) % palette.length;
      used.add(slot);
      colorSlot.set(config, slot);
    }
  }
  const colorOf = (config) => palette[colorSlot.get(config)];
  const withAlpha = (hex, alpha) => {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
  };

  function formatSize(bytes) {
    if (bytes == null) return "";
    const units = [["G", 1 << 30], ["M", 1 << 20], ["K", 1 << 10]];
    for (const [unit, scale] of units) {
      if (bytes >= scale && bytes % scale === 0) return bytes / scale + unit;
    }
    return String(bytes);
  }
  function formatNumber(value) {
    if (value == null || !isFinite(value)) return "-";
    if (value >= 1000) return value.toFixed(0);
    if (value >= 100) return value.toFixed(1);
    if (value >= 1) return value.toFixed(2);
    return value.toPrecision(3);
  }
  // Log-axis ticks at 1, 2, 5 x 10^k only: uPlot's default marks every
  // integer multiple, a dense grid that hides the data.
  function decadeSplits(u, axis, min, max) {
    const splits = [];
    for (let k = Math.floor(Math.log10(min)) - 1; k <= Math.ceil(Math.log10(max)); k++) {
      for (const m of [1, 2, 5]) {
        const v = m * Math.pow(10, k);
        if (v >= min * 0.999 && v <= max * 1.001) splits.push(v);
      }
    }
    return splits.length >= 2 ? splits : [min, max];
  }
  // A test of several concurrent flows plots its first flow, the one
  // studied (as the side-by-side table does); the record has them all.
  const subject = (r) => (r.flows && r.flows.length ? r.flows[0] : r);
  const positive = (v) => (v != null && isFinite(v) && v > 0 ? v : null);

  // Bandwidth is drawn in the unit the page's toggle chose: MB/s (10^6
  // B/s, the records' MB_per_s), Gb/s, or MiB/s (2^20 B/s, perftest's).
  const bandwidthUnits = {
    "MB/s": { label: "bandwidth (MB/s = 10⁶ B/s)", fromMB: 1 },
    "Gb/s": { label: "bandwidth (Gb/s = 10⁹ bit/s)", fromMB: 8e-3 },
    "MiB/s": { label: "bandwidth (MiB/s = 2²⁰ B/s)", fromMB: 1e6 / 1048576 },
  };
  // The page may be opened on a unit: report.html#unit=Gb/s.
  let bandwidthUnit = (() => {
    const asked = decodeURIComponent((location.hash.match(/unit=([^&]+)/) || [])[1] || "");
    return asked in bandwidthUnits ? asked : "MB/s";
  })();
  // A record of several trials: the 95% confidence interval of the mean of
  // `key` over its trials (ci95), scaled as its value is; null otherwise.
  const ciOf = (r, key, factor) => {
    const ci = !(r.flows && r.flows.length) && r.trials && r.trials.ci95 && r.trials.ci95[key];
    return ci && isFinite(ci.low) && isFinite(ci.high)
      ? { low: ci.low * factor, high: ci.high * factor } : null;
  };

  // A latency record that kept a mean and no p50 (a native tool's in
  // fidelity.py's records): it is drawn, and its interval read, at the mean.
  const holdsMeanOnly = (r) => {
    const latency = subject(r).latency_us;
    return !!latency && latency.p50 == null && latency.mean != null;
  };

  // What one test plots: latency p50 with a p90..p99 band (the mean where
  // only a mean was kept), or throughput; `ci` is the trials' interval of
  // the plotted value.
  function metricsOf(pattern, oneWay) {
    if (pattern === "latency") {
      return {
        label: oneWay ? "one-way latency (us)" : "round-trip latency (us)",
        unit: "us",
        pick: (r) => subject(r).latency_us,
        ci: (r) => ciOf(r, holdsMeanOnly(r) ? "mean_us" : "p50_us", 1),
      };
    }
    if (pattern === "bandwidth") {
      const unit = bandwidthUnits[bandwidthUnit];
      return { label: unit.label, unit: bandwidthUnit,
               pick: (r) => subject(r).bandwidth && subject(r).bandwidth.MB_per_s * unit.fromMB,
               rail: (rail) => rail.MB_per_s * unit.fromMB,
               ci: (r) => ciOf(r, "MB_per_s", unit.fromMB) };
    }
    return { label: "message rate (Mmsg/s)", unit: "Mmsg/s",
             pick: (r) => subject(r).bandwidth && subject(r).bandwidth.Mmsg_per_s,
             rail: (rail) => rail.Mreq_per_s,
             ci: (r) => ciOf(r, "Mmsg_per_s", 1) };
  }

  // The plot fills its card (two cards a row on a wide window).
  function chartWidth(section) {
    return Math.max(300, (section.clientWidth || 560) - 34);
  }
  const tick = (v) => (v == null ? "" : String(Number(v.toPrecision(3))));

  // A chart's card: a section with its title and a muted detail after it.
  function addSection(container, titleText, detailText) {
    const section = document.createElement("section");
    section.className = "test";
    const title = document.createElement("h3");
    title.textContent = titleText;
    const detail = document.createElement("span");
    detail.className = "detail";
    detail.textContent = detailText;
    title.appendChild(detail);
    section.appendChild(title);
    container.appendChild(section);
    return section;
  }

  // The element a chart draws into, at the end of its card.
  function addPlot(section) {
    const plot = document.createElement("div");
    plot.className = "plot";
    section.appendChild(plot);
    return plot;
  }

  // A record's rails (over a config of several; docs/rails.md), else none.
  const railsOf = (r) => (r && r.rails && !r.flows ? r.rails.per_rail : []);

  function drawTest(test, container) {
    const rows = records.filter((r) => r.test === test);
    const first = rows[0];
    const pattern = first.params.pattern;
    const measured = rows.filter((r) => r.status === "ok" &&
        (pattern === "latency" ? subject(r).latency_us : subject(r).bandwidth));
    const p = first.params;
    const section = addSection(container, test, ` ${p.op} ${p.pattern} ${p.direction}` +
        (pattern === "latency" ? "" : `, window ${p.window} (${p.window_mode})`) +
        `, ${p.completion} completion` +
        (first.flows && first.flows.length > 1
          ? `; flow 1 of ${first.flows.length} concurrent flows` : ""));

    const notRun = rows.filter((r) => r.status !== "ok");
    if (notRun.length) {
      const list = document.createElement("ul");
      list.className = "not-run";
      const seen = new Set();
      for (const r of notRun) {
        const key = r.config + "\u0000" + r.status + "\u0000" + r.reason;
        if (seen.has(key)) continue;
        seen.add(key);
        const item = document.createElement("li");
        item.textContent = `${r.config}: ${r.status.toUpperCase()} — ${r.reason}`;
        list.appendChild(item);
      }
      section.appendChild(list);
    }
    if (!measured.length) return 0;

    const oneWay = measured.every((r) => !subject(r).latency_us || subject(r).latency_us.one_way);
    const metric = metricsOf(pattern, oneWay);
    const sizes = [...new Set(measured.map((r) => r.size))].sort((a, b) => a - b);
    const plotted = configs.filter((c) => measured.some((r) => r.config === c));
    if (sizes.length === 1) {
      // One size: a line over sizes would be a lone dot per config; bars
      // compare the configs at that size.
      drawBars(section, sizes[0], plotted.map((c) => measured.find((r) => r.config === c)),
               pattern, metric);
      barCharts += 1;
      return 1;
    }
    const columns = [sizes];
    const series = [{ label: "size", value: (u, v) => (v == null ? "-" : formatSize(v) + " B") }];
    const bands = [];
    const at = (config, size) => measured.find((r) => r.config === config && r.size === size);
    for (const config of plotted) {
      const color = colorOf(config);
      if (pattern === "latency") {
        const bySize = sizes.map((s) => at(config, s));
        const withMedian = (r) => !holdsMeanOnly(r);
        const value = (key, kept) =>
          bySize.map((r) => (r && kept(r) ? positive(subject(r).latency_us[key]) : null));
        trialBand(config, color, bySize);
        // Sizes where the config kept only a mean: a line of its own, so a
        // mean is never drawn as if it were a median.
        if (bySize.some((r) => r && holdsMeanOnly(r))) {
          columns.push(value("mean", holdsMeanOnly));
          series.push({ label: `${config} mean`, stroke: color, width: 2.5, dash: [10, 4],
                        spanGaps: true, points: { show: true, size: 6, fill: "#fff" },
                        value: (u, v) => formatNumber(v) });
          meanLines += 1;
        }
        if (!bySize.some((r) => r && withMedian(r))) continue;
        const base = columns.length;
        columns.push(value("p99", withMedian), value("p90", withMedian), value("p50", withMedian));
        series.push(
          { label: `${config} p99`, stroke: withAlpha(color, 0.45), width: 1, spanGaps: true,
            points: { show: false }, value: (u, v) => formatNumber(v) },
          { label: `${config} p90`, stroke: withAlpha(color, 0.7), width: 1, dash: [5, 4],
            spanGaps: true, points: { show: false }, value: (u, v) => formatNumber(v) },
          { label: `${config} p50`, stroke: color, width: 2.5, spanGaps: true,
            points: { show: true, size: 6, fill: color }, value: (u, v) => formatNumber(v) });
        // Bands fill from the first series down to the second: the p90..p99
        // tail lighter, the p50..p90 body darker.
        bands.push({ series: [base, base + 1], fill: withAlpha(color, 0.10) });
        bands.push({ series: [base + 1, base + 2], fill: withAlpha(color, 0.18) });
      } else {
        trialBand(config, color, sizes.map((s) => at(config, s)));
        columns.push(sizes.map((s) => { const r = at(config, s); return r ? positive(metric.pick(r)) : null; }));
        series.push({ label: config, stroke: color, width: 2.5, spanGaps: true,
                      points: { show: true, size: 6, fill: color },
                      value: (u, v) => formatNumber(v) });
        // Over several rails (docs/rails.md): what each carried, dashed
        // under the config's total, so one rail and several compare at once.
        const rails = Math.max(0, ...sizes.map((s) => railsOf(at(config, s)).length));
        for (let k = 0; k < rails; k++) {
          columns.push(sizes.map((s) => {
            const rail = railsOf(at(config, s))[k];
            return rail ? positive(metric.rail(rail)) : null;
          }));
          series.push({ label: `${config} rail ${k}`, stroke: withAlpha(color, 0.75 - 0.25 * (k % 2)),
                        width: 1.5, dash: [6, 3 + 3 * k], spanGaps: true,
                        points: { show: false }, value: (u, v) => formatNumber(v) });
          railSeries += 1;
        }
      }
    }
    // The trials' 95% confidence interval of the plotted value (records of
    // --trials N): two thin dotted series, the interval between them shaded.
    function trialBand(config, color, at) {
      const cis = at.map((r) => (r ? metric.ci(r) : null));
      if (!cis.some((c) => c)) return;
      const base = columns.length;
      columns.push(cis.map((c) => (c ? positive(c.high) : null)),
                   cis.map((c) => (c ? positive(c.low) : null)));
      for (const end of ["high", "low"]) {
        series.push({ label: `${config} 95% CI ${end}`, stroke: withAlpha(color, 0.6), width: 1,
                      dash: [2, 3], spanGaps: true, points: { show: false },
                      value: (u, v) => formatNumber(v) });
      }
      bands.push({ series: [base, base + 1], fill: withAlpha(color, 0.14) });
      trialBands += 1;
    }
    drawOverSizes(section, series, bands, columns, metric.label);
    return 1;
  }

  // A chart of `columns` over message size, both axes logarithmic, at the
  // end of `section` (redrawn and resized with the others).
  function drawOverSizes(section, series, bands, columns, yLabel) {
    const plot = addPlot(section);
    const options = {
      width: chartWidth(section),
      height: 320,
      series,
      bands,
      scales: {
        x: { time: false, distr: 3, log: 2 },
        y: { distr: 3, log: 10 },
      },
      axes: [
        { label: "message size (bytes, log scale)", values: (u, splits) => splits.map(formatSize) },
        { label: yLabel + ", log scale", size: 70, splits: decadeSplits,
          values: (u, splits) => splits.map(tick) },
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    charts.push([section, new uPlot(options, columns, plot)]);
  }

  // A test measured at one size: a horizontal bar per config on a linear
  // scale from 0, the value beside it; for latency the bar is p50 and a
  // tick marks p99.
  function drawBars(section, size, rows, pattern, metric) {
    const latency = pattern === "latency";
    const bars = rows.flatMap((r) => {
      const picked = metric.pick(r);
      // A record holding only a mean (a native tool's, in fidelity.py's
      // records) is drawn at its mean and says so.
      const meanOnly = latency && holdsMeanOnly(r);
      if (meanOnly) meanBars += 1;
      const own = latency ? { config: r.config, value: meanOnly ? picked.mean : picked.p50,
                              tail: picked.p99, ci: metric.ci(r), mean: meanOnly }
                          : { config: r.config, value: picked, tail: null, ci: metric.ci(r) };
      // Over several rails, a thinner bar per rail under the total.
      const rails = latency ? [] : railsOf(r).map((rail, k) => {
        railSeries += 1;
        return { config: r.config, label: `rail ${k}`, value: metric.rail(rail), tail: null,
                 ci: null, rail: true };
      });
      return [own, ...rails];
    });
    const rowHeight = 30, left = 150, right = 190, top = 8, bottom = 34;
    const width = chartWidth(section);
    const height = top + rowHeight * bars.length + bottom;
    const max = Math.max(...bars.map((b) => Math.max(b.value || 0, b.tail || 0,
                                                      b.ci ? b.ci.high : 0))) || 1;
    const scale = (v) => ((width - left - right) * Math.max(v || 0, 0)) / max;
    const canvas = document.createElement("canvas");
    const ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.className = "bars";
    const ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    ctx.font = "13px sans-serif";
    ctx.textBaseline = "middle";
    bars.forEach((b, i) => {
      const middle = top + i * rowHeight + rowHeight / 2;
      ctx.fillStyle = "#333";
      ctx.textAlign = "right";
      ctx.fillText(b.rail ? b.label : b.config, left - 8, middle);
      ctx.fillStyle = b.rail ? withAlpha(colorOf(b.config), 0.55) : colorOf(b.config);
      ctx.fillRect(left, middle - (b.rail ? 5 : 9), Math.max(scale(b.value), 1), b.rail ? 10 : 18);
      let text = `${formatNumber(b.value)} ${metric.unit}`;
      let end = left + scale(b.value);
      if (b.ci) {
        // The trials' 95% confidence interval: a whisker across the bar's end.
        const from = left + scale(b.ci.low), to = left + scale(b.ci.high);
        ctx.fillStyle = "#333";
        ctx.fillRect(from, middle - 1, Math.max(to - from, 1), 2);
        ctx.fillRect(from - 1, middle - 5, 2, 10);
        ctx.fillRect(to - 1, middle - 5, 2, 10);
        text += ` ±${formatNumber((b.ci.high - b.ci.low) / 2)}`;
        end = Math.max(end, to);
        trialBands += 1;
      }
      if (b.tail != null) {
        ctx.fillStyle = "#333";
        ctx.fillRect(left + scale(b.tail) - 1, middle - 12, 2, 24);
        text += `, p99 ${formatNumber(b.tail)}`;
        end = Math.max(end, left + scale(b.tail));
      }
      ctx.fillStyle = "#333";
      ctx.textAlign = "left";
      ctx.fillText(text, end + 6, middle);
    });
    ctx.fillStyle = "#666";
    const caption = `${metric.label} at ${formatSize(size)} B` +
                    (latency ? (bars.every((b) => b.mean) ? ": bar mean"
                                : bars.some((b) => b.mean) ? ": bar p50 (mean where only a mean was kept), tick p99"
                                : ": bar p50, tick p99") : "") +
                    (bars.some((b) => b.ci) ? ", whisker the trials' 95% CI" : "") +
                    "; linear scale from 0";
    // Centred under the bars, unless that would cut it: then from the left.
    const centre = left + (width - left - right) / 2;
    const fits = ctx.measureText(caption).width / 2 <= Math.min(centre, width - centre) - 4;
    ctx.textAlign = fits ? "center" : "left";
    ctx.fillText(caption, fits ? centre : 4, height - bottom / 2);
    addPlot(section).appendChild(canvas);
  }

  function provenance() {
    const known = new Set(["schema_version", "status", "reason", "suite", "config", "test", "size",
                           "preset", "params", "emulated", "iterations_run", "corrupted_bytes",
                           "latency_us", "bandwidth", "timestamp", "flows", "schema_minor",
                           "trials", "failure",
                           // one pair of a launched job's: the node-pair section draws them all
                           "placement", "measured",
                           // the competing flows' section draws these
                           "trace", "fairness_jain"]);
    const table = document.getElementById("provenance-table");
    if (!table) return;
    for (const config of configs) {
      const r = records.find((x) => x.config === config);
      const facts = [];
      const add = (key, value) => {
        if (value === undefined || value === null || value === "") return;
        if (typeof value === "object" && !Array.isArray(value)) {
          // One fact per field of a nested object ("provenance.cpu ...").
          for (const sub of Object.keys(value).sort()) add(`${key}.${sub}`, value[sub]);
          return;
        }
        facts.push([key, Array.isArray(value) ? value.map(String).join(", ") : String(value)]);
      };
      // The short line: what ran, on what, where; the warnings counted.
      add("plugin", r.plugin && `${r.plugin.name} ${r.plugin.version}`);
      add("library", r.plugin && r.plugin.library_version);
      add("device", r.plugin && r.plugin.device);
      add("host", r.host);
      add("clock", r.clock && (r.clock.source + (r.clock.ghz ? ` ${r.clock.ghz.toFixed(3)} GHz` : "")));
      const short = facts.length;
      // Folded: whatever else a record carries about where it ran (the
      // provenance of both sides, the warnings, and any field newer schema
      // versions add).
      for (const key of Object.keys(r).sort()) {
        if (!known.has(key) && !["plugin", "clock", "host"].includes(key)) add(key, r[key]);
      }
      const row = table.insertRow();
      const name = row.insertCell();
      name.textContent = config;
      name.style.color = colorOf(config);
      name.className = "config";
      const cell = row.insertCell();
      const fact = ([key, value]) => {
        const span = document.createElement("span");
        span.className = "fact";
        const k = document.createElement("b");
        k.textContent = key + " ";
        span.appendChild(k);
        span.appendChild(document.createTextNode(value));
        return span;
      };
      for (const f of facts.slice(0, short)) cell.appendChild(fact(f));
      const rest = facts.slice(short);
      if (!rest.length) continue;
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      const warnings = (r.warnings || []).length;
      summary.textContent = `${rest.length} more facts` +
          (warnings ? ` · ${warnings} warning${warnings === 1 ? "" : "s"}` : "");
      if (warnings) summary.className = "warned";
      details.appendChild(summary);
      for (const f of rest) details.appendChild(fact(f));
      cell.appendChild(details);
    }
  }

  // A test of concurrent flows with traced flows: each traced flow's
  // bandwidth over time, on the test's shared time axis (ms from the
  // earliest flow start), one line per flow; the title says each flow's
  // share while all ran and the fairness index.
  function drawTimeline(r, container) {
    const flows = (r.flows || []).map((f, k) => [f, k]).filter(([f]) => f.timeline);
    if (!flows.length) return 0;
    const shares = flows.filter(([f]) => f.common)
        .map(([f, k]) => `flow ${k + 1} ${formatNumber(f.common.MB_per_s)} MB/s`);
    const section = addSection(container, `${r.config} / ${r.test} / ${formatSize(r.size)} B`,
        (shares.length ? ` while all ran: ${shares.join(", ")}` : "") +
        (r.fairness_jain != null ? `; Jain fairness ${r.fairness_jain.toFixed(3)}` : ""));
    const binMs = flows[0][0].timeline.bin_ms;
    const bins = Math.max(...flows.map(([f]) => f.timeline.MB_per_s.length));
    const columns = [Array.from({ length: bins }, (_, b) => b * binMs)];
    const series = [{ label: "ms", value: (u, v) => (v == null ? "-" : formatNumber(v) + " ms") }];
    for (const [f, k] of flows) {
      const color = palette[k % palette.length];
      columns.push(Array.from({ length: bins }, (_, b) => f.timeline.MB_per_s[b] ?? null));
      const p = f.params;
      series.push({ label: `flow ${k + 1}: ${p.op} ${p.pattern}` + (p.role === "load" ? " (load)" : ""),
                    stroke: color, width: 2, points: { show: false },
                    value: (u, v) => formatNumber(v) });
    }
    const plot = addPlot(section);
    const options = {
      width: chartWidth(section),
      height: 260,
      series,
      scales: { x: { time: false } },
      axes: [{ label: `time (ms from the first flow's start; bins of ${formatNumber(binMs)} ms)` },
             { label: "MB/s (10⁶ B/s)", size: 70, values: (u, splits) => splits.map(tick) }],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    timelineCharts.push([section, new uPlot(options, columns, plot)]);
    return 1;
  }

  // A latency flow beside others that was also measured alone (`baseline:`):
  // its latency at each recorded percentile, alone and beside the others,
  // on a logarithmic latency axis. This is the latency CDF with its axes
  // swapped, drawn from the quantiles the record keeps (min, p50 ... max).
  const percentiles = [["min", "min"], ["p50", "50%"], ["p90", "90%"], ["p99", "99%"],
                       ["p99_9", "99.9%"], ["p99_99", "99.99%"], ["max", "max"]];
  function drawAlone(r, container) {
    let drawn = 0;
    (r.flows || []).forEach((f, k) => {
      if (!f.alone || !f.latency_us) return;
      const section = addSection(
          container, `${r.config} / ${r.test} / ${formatSize(r.size)} B / flow ${k + 1}`,
          ` beside the others ${f.alone.slowdown_p50.toFixed(2)}× at p50, ` +
          `${f.alone.slowdown_p99.toFixed(2)}× at p99 (alone: ${f.alone.test})`);
      const columns = [percentiles.map((_, i) => i),
                       percentiles.map(([key]) => f.alone.latency_us[key]),
                       percentiles.map(([key]) => f.latency_us[key])];
      // (1.7) Only the iterations that ran while every flow ran: the whole
      // run's also counts those before the last flow started.
      const whileAll = f.common_latency_us;
      if (whileAll) columns.push(percentiles.map(([key]) => whileAll[key]));
      const plot = addPlot(section);
      const us = (u, v) => (v == null ? "-" : formatNumber(v) + " us");
      const options = {
        width: chartWidth(section),
        height: 260,
        series: [{ label: "percentile", value: (u, v) => (v == null ? "-" : percentiles[v][1]) },
                 { label: "alone", stroke: palette[2], width: 2, value: us },
                 { label: "beside the others (whole run)", stroke: palette[1], width: 2, value: us }]
            .concat(whileAll ? [{ label: "while all ran", stroke: palette[3], width: 2, value: us }] : []),
        scales: { x: { time: false }, y: { distr: 3 } },
        axes: [{ label: "percentile", splits: () => percentiles.map((_, i) => i),
                 values: (u, splits) => splits.map((i) => percentiles[i][1]) },
               { label: `latency (us, ${f.latency_us.one_way ? "one-way" : "round trip"})`,
                 size: 70, values: (u, splits) => splits.map(tick) }],
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
      };
      timelineCharts.push([section, new uPlot(options, columns, plot)]);
      drawn += 1;
    });
    return drawn;
  }

  // Each traced request of a record (a sample: at most 1000 per flow and
  // side, spread over the run) at its completion time, ms from the record's
  // first post, against its post-to-completion time: which flow completed
  // what when, and how long each request took while the others ran.
  const completions = data.completions || [];
  const pairOf = (p) => (p ? `${p.initiator.rank}-${p.responder.rank}` : "");
  function drawCompletions(r, container) {
    // A job's pairs measure one (config, test, size) at once: the record's
    // own pair, or its flows' (flows in separate processes). A series from
    // a trace file without pairs (format 2) names none.
    const pairs = new Set([pairOf(r.placement),
                           ...(r.flows || []).map((f) => pairOf(f.placement || r.placement))]);
    const series = completions.filter(
        (c) => c.config === r.config && c.test === r.test && c.size === r.size &&
               (!c.pair || pairs.has(c.pair)));
    if (!series.length) return 0;
    const section = addSection(
        container, `${r.config} / ${r.test} / ${formatSize(r.size)} B: completions`,
        ` ${series.reduce((n, c) => n + c.at_ms.length, 0)} requests drawn`);
    // One x column for all: each series holds its own points, null elsewhere.
    const points = [];
    series.forEach((c, k) => c.at_ms.forEach((x, i) => points.push([x, k, c.took_us[i]])));
    points.sort((a, b) => a[0] - b[0]);
    const columns = [points.map((p) => p[0])];
    const uplotSeries = [{ label: "ms", value: (u, v) => (v == null ? "-" : formatNumber(v) + " ms") }];
    series.forEach((c, k) => {
      columns.push(points.map((p) => (p[1] === k ? p[2] : null)));
      const color = palette[(c.flow - 1) % palette.length];
      const separate = (r.flows || []).some((f) => f.placement);
      uplotSeries.push({ label: `flow ${c.flow}` + (separate && c.pair ? ` on ranks ${c.pair}` : "") +
                                (c.side === "responder" ? " (responder)" : ""),
                         stroke: c.side === "responder" ? withAlpha(color, 0.5) : color,
                         paths: () => null, points: { show: true, space: 0, size: 3 },
                         value: (u, v) => (v == null ? "-" : formatNumber(v) + " us") });
    });
    const plot = addPlot(section);
    const options = {
      width: chartWidth(section),
      height: 260,
      series: uplotSeries,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: "completed at (ms from the first post)" },
             { label: "post to completion (us)", size: 70,
               values: (u, splits) => splits.map(tick) }],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
    };
    timelineCharts.push([section, new uPlot(options, columns, plot)]);
    return 1;
  }

  // A latency flow's kept samples (keep_samples): their CDF, and the
  // latency over the iterations in buckets, median as a line and maximum
  // as points.
  const latencySamples = data.latency_samples || [];
  function drawSamples(r, container) {
    // A job's pairs measure one (config, test, size) at once: this record's
    // (or its separate flows'); a samples file of format 1 names none.
    const pairs = new Set([pairOf(r.placement),
                           ...(r.flows || []).map((f) => pairOf(f.placement || r.placement))]);
    const series = latencySamples.filter(
        (s) => s.config === r.config && s.test === r.test && s.size === r.size &&
               (!s.pair || pairs.has(s.pair)));
    const oneWay = r.latency_us ? r.latency_us.one_way : true;
    const us = (u, v) => (v == null ? "-" : formatNumber(v) + " us");
    const yLabel = `latency (us, ${oneWay ? "one-way" : "round trip"})`;
    series.forEach((s) => {
      const section = addSection(
          container, `${r.config} / ${r.test} / ${formatSize(r.size)} B / flow ${s.flow}` +
                     (s.pair ? ` (ranks ${s.pair})` : ""),
          ` ${s.samples} samples`);
      const color = colorOf(r.config);
      const cdf = {
        width: chartWidth(section),
        height: 260,
        series: [{ label: "latency", value: us },
                 { label: "fraction of samples at or below", stroke: color, width: 2,
                   value: (u, v) => (v == null ? "-" : (100 * v).toFixed(1) + "%") }],
        // Logarithmic where the samples span a decade or more (a tail).
        scales: { x: { time: false,
                       distr: s.cdf_us[s.cdf_us.length - 1] >= 10 * s.cdf_us[0] ? 3 : 1 },
                  y: { range: [0, 1] } },
        axes: [{ label: yLabel, values: (u, splits) => splits.map(tick) },
               { label: "fraction", size: 60,
                 values: (u, splits) => splits.map((v) => `${Math.round(100 * v)}%`) }],
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
      };
      timelineCharts.push([section, new uPlot(cdf, [s.cdf_us, s.cdf_fraction], addPlot(section))]);
      const overTime = {
        width: chartWidth(section),
        height: 260,
        series: [{ label: "iteration" },
                 { label: "median of the bucket", stroke: color, width: 2, value: us },
                 { label: "maximum of the bucket", stroke: withAlpha(color, 0.5),
                   paths: () => null, points: { show: true, space: 0, size: 3 }, value: us }],
        scales: { x: { time: false }, y: { distr: 3 } },
        axes: [{ label: "iteration" },
               { label: yLabel, size: 70, values: (u, splits) => splits.map(tick) }],
        legend: { live: true },
        cursor: { drag: { x: false, y: false } },
      };
      timelineCharts.push([section, new uPlot(
          overTime, [s.bucket_from, s.bucket_p50_us, s.bucket_max_us], addPlot(section))]);
    });
    return series.length;
  }

  // The best-fragment envelopes (docs/pipeline.md), a chart per config: a
  // line per fragment sweep (tests NAME.fragment_F, two fragments or more,
  // as the heatmaps above it) of the most bandwidth any fragment gave at
  // each message size, and dashed beside them whole messages of the same
  // ops (bandwidth tests without fragments, in the colour of their op's
  // first sweep): what fragmenting gains or costs per size, and direct
  // against copy delivery on one plot. The legend names the fragment that
  // gave each point.
  function drawEnvelopes(container) {
    const unit = bandwidthUnits[bandwidthUnit];
    // As the heatmaps': the name without its fragment (NAME.fragment_F.source_S
    // is sweep NAME.source_S).
    const sweepOf = (r) => {
      const at = r.test.indexOf(".fragment_");
      return at > 0 ? r.test.replace(/\.fragment_.*?(?=\.source_|$)/, "") : null;
    };
    const measuredBandwidth = (r) => r.status === "ok" && r.params.pattern === "bandwidth" &&
        !(r.flows && r.flows.length) && r.bandwidth && positive(r.bandwidth.MB_per_s);
    let drawn = 0;
    for (const config of configs) {
      const mine = records.filter((r) => r.config === config && measuredBandwidth(r));
      const sweeps = new Map();  // name: {op, fragments, best: size -> {mb, fragment}}
      for (const r of mine) {
        const name = sweepOf(r);
        if (!name || !r.params.fragment) continue;
        if (!sweeps.has(name)) sweeps.set(name, { op: r.params.op, fragments: new Set(), best: new Map() });
        const sweep = sweeps.get(name);
        sweep.fragments.add(r.params.fragment);
        const held = sweep.best.get(r.size);
        if (!held || r.bandwidth.MB_per_s > held.mb)
          sweep.best.set(r.size, { mb: r.bandwidth.MB_per_s, fragment: r.params.fragment });
      }
      const shown = [...sweeps].filter(([, sweep]) => sweep.fragments.size >= 2);
      const ops = new Set(shown.map(([, sweep]) => sweep.op));
      const wholes = new Map();  // test: {op, bySize: size -> MB/s}
      for (const r of mine) {
        if (sweepOf(r) || r.params.fragment || !ops.has(r.params.op)) continue;
        if (!wholes.has(r.test)) wholes.set(r.test, { op: r.params.op, bySize: new Map() });
        wholes.get(r.test).bySize.set(r.size, r.bandwidth.MB_per_s);
      }
      const sizes = [...new Set(shown.flatMap(([, sweep]) => [...sweep.best.keys()]))]
        .sort((a, b) => a - b);
      if (!shown.length || sizes.length < 2) continue;
      const section = addSection(container, `${config}: best fragment per message size`,
                                 ` ${shown.length} sweep${shown.length > 1 ? "s" : ""}` +
                                 (wholes.size ? `, whole messages dashed` : ""));
      const columns = [sizes];
      const series = [{ label: "size", value: (u, v) => (v == null ? "-" : formatSize(v) + " B") }];
      shown.forEach(([name, sweep], k) => {
        const best = sizes.map((size) => sweep.best.get(size));
        const color = palette[k % palette.length];
        columns.push(best.map((b) => (b ? b.mb * unit.fromMB : null)));
        series.push({ label: `${name} (${sweep.op})`, stroke: color, width: 2.5, spanGaps: true,
                      points: { show: true, size: 6, fill: color },
                      value: (u, v, si, i) => (v == null ? "-"
                        : `${formatNumber(v)} (fragment ${formatSize(best[i].fragment)} B)`) });
      });
      // Whole messages dashed in the colour of the first sweep of their op.
      const colorOfOp = (op) => palette[shown.findIndex(([, sweep]) => sweep.op === op) % palette.length];
      for (const [name, { op, bySize }] of wholes) {
        columns.push(sizes.map((size) => (bySize.has(size) ? bySize.get(size) * unit.fromMB : null)));
        series.push({ label: `${name} (whole messages)`, stroke: colorOfOp(op), width: 1.5, dash: [6, 4],
                      spanGaps: true, points: { show: false }, value: (u, v) => formatNumber(v) });
      }
      drawOverSizes(section, series, [], columns, unit.label);
      drawn += 1;
    }
    return drawn;
  }

  provenance();
  const timelineCharts = [];
  let timelines = 0;
  let alone = 0;
  let completed = 0;
  const timelineContainer = document.getElementById("timelines");
  if (timelineContainer) {
    for (const r of records) timelines += drawTimeline(r, timelineContainer);
    for (const r of records) alone += drawAlone(r, timelineContainer);
    for (const r of records) completed += drawCompletions(r, timelineContainer);
    if (!timelines && !alone && !completed) {
      // No traced concurrent flows: no section (its heading and hint).
      const hint = timelineContainer.previousElementSibling;
      hint.previousElementSibling.remove();
      hint.remove();
      timelineContainer.remove();
    }
  }
  document.documentElement.setAttribute("data-timelines-rendered", String(timelines));
  document.documentElement.setAttribute("data-alone-rendered", String(alone));
  document.documentElement.setAttribute("data-completions-rendered", String(completed));
  let sampled = 0;
  const samplesContainer = document.getElementById("samples");
  if (samplesContainer) {
    for (const r of records) sampled += drawSamples(r, samplesContainer);
    if (!sampled) {
      // No kept samples: no section (its heading and hint).
      const hint = samplesContainer.previousElementSibling;
      hint.previousElementSibling.remove();
      hint.remove();
      samplesContainer.remove();
    }
  }
  document.documentElement.setAttribute("data-samples-rendered", String(sampled));
  const container = document.getElementById("plots");
  const tests = [...new Set(records.map((r) => r.test))];
  const charts = [];
  let rendered = 0;
  let barCharts = 0;
  let meanBars = 0;  // latency bars of records that kept a mean and no p50
  let meanLines = 0;  // latency lines over sizes drawn at means, one a config
  let trialBands = 0;
  let railSeries = 0;  // a rail's line or bar under its config's (records of several rails)
  const envelopeContainer = document.getElementById("envelopes");
  function drawPlots() {
    for (const [, chart] of charts.splice(0)) chart.destroy();
    container.replaceChildren();
    rendered = barCharts = meanBars = meanLines = trialBands = railSeries = 0;
    for (const test of tests) rendered += drawTest(test, container);
    let envelopes = 0;
    if (envelopeContainer) {
      envelopeContainer.replaceChildren();
      envelopes = drawEnvelopes(envelopeContainer);
    }
    document.documentElement.setAttribute("data-envelopes-rendered", String(envelopes));
    document.documentElement.setAttribute("data-bars-rendered", String(barCharts));
    document.documentElement.setAttribute("data-mean-bars-rendered", String(meanBars));
    document.documentElement.setAttribute("data-mean-lines-rendered", String(meanLines));
    document.documentElement.setAttribute("data-trial-bands-rendered", String(trialBands));
    document.documentElement.setAttribute("data-rail-series-rendered", String(railSeries));
    document.documentElement.setAttribute("data-bandwidth-unit", bandwidthUnit);
    document.documentElement.setAttribute("data-plots-rendered", String(rendered));
  }
  // The bandwidth unit's toggle, before the plots (only when some test
  // measured bandwidth): choosing one redraws them.
  if (records.some((r) => r.params && r.params.pattern === "bandwidth")) {
    const toggle = document.createElement("p");
    toggle.className = "unit-toggle";
    toggle.append("Bandwidth in ");
    for (const unit of Object.keys(bandwidthUnits)) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = unit;
      button.dataset.unit = unit;
      button.setAttribute("aria-pressed", String(unit === bandwidthUnit));
      button.addEventListener("click", () => {
        bandwidthUnit = unit;
        for (const b of toggle.querySelectorAll("button"))
          b.setAttribute("aria-pressed", String(b.dataset.unit === unit));
        drawPlots();
      });
      toggle.append(button, " ");
    }
    container.before(toggle);
  }
  drawPlots();
  window.addEventListener("resize", () => {
    for (const [section, chart] of charts) chart.setSize({ width: chartWidth(section), height: 320 });
    for (const [section, chart] of timelineCharts)
      chart.setSize({ width: chartWidth(section), height: 260 });
  });
})();
