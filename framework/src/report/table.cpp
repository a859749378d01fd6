#include "report/table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace uniperf::report {

std::pair<double, std::string> headline(const Record& r) {
  switch (r.flow.pattern) {
    case engine::Pattern::latency:
      return {r.latency ? r.latency->p50 : 0,
              r.latency && !r.latency->one_way ? "p50 RTT us" : "p50 us"};
    case engine::Pattern::bandwidth:
      return {r.bandwidth ? r.bandwidth->mb_per_s : 0, "MB/s"};
    case engine::Pattern::message_rate:
      return {r.bandwidth ? r.bandwidth->mmsg_per_s : 0, "Mmsg/s"};
  }
  return {0, ""};
}

void LiveReporter::on_record(const Record& r) {
  const std::string key = r.config + "\n" + r.test;
  if (key != current_) {
    current_ = key;
    const auto& f = r.flow;
    out_ << fmt::format(
        "\n{} / {}: {} {} {}, window {} ({}), signal every {}, cq moderation {}, {}{}\n", r.config,
        r.test, to_string(f.op), engine::to_string(f.pattern), engine::to_string(f.direction),
        f.window, engine::to_string(f.window_mode), f.signal_every, f.cq_moderation,
        engine::to_string(f.completion),
        r.emulated.empty() ? "" : ", emulated: " + fmt::format("{}", fmt::join(r.emulated, ",")));
    if (f.pattern == engine::Pattern::latency) {
      out_ << fmt::format("{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  {}\n",
                          "bytes", "iters", "min", "p50", "p90", "p99", "p99.9", "max", "mean",
                          "stdev", "(us)");
    } else {
      out_ << fmt::format("{:>10} {:>9} {:>12} {:>9} {:>10} {:>9}\n", "bytes", "iters", "MB/s",
                          "Gb/s", "Mmsg/s", "seconds");
    }
  }
  if (r.status != Status::ok) {
    out_ << fmt::format("{:>10} {}: {}\n", r.size,
                        r.status == Status::skipped ? "SKIPPED" : "ERROR", r.reason);
    return;
  }
  if (r.latency) {
    const auto& l = *r.latency;
    out_ << fmt::format(
        "{:>10} {:>9} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.3f}{}\n",
        r.size, l.samples, l.min, l.p50, l.p90, l.p99, l.p999, l.max, l.mean, l.stdev,
        l.one_way ? "" : "  round trip");
  } else if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    out_ << fmt::format("{:>10} {:>9} {:>12.2f} {:>9.3f} {:>10.4f} {:>9.4f}\n", r.size, b.messages,
                        b.mb_per_s, b.gbit_per_s, b.mmsg_per_s, b.seconds);
  }
  out_.flush();
}

void ComparisonTable::add(const Record& r) {
  if (std::find(configs_.begin(), configs_.end(), r.config) == configs_.end())
    configs_.push_back(r.config);
  auto row = std::find_if(rows_.begin(), rows_.end(),
                          [&](const Row& x) { return x.test == r.test && x.size == r.size; });
  if (row == rows_.end()) {
    rows_.push_back(Row{r.test, r.size, {}, {}, {}});
    row = rows_.end() - 1;
  }
  const auto [value, metric] = headline(r);
  if (r.status == Status::ok) {
    row->metric = metric;
    row->values[r.config] = {true, value};
  } else {
    row->notes[r.config] = r.status == Status::skipped ? "skipped" : "error";
    if (row->metric.empty()) row->metric = metric;
  }
}

void ComparisonTable::print(std::ostream& out) const {
  std::size_t width = 12;
  for (const auto& c : configs_) width = std::max(width, c.size() + 2);
  out << fmt::format("{:<16} {:>10} {:<11}", "test", "bytes", "metric");
  for (const auto& c : configs_) out << fmt::format(" {:>{}}", c, width);
  for (std::size_t i = 1; i < configs_.size(); ++i) {
    out << fmt::format(" {:>{}}", configs_[i] + "/" + configs_[0],
                       std::max<std::size_t>(width, configs_[i].size() + configs_[0].size() + 3));
  }
  out << "\n";
  for (const auto& row : rows_) {
    out << fmt::format("{:<16} {:>10} {:<11}", row.test, row.size, row.metric);
    for (const auto& c : configs_) {
      const auto v = row.values.find(c);
      if (v != row.values.end()) {
        out << fmt::format(" {:>{}.3f}", v->second.second, width);
      } else {
        const auto n = row.notes.find(c);
        out << fmt::format(" {:>{}}", n != row.notes.end() ? n->second : "-", width);
      }
    }
    const auto base = row.values.find(configs_.front());
    for (std::size_t i = 1; i < configs_.size(); ++i) {
      const auto v = row.values.find(configs_[i]);
      const std::size_t w =
          std::max<std::size_t>(width, configs_[i].size() + configs_[0].size() + 3);
      if (base != row.values.end() && v != row.values.end() && base->second.second > 0) {
        out << fmt::format(" {:>{}.2f}", v->second.second / base->second.second, w);
      } else {
        out << fmt::format(" {:>{}}", "-", w);
      }
    }
    out << "\n";
  }
}

Progress::Progress() : enabled_(::isatty(STDERR_FILENO) == 1) {}

void Progress::start(const std::string& what, std::uint64_t size, std::size_t index,
                     std::size_t total) {
  if (!enabled_) return;
  std::cerr << fmt::format("\r\033[K[{:>3}/{}] {} {} B ...", index, total, what, size)
            << std::flush;
  shown_ = true;
}

void Progress::finish() {
  if (!enabled_ || !shown_) return;
  std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace uniperf::report
