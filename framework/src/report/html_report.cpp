#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "report/fragment_grid.hpp"
#include "report/pair_matrix.hpp"
#include "report/stage_costs_view.hpp"
#include "report/table.hpp"
#include "report/vendor_assets.hpp"

namespace uniperf::report {
namespace {

/// Inlined script and style must not close their element early; the
/// embedded files are checked once, not trusted.
std::string_view inline_safe(std::string_view text, std::string_view closing, const char* what) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find(closing) != std::string::npos) {
    throw std::logic_error(std::string("embedded ") + what + " contains " + std::string(closing));
  }
  return text;
}

/// A ratio cell's class: "better" / "worse" beyond a 5 % band, by whether
/// the row's metric is a latency (lower is better) or a rate.
std::string ratio_class(const std::string& ratio, const std::string& metric) {
  char* end = nullptr;
  const double value = std::strtod(ratio.c_str(), &end);
  if (end == ratio.c_str()) return "note";
  const bool lower_is_better = metric.find("us") != std::string::npos;
  const bool better = lower_is_better ? value < 0.95 : value > 1.05;
  const bool worse = lower_is_better ? value > 1.05 : value < 0.95;
  return better ? "num better" : worse ? "num worse" : "num";
}

/// A number, or a number "±" its confidence interval's half-width.
bool is_number(const std::string& text) {
  const std::string value = text.substr(0, text.find(" ±"));
  return !value.empty() && value.find_first_not_of("0123456789.e+-") == std::string::npos;
}

void write_table(std::ostream& out, const std::vector<Record>& records) {
  ComparisonTable table;
  for (const auto& r : records) table.add(r);
  const auto lines = table.cells();
  const std::size_t configs = (lines.front().size() - 3 + 1) / 2;
  out << "<div class=\"card table-wrap\"><table id=\"comparison\">\n<thead><tr>";
  for (std::size_t i = 0; i < lines.front().size(); ++i) {
    out << "<th" << (i == 1 || i >= 3 ? " class=\"num\"" : "") << ">"
        << html_escape(lines.front()[i]) << "</th>";
  }
  out << "</tr></thead>\n<tbody>\n";
  std::string previous_test;
  for (std::size_t row = 1; row < lines.size(); ++row) {
    const auto& line = lines[row];
    const bool first = line[0] != previous_test && row != 1;
    previous_test = line[0];
    out << (first ? "<tr class=\"first-of-test\">" : "<tr>");
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::string cls;
      if (i == 1) cls = "num";
      if (i >= 3 && i < 3 + configs) cls = is_number(line[i]) ? "num" : "note";
      if (i >= 3 + configs) cls = ratio_class(line[i], line[2]);
      out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << ">" << html_escape(line[i])
          << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
  const std::string legend = table.legend();
  if (!legend.empty()) out << "<p class=\"hint\">" << html_escape(legend) << "</p>\n";
  out << "</div>\n";
}

}  // namespace

