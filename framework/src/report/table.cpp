#include "report/table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "model/flow_fields.hpp"
#include "results/overlap.hpp"

namespace uniperf::report {
namespace {

/// Whether a record's latency is one-way (RTT/2) or a full round trip. From
/// the measurement when there is one, else from the op, so that the label of
/// a skipped read test is still right.
bool is_one_way(const Record& r) {
  if (r.latency) return r.latency->one_way;
  switch (r.flow.op) {
    case Op::send:
    case Op::write:
    case Op::write_imm:
      return true;
    case Op::read:
    case Op::fetch_add:
    case Op::cswap:
      return false;
  }
  return true;
}

/// Whether a record's latency is a mean alone, without percentiles (a native
/// tool's figure, as tests/fidelity/fidelity.py writes fi_pingpong's and
/// qperf's means): its headline is then the mean.
bool holds_mean_only(const Record& r) {
  return r.latency && std::isnan(r.latency->p50) && !std::isnan(r.latency->mean);
}

/// Exception texts may span lines; a live row and a table cell must not.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

/// "  lost 12 of 5000 (0.24%)" after a stream over an unreliable transport.
std::string loss_text(const results::BandwidthStats& b) {
  if (!b.messages_sent) return {};
  return fmt::format("  lost {} of {} ({:.2f}%)", b.messages_lost(), *b.messages_sent,
                     100 * b.loss_rate());
}

/// SKIPPED, ERROR, or a failure's kind ("STALLED") when the record has one.
std::string status_word(const Record& r) {
  if (r.status == Status::skipped) return "SKIPPED";
  if (r.status == Status::error && !r.failure.empty()) {
    std::string word = r.failure;
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return word;
  }
  return "ERROR";
}

constexpr int kLatencyDecimals = 3;
constexpr int kBandwidthDecimals = 1;
constexpr int kMessageRateDecimals = 4;

constexpr double kMiBInMB = 1e6 / (1 << 20);

int headline_decimals(model::Pattern pattern) {
  switch (pattern) {
    case model::Pattern::latency:
      return kLatencyDecimals;
    case model::Pattern::bandwidth:
      return kBandwidthDecimals;
    case model::Pattern::message_rate:
      return kMessageRateDecimals;
  }
  return kLatencyDecimals;
}

/// Three decimals, but two significant digits below 0.01: a 1000x gap must
/// not print as 0.000.
std::string format_ratio(double ratio) {
  return ratio != 0 && ratio < 0.01 ? fmt::format("{:.2g}", ratio) : fmt::format("{:.3f}", ratio);
}

void print_header(std::ostream& out, const Record& r, BandwidthUnit unit) {
  const auto& f = r.flow;
  if (!r.flows.empty()) {
    out << "\n"
        << fmt::format(
               "{} / {}: {} concurrent flows; all flows' bytes over the union of their "
               "intervals, then each flow on its own",
               r.config, r.test, r.flows.size())
        << (r.emulated.empty() ? "" : fmt::format(" (emulated: {})", fmt::join(r.emulated, ", ")))
        << "\n"
        << fmt::format("{:>10} {:>10} {:>12} {:>9} {:>10} {:>9}\n", "bytes", "iters",
                       unit_label(unit), "Gb/s", "Mmsg/s", "seconds");
    return;
  }
  std::string title = fmt::format("{} / {}: ", r.config, r.test);
  for (const model::FlowField& field : model::kFlowFields) {
    if (!field.title.shown) continue;
    const std::string value = field.text(f);
    if (field.title.unless_default && value == field.default_text()) continue;
    title += fmt::format("{}{}{}", field.title.prefix, value, field.title.suffix);
  }
  if (!r.emulated.empty()) title += fmt::format(", emulated: {}", fmt::join(r.emulated, ", "));
  if (f.pattern == model::Pattern::latency) {
    title += is_one_way(r) ? "; one-way latency (RTT/2) in us" : "; round-trip latency in us";
    out << "\n"
        << title << "\n"
        << fmt::format("{:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "bytes",
                       "iters", "min", "p50", "p90", "p99", "p99.9", "max", "mean", "stdev");
  } else {
    out << "\n"
        << title << "\n"
        << fmt::format("{:>10} {:>10} {:>12} {:>9} {:>10} {:>9}\n", "bytes", "iters",
                       unit_label(unit), "Gb/s", "Mmsg/s", "seconds");
  }
}

}  // namespace

BandwidthUnit parse_bandwidth_unit(const std::string& text) {
  if (text == "MB") return BandwidthUnit::mb;
  if (text == "MiB") return BandwidthUnit::mib;
  throw std::invalid_argument("--units: expected MB (10^6 B/s) or MiB (2^20 B/s), got '" + text +
                              "'");
}

const char* unit_label(BandwidthUnit unit) {
  return unit == BandwidthUnit::mib ? "MiB/s" : "MB/s";
}

double in_unit(double mb_per_s, BandwidthUnit unit) {
  return unit == BandwidthUnit::mib ? mb_per_s * kMiBInMB : mb_per_s;
}

std::string_view headline_statistic(const Record& r) {
  const model::Pattern pattern = r.flows.empty() ? r.flow.pattern : r.flows.front().flow.pattern;
  if (pattern != model::Pattern::latency) return {};
  return r.flows.empty() && holds_mean_only(r) ? "mean" : "p50";
}

std::pair<double, std::string> headline(const Record& r) {
  // The latency labels start from headline_statistic(), which the
  // comparison table also keeps per cell: the two cannot disagree.
  const std::string statistic(headline_statistic(r));
  // Concurrent flows: the first flow is the one studied (the victim of the
  // competing ones), so its own number heads the comparison.
  if (!r.flows.empty()) {
    const FlowResult& first = r.flows.front();
    if (first.flow.pattern == model::Pattern::latency) {
      const char* kind = first.latency && !first.latency->one_way ? " RTT us" : " one-way us";
      return {first.latency ? first.latency->p50 : 0, "flow 1 " + statistic + kind};
    }
    if (first.flow.pattern == model::Pattern::message_rate) {
      return {first.bandwidth ? first.bandwidth->mmsg_per_s : 0, "flow 1 Mmsg/s"};
    }
    return {first.bandwidth ? first.bandwidth->mb_per_s : 0, "flow 1 MB/s"};
  }
  switch (r.flow.pattern) {
    case model::Pattern::latency: {
      const char* kind = is_one_way(r) ? " one-way us" : " RTT us";
      const double value = !r.latency ? 0 : holds_mean_only(r) ? r.latency->mean : r.latency->p50;
      return {value, statistic + kind};
    }
    case model::Pattern::bandwidth:
      return {r.bandwidth ? r.bandwidth->mb_per_s : 0, "MB/s"};
    case model::Pattern::message_rate:
      return {r.bandwidth ? r.bandwidth->mmsg_per_s : 0, "Mmsg/s"};
  }
  return {0, ""};
}

// ---------------------------------------------------------------------------
// Live lines
// ---------------------------------------------------------------------------

/// One flow of a multi-flow record, under its aggregate line.
void print_flow_line(std::ostream& out, std::size_t index, const FlowResult& f,
                     BandwidthUnit unit) {
  std::string what = fmt::format("flow {}: {} {} {}, window {}", index + 1, to_string(f.flow.op),
                                 model::to_string(f.flow.pattern),
                                 model::to_string(f.flow.direction), f.flow.window);
  if (f.flow.size != 0) what += fmt::format(", {} B each", f.flow.size);
  if (f.flow.role == model::Role::load) what += " (load)";
  std::string numbers;
  if (f.latency) {
    numbers = fmt::format("p50 {:.3f} us, p99 {:.3f} us ({})", f.latency->p50, f.latency->p99,
                          f.latency->one_way ? "one-way" : "round trip");
  } else if (f.bandwidth) {
    numbers = fmt::format("{:.2f} {}, {:.4f} Mmsg/s{}", in_unit(f.bandwidth->mb_per_s, unit),
                          unit_label(unit), f.bandwidth->mmsg_per_s, loss_text(*f.bandwidth));
  }
  if (numbers.empty()) {
    out << fmt::format("{:>10} {:>10}   {}\n", "", "", what);
  } else {
    out << fmt::format("{:>10} {:>10}   {}: {}\n", "", f.iterations_run, what, numbers);
  }
  if (f.common_latency && f.latency) {
    out << fmt::format(
        "{:>10} {:>10}   while all ran ({} of its {} iterations): p50 {:.3f} us, p99 {:.3f} us\n",
        "", "", f.common_latency->samples, f.latency->samples, f.common_latency->p50,
        f.common_latency->p99);
  }
  if (f.alone) {
    out << fmt::format(
        "{:>10} {:>10}   alone ({}): p50 {:.3f} us, p99 {:.3f} us; beside the "
        "others {:.2f}x at p50, {:.2f}x at p99\n",
        "", "", f.alone->test, f.alone->latency.p50, f.alone->latency.p99, f.alone->slowdown_p50,
        f.alone->slowdown_p99);
  }
}

/// Over several rails: what each carried, and how evenly.
void print_rails_line(std::ostream& out, const Record& r, BandwidthUnit unit) {
  if (r.status != Status::ok || r.rails.empty()) return;
  std::string rails;
  for (std::size_t k = 0; k < r.rails.size(); ++k) {
    rails += fmt::format("{}rail {} {:.2f} {} ({} requests", k == 0 ? "" : ", ", k,
                         in_unit(r.rails[k].mb_per_s, unit), unit_label(unit), r.rails[k].requests);
    // A latency test: the samples the rail took part in.
    if (const auto& l = r.rails[k].latency)
      rails += fmt::format("; {} samples, p50 {:.3f} us", l->samples, l->p50);
    rails += ")";
  }
  out << fmt::format("{:>10} {:>10}   {} {}: {}; imbalance {:.1f}%\n", "", "",
                     model::to_string(r.flow.rail_policy), "over its rails", rails,
                     100 * r.rail_imbalance());
}

void print_record_line(std::ostream& out, const Record& r, BandwidthUnit unit) {
  if (r.status == Status::ok && !r.flows.empty() && r.bandwidth) {
    const auto& b = *r.bandwidth;
    out << fmt::format("{:>10} {:>10} {:>12.2f} {:>9.3f} {:>10.4f} {:>9.4f}\n", r.size,
                       r.iterations_run, in_unit(b.mb_per_s, unit), b.gbit_per_s, b.mmsg_per_s,
                       b.seconds);
    for (std::size_t k = 0; k < r.flows.size(); ++k) print_flow_line(out, k, r.flows[k], unit);
    if (const auto overlap = results::flows_overlap(r)) {
      out << fmt::format("{:>10} {:>10}   together: {:.0f}% of their {:.3g} ms{}\n", "", "",
                         100 * overlap->together, overlap->span_us / 1e3,
                         overlap->together < results::kLeastMeaningfulOverlap
                             ? " (mostly one after another: the aggregate is no concurrent total)"
                             : "");
    }
    // The traced flows' shares of the time they all ran.
    std::string common;
    for (std::size_t k = 0; k < r.flows.size(); ++k) {
      if (r.flows[k].common) {
        common += fmt::format("{}flow {} {:.2f} {}", common.empty() ? "" : ", ", k + 1,
                              in_unit(r.flows[k].common->mb_per_s, unit), unit_label(unit));
      }
    }
    if (!common.empty()) {
      out << fmt::format("{:>10} {:>10}   while all ran: {}{}\n", "", "", common,
                         r.fairness_jain ? fmt::format("; Jain fairness {:.3f}", *r.fairness_jain)
                                         : std::string());
    }
  } else if (r.status != Status::ok) {
    out << fmt::format("{:>10} {}: {}\n", r.size, status_word(r), one_line(r.reason));
    for (std::size_t k = 0; k < r.flows.size(); ++k) print_flow_line(out, k, r.flows[k], unit);
  } else if (r.flow.pattern == model::Pattern::latency && r.latency) {
    const auto& l = *r.latency;
    out << fmt::format(
        "{:>10} {:>10} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f}\n",
        r.size, r.iterations_run, l.min, l.p50, l.p90, l.p99, l.p999, l.max, l.mean, l.stdev);
  } else if (r.flow.pattern != model::Pattern::latency && r.bandwidth) {
    const auto& b = *r.bandwidth;
    out << fmt::format("{:>10} {:>10} {:>12.2f} {:>9.3f} {:>10.4f} {:>9.4f}{}\n", r.size,
                       r.iterations_run, in_unit(b.mb_per_s, unit), b.gbit_per_s, b.mmsg_per_s,
                       b.seconds, loss_text(b));
  } else {
    out << fmt::format("{:>10} {:>10} (no measurement recorded)\n", r.size, r.iterations_run);
  }
  print_rails_line(out, r, unit);
}

namespace {

/// A rank's place as a live line names it: the launcher's node name, when
/// it gave one that differs from the host's, with the host.
std::string where(const results::RankPlace& place) {
  if (place.node.empty() || place.node == place.host) return place.host;
  return place.node + " on " + place.host;
}

}  // namespace

void LiveReporter::on_record(const Record& r) {
  if (!started_ || r.config != config_ || r.test != test_) {
    started_ = true;
    config_ = r.config;
    test_ = r.test;
    print_header(out_, r, unit_);
    pair_.clear();
  }
  // A job of many ranks: the pair each group of lines was measured between.
  // Flows in process pairs of their own: each flow's.
  if (!r.flows.empty() && r.flows.front().placement) {
    std::string pairs = "  flows in separate processes:";
    for (std::size_t k = 0; k < r.flows.size(); ++k) {
      if (!r.flows[k].placement) continue;
      const auto& p = *r.flows[k].placement;
      pairs +=
          fmt::format("{} flow {} on ranks {} ({}) -> {} ({})", k == 0 ? "" : ",", k + 1,
                      p.initiator.rank, where(p.initiator), p.responder.rank, where(p.responder));
    }
    if (pairs != pair_) out_ << pairs << "\n";
    pair_ = std::move(pairs);
  } else if (r.placement) {
    const auto& p = *r.placement;
    std::string pair =
        fmt::format("  ranks {} ({}) -> {} ({}), round {} of pairs: {}", p.initiator.rank,
                    where(p.initiator), p.responder.rank, where(p.responder), p.round + 1, p.pairs);
    if (pair != pair_) out_ << pair << "\n";
    pair_ = std::move(pair);
  }
  print_record_line(out_, r, unit_);
  // Flushed per line: a run takes minutes and the line is the only sign of life.
  out_.flush();
}

// ---------------------------------------------------------------------------
// Side-by-side table
// ---------------------------------------------------------------------------

void ComparisonTable::add(const Record& r) {
  auto config = std::find(configs_.begin(), configs_.end(), r.config);
  if (config == configs_.end()) config = configs_.insert(configs_.end(), r.config);
  const auto column = static_cast<std::size_t>(config - configs_.begin());

  auto row = std::find_if(rows_.begin(), rows_.end(),
                          [&](const Row& x) { return x.test == r.test && x.size == r.size; });
  if (row == rows_.end()) row = rows_.insert(rows_.end(), Row{r.test, r.size, "", 3, {}});
  if (row->cells.size() <= column) row->cells.resize(column + 1);

  auto [value, metric] = headline(r);
  // The headline in the table's unit: "MB/s" (flow 1's too) becomes "MiB/s".
  const bool converted = unit_ == BandwidthUnit::mib && metric.ends_with("MB/s");
  if (converted) {
    value = in_unit(value, unit_);
    metric.replace(metric.size() - 4, 4, unit_label(unit_));
  }
  // Every record of a row has the same test and so the same pattern; an ok
  // record's label wins because it knows one-way from round trip for sure.
  if (row->metric.empty() || r.status == Status::ok) {
    row->metric = metric;
    row->decimals = headline_decimals(r.flow.pattern);
  }
  Cell& cell = row->cells[column];
  const bool measured =
      r.flows.empty()
          ? (r.flow.pattern == model::Pattern::latency ? r.latency.has_value()
                                                       : r.bandwidth.has_value())
          : (r.flows.front().latency.has_value() || r.flows.front().bandwidth.has_value());
  if (r.status == Status::ok && measured) {
    cell = Cell{true, value, "", std::nullopt, metric, std::string(headline_statistic(r))};
    // The headline's confidence interval, where trials gave one (a single
    // flow's record: the intervals are the record's, not flow 1's).
    const char* metric_name = r.flow.pattern == model::Pattern::latency
                                  ? (holds_mean_only(r) ? "mean_us" : "p50_us")
                              : r.flow.pattern == model::Pattern::bandwidth ? "MB_per_s"
                                                                            : "Mmsg_per_s";
    if (const auto ci = r.ci95.find(metric_name); r.flows.empty() && ci != r.ci95.end()) {
      cell.half_ci = (ci->second.high - ci->second.low) / 2;
      if (converted) cell.half_ci = in_unit(*cell.half_ci, unit_);
      with_intervals_ = true;
    }
  } else {
    cell = Cell{false, 0,
                r.status == Status::ok ? "-"
                : !r.failure.empty()   ? r.failure
                                       : std::string(to_string(r.status))};
  }
}

std::vector<std::vector<std::string>> ComparisonTable::cells() const {
  std::vector<std::string> header = {"test", "bytes", "metric (unit)"};
  for (const auto& config : configs_) header.push_back(config);
  const std::vector<std::size_t> bases = ratio_bases();
  for (std::size_t i = 1; i < configs_.size(); ++i) {
    header.push_back(configs_[i] + "/" + configs_[bases[i]]);
  }
  std::vector<std::vector<std::string>> lines = {std::move(header)};
  for (const auto& row : rows_) {
    const auto measured = [&](std::size_t c) {
      return c < row.cells.size() && row.cells[c].has_value;
    };
    // Values of different statistics each name theirs.
    const std::vector<std::string> metrics = metrics_of(row);
    const bool mixed = metrics.size() > 1;
    std::vector<std::string> line = {
        row.test, std::to_string(row.size),
        mixed ? fmt::format("{}", fmt::join(metrics, " / ")) : row.metric};
    for (std::size_t c = 0; c < configs_.size(); ++c) {
      const Cell cell = c < row.cells.size() ? row.cells[c] : Cell{false, 0, "-"};
      std::string text = cell.has_value ? fmt::format("{:.{}f}", cell.value, row.decimals)
                                        : (cell.note.empty() ? "-" : cell.note);
      if (cell.has_value && cell.half_ci)
        text += fmt::format(" ±{:.{}f}", *cell.half_ci, row.decimals);
      if (cell.has_value && mixed && !cell.statistic.empty())
        text += fmt::format(" [{}]", cell.statistic);
      line.push_back(std::move(text));
    }
    for (std::size_t c = 1; c < configs_.size(); ++c) {
      const std::size_t base = bases[c];
      const bool has_base = measured(base) && row.cells[base].value > 0;
      // A mean over a p50 compares two different statistics: no ratio.
      const bool alike = has_base && measured(c) && row.cells[c].metric == row.cells[base].metric;
      line.push_back(alike ? format_ratio(row.cells[c].value / row.cells[base].value) : "-");
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> ComparisonTable::metrics_of(const Row& row) {
  std::vector<std::string> metrics;
  for (const Cell& cell : row.cells) {
    if (cell.has_value && std::find(metrics.begin(), metrics.end(), cell.metric) == metrics.end()) {
      metrics.push_back(cell.metric);
    }
  }
  return metrics;
}

std::vector<std::size_t> ComparisonTable::ratio_bases() const {
  // "tcp [new]" -> "tcp": the label a multi-file report gives a config that
  // several of its files hold.
  const auto unlabelled = [](const std::string& config) -> std::string {
    const std::size_t open = config.rfind(" [");
    return open != std::string::npos && config.back() == ']' ? config.substr(0, open) : "";
  };
  std::vector<std::size_t> bases(configs_.size(), 0);
  for (std::size_t i = 1; i < configs_.size(); ++i) {
    const std::string name = unlabelled(configs_[i]);
    if (name.empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (unlabelled(configs_[j]) == name) {
        bases[i] = j;
        break;
      }
    }
  }
  return bases;
}

std::string ComparisonTable::legend() const {
  std::string text;
  if (configs_.size() >= 2) {
    const auto bases = ratio_bases();
    const bool per_config =
        std::any_of(bases.begin(), bases.end(), [](std::size_t b) { return b != 0; });
    text = per_config ? std::string(
                            "ratio = a config / the one after the slash (a config that "
                            "several files hold: against the first file's)")
                      : fmt::format("ratio = config / {}", configs_.front());
    text += ": for latency below 1 is faster, for MB/s and Mmsg/s above 1 is faster";
  }
  if (std::any_of(rows_.begin(), rows_.end(),
                  [](const Row& row) { return metrics_of(row).size() > 1; })) {
    text += std::string(text.empty() ? "" : "\n") +
            "[p50], [mean]: the statistic each config kept where a row's differ (a native "
            "tool's mean); no ratio between different ones";
  }
  if (with_intervals_) {
    text += std::string(text.empty() ? "" : "\n") +
            "±x: half the 95% confidence interval of the mean over the trials (--trials)";
  }
  return text;
}

void ComparisonTable::print(std::ostream& out) const {
  if (rows_.empty()) {
    out << "(no results)\n";
    return;
  }
  // Text first, widths second: every column is as wide as its widest entry.
  const auto lines = cells();
  std::vector<std::size_t> widths(lines.front().size());
  for (std::size_t i = 0; i < widths.size(); ++i) {
    for (const auto& line : lines) widths[i] = std::max(widths[i], line[i].size());
  }
  // test and metric are text: left-aligned; the rest are numbers: right-aligned.
  for (const auto& cells : lines) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i != 0) text += "  ";
      text += (i == 0 || i == 2) ? fmt::format("{:<{}}", cells[i], widths[i])
                                 : fmt::format("{:>{}}", cells[i], widths[i]);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  }
  if (const std::string text = legend(); !text.empty()) out << text << "\n";
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

Progress::Progress() : Progress(std::cerr, ::isatty(::fileno(stderr)) == 1) {}

Progress::~Progress() {
  finish();
}

namespace {

std::string short_duration(double seconds) {
  const auto total = static_cast<long long>(seconds + 0.5);
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total / 60 % 60);
}

}  // namespace

void Progress::start(const std::string& what, std::uint64_t size, std::size_t index,
                     std::size_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!started_) {
    first_start_ = now;
    started_ = true;
  }
  const double elapsed = std::chrono::duration<double>(now - first_start_).count();
  const std::size_t digits = std::to_string(total).size();
  std::string line = fmt::format("[{:>{}}/{}] {} {} B  elapsed {}", index, digits, total, what,
                                 size, short_duration(elapsed));
  if (index > 1 && total >= index) {
    const double per_size = elapsed / static_cast<double>(index - 1);
    line += "  ETA " + short_duration(per_size * static_cast<double>(total - index + 1));
  }
  line_ = line;
  show(std::move(line));
}

void Progress::interim(const std::string& text) {
  if (!enabled_ || line_.empty()) return;
  show(line_ + "  " + text);
}

void Progress::show(std::string line) {
  const std::size_t visible = line.size();
  // Blanks over the rest of a longer previous line instead of a terminal
  // escape sequence: works on any terminal.
  if (shown_ > visible) line.append(shown_ - visible, ' ');
  out_ << '\r' << line << std::flush;
  shown_ = std::max(visible, shown_);
}

void Progress::finish() {
  if (!enabled_ || shown_ == 0) return;
  out_ << '\r' << std::string(shown_, ' ') << '\r' << std::flush;
  shown_ = 0;
  line_.clear();
}

}  // namespace uniperf::report