std::string script_safe_json(const nlohmann::json& value) {
  // Reasons carry exception texts: bytes that are not UTF-8 are replaced
  // instead of failing the whole report.
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

/// The node-pair matrices as heatmaps: a cell's colour runs from green at
/// the best pair to red at the suspect rule's bound and beyond.
void write_matrices(std::ostream& out, const std::vector<Record>& records,
                    const SuspectRule& rule) {
  const auto matrices = build_matrices(records, rule);
  if (matrices.empty()) return;
  out << "<h2>Node pairs</h2>\n<p class=\"hint\">"
      << html_escape(fmt::format(
             "Each pairs: all test of a launched job, one matrix per size: green is the best "
             "pair, red a latency {}x the lowest or a bandwidth {}x the highest (the suspect "
             "rule). Marked with ! are the suspects their retest alone confirmed.",
             rule.latency_factor, rule.bandwidth_fraction))
      << "</p>\n";
  for (const PairMatrix& m : matrices) {
    out << "<div class=\"card table-wrap\"><table class=\"pair-matrix\">\n<caption>"
        << html_escape(fmt::format("{} / {} {} B: {}, {} ranks", m.config, m.test, m.size, m.metric,
                                   m.ranks))
        << "</caption>\n<thead><tr><th></th>";
    for (int j = 0; j < m.ranks; ++j) out << "<th class=\"num\">" << j << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (int i = 0; i < m.ranks; ++i) {
      out << "<tr><th>" << i << " <small>" << html_escape(m.names[i]) << "</small></th>";
      for (int j = 0; j < m.ranks; ++j) {
        const auto& cell = m.cells[i][j];
        if (i == j || !cell || m.best <= 0) {
          out << "<td class=\"num\">" << (i == j ? "" : "?") << "</td>";
          continue;
        }
        // How far from the best, as a share of the way to the rule's bound.
        const double ratio = m.lower_is_better ? *cell / m.best : m.best / *cell;
        const double bound =
            m.lower_is_better ? rule.latency_factor : 1 / std::max(rule.bandwidth_fraction, 1e-9);
        const double share = std::clamp((ratio - 1) / std::max(bound - 1, 1e-9), 0.0, 1.0);
        const auto pair = std::make_pair(std::min(i, j), std::max(i, j));
        const bool suspect = std::find(m.suspect_pairs.begin(), m.suspect_pairs.end(), pair) !=
                             m.suspect_pairs.end();
        out << fmt::format(
            "<td class=\"num{}\" style=\"background: hsl({:.0f}, 70%, 82%)\">{:.4g}{}</td>",
            suspect ? " suspect" : "", 120 * (1 - share), *cell, suspect ? "!" : "");
      }
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
    if (!m.cleared_pairs.empty()) {
      std::string pairs;
      for (const auto& [i, j] : m.cleared_pairs) pairs += fmt::format(" {}-{}", i, j);
      out << "<p class=\"hint\">Cleared by their retest alone:" << html_escape(pairs) << "</p>\n";
    }
    out << "</div>\n";
  }
}

/// Each fragment sweep as a heatmap of MB/s over (message size, fragment):
/// a cell's colour is its share of its row's best, green at the best and
/// red at half of it or less; the last column is the envelope.
void write_fragment_grids(std::ostream& out, const std::vector<Record>& records) {
  const auto grids = build_fragment_grids(records);
  if (grids.empty()) return;
  out << "<h2 id=\"fragment-sweeps\">Fragment sweeps</h2>\n<p class=\"hint\">Tests swept over "
         "fragment sizes (docs/pipeline.md): MB/s per message size (rows) and fragment "
         "(columns). A cell is green at its row's best and red at half of it or less; the "
         "best per size is in bold and, with its fragment, in the last column: the "
         "best-fragment envelope. Plotted first, per config: each sweep's envelope against "
         "message size, and whole messages of the same op dashed beside them.</p>\n"
         "<div id=\"envelopes\"></div>\n";
  for (const FragmentGrid& g : grids) {
    out << "<div class=\"card table-wrap\"><table class=\"fragment-grid\">\n<caption>"
        << html_escape(fmt::format("{} / {}: MB/s by message size and fragment", g.config, g.test))
        << "</caption>\n<thead><tr><th>size \\ fragment</th>";
    for (const std::uint32_t f : g.fragments) out << "<th class=\"num\">" << f << "</th>";
    out << "<th>best</th></tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < g.sizes.size(); ++i) {
      out << "<tr><th class=\"num\">" << g.sizes[i] << "</th>";
      const auto& row = g.mb_per_s[i];
      for (std::size_t k = 0; k < row.size(); ++k) {
        if (!row[k]) {
          out << "<td class=\"num\"></td>";
          continue;
        }
        const double best = *row[*g.best[i]];
        const double share = best > 0 ? std::clamp((*row[k] / best - 0.5) / 0.5, 0.0, 1.0) : 0;
        out << fmt::format(
            "<td class=\"num\" style=\"background: hsl({:.0f}, 70%, 82%)\">{}{:.4g}{}</td>",
            120 * share, k == *g.best[i] ? "<b>" : "", *row[k], k == *g.best[i] ? "</b>" : "");
      }
      if (g.best[i]) {
        out << "<td>" << fmt::format("{} B: {:.4g}", g.fragments[*g.best[i]], *row[*g.best[i]])
            << "</td>";
      } else {
        out << "<td></td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody></table></div>\n";
  }
}

}  // namespace

void write_html(std::ostream& out, const std::vector<Record>& records, std::string_view title,
                const SuspectRule& rule, const nlohmann::json& completions,
                const nlohmann::json& latency_samples, const nlohmann::json& stage_costs) {
  std::vector<std::string> configs;
  std::set<std::string> timestamps;
  nlohmann::json data = {
      {"title", title},
      {"records", nlohmann::json::array()},
      {"completions", completions.is_array() ? completions : nlohmann::json::array()},
      {"latency_samples", latency_samples.is_array() ? latency_samples : nlohmann::json::array()}};
  for (const auto& r : records) {
    if (std::find(configs.begin(), configs.end(), r.config) == configs.end()) {
      configs.push_back(r.config);
    }
    if (!r.timestamp.empty()) timestamps.insert(r.timestamp);
    data["records"].push_back(to_json(r));
  }
  const auto count = [&](Status status) {
    return std::count_if(records.begin(), records.end(),
                         [&](const Record& r) { return r.status == status; });
  };

  out << "<!DOCTYPE html>\n<html lang=\"en\" data-plots-rendered=\"0\">\n<head>\n"
      << "<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_escape(title)
      << " — uniperf report</title>\n"
      // First of all: any script error is kept where a headless browser's
      // --dump-dom shows it.
      << "<script>window.addEventListener(\"error\", function (e) {"
         " var root = document.documentElement;"
         " root.setAttribute(\"data-errors\", (root.getAttribute(\"data-errors\") || \"\") +"
         " e.message + \" (\" + (e.lineno || 0) + \":\" + (e.colno || 0) + \"); \"); });</script>\n"
      << "<style>\n"
      << inline_safe(vendor::uplot_css(), "</style", "uPlot stylesheet") << "\n</style>\n"
      << "<style>\n"
      << inline_safe(vendor::report_css(), "</style", "report stylesheet") << "</style>\n"
      << "</head>\n<body>\n<header>\n<h1>" << html_escape(title) << "</h1>\n<p>"
      << fmt::format("{} records over {} config{}: {} ok, {} skipped, {} error{}", records.size(),
                     configs.size(), configs.size() == 1 ? "" : "s", count(Status::ok),
                     count(Status::skipped), count(Status::error),
                     count(Status::error) == 1 ? "" : "s");
  if (!timestamps.empty()) {
    out << html_escape(
        fmt::format(" · measured {} to {}", *timestamps.begin(), *timestamps.rbegin()));
  }
  out << "</p>\n</header>\n<main>\n";

  out << "<h2>Where it ran</h2>\n<div class=\"card table-wrap\"><table id=\"provenance-table\">"
         "</table></div>\n";
  out << "<h2>Plots</h2>\n<p class=\"hint\">Per test, one colour per config against message "
         "size, both axes logarithmic (a test measured at one size: a bar per config, linear "
         "from 0). Latency: the thick line is the median (p50), the dashed "
         "line p90, the thin line p99; the shaded bands span p50–p90 and p90–p99; where a "
         "record kept only a mean (a native tool's), a dashed line with open points or a bar "
         "drawn at that mean. Bandwidth "
         "in MB/s (10<sup>6</sup> B/s), Gb/s or MiB/s (2<sup>20</sup> B/s) as chosen below "
         "(report.html#unit=Gb/s opens on one), message rate in Mmsg/s. Records of several "
         "trials (--trials) add the 95% confidence interval of the trials' mean: a band "
         "between dotted lines (latency: around p50), a whisker across a bar. A config of "
         "several rails (docs/rails.md) adds what each rail carried: a dashed line or a "
         "thinner bar per rail under the config's total. Hover a plot for the values.</p>\n"
         "<div id=\"plots\"></div>\n";
  out << "<h2 id=\"competing-flows\">Competing flows</h2>\n<p class=\"hint\">Tests of "
         "concurrent flows with traced flows (docs/traces.md): each flow's bandwidth over time, "
         "all on one time axis, and what each got while all ran; and a latency flow measured "
         "alone too (baseline:), its latency at each percentile alone, beside the others over its "
         "whole run and while every flow ran (the latency CDF, axes swapped); and where the run's "
         "trace file was read, "
         "each traced request at its completion time with its post-to-completion time (at "
         "most 1000 per flow and side, spread over the run).</p>\n<div "
         "id=\"timelines\"></div>\n";
  out << "<h2 id=\"latency-samples\">Latency samples</h2>\n<p class=\"hint\">Latency tests "
         "that kept every sample (keep_samples, the run's .samples.csv): the CDF of the "
         "samples, and the latency over the run's iterations in buckets (the line is each "
         "bucket's median, the points its maximum, so no spike is averaged away).</p>\n<div "
         "id=\"samples\"></div>\n";
  out << "<h2>Side by side</h2>\n";
  write_table(out, records);
  write_fragment_grids(out, records);
  write_stage_costs(out, stage_costs);
  write_matrices(out, records, rule);
  out << "</main>\n";
  out << "<footer>uniperf " << UNIPERF_VERSION
      << " · charts by uPlot (MIT License, embedded)</footer>\n";

  out << "<script type=\"application/json\" id=\"uniperf-data\">" << script_safe_json(data)
      << "</script>\n";
  out << "<script>\n" << inline_safe(vendor::uplot_js(), "</script", "uPlot") << "\n</script>\n";
  out << "<script>\n"
      << inline_safe(vendor::report_js(), "</script", "report script") << "</script>\n";
  out << "<!-- uPlot license:\n"
      << inline_safe(vendor::uplot_license(), "-->", "uPlot license") << "-->\n";
  out << "</body>\n</html>\n";
}

}  // namespace uniperf::report
