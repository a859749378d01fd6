#include "report/csv_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "model/flow_fields.hpp"

namespace uniperf::report {
namespace {

/// Shortest text that reads back to the same double; empty for NaN (a
/// spreadsheet reads an empty cell as "no value", "nan" as text).
std::string csv_number(double value) {
  if (std::isnan(value)) return "";
  return fmt::format("{}", value);
}

std::string boolean(bool value) {
  return value ? "true" : "false";
}

std::string run_text(const model::RunField& field, const model::Duration& d) {
  switch (field.kind) {
    case model::RunKind::count64:
      return std::to_string(d.*field.count64);
    case model::RunKind::count32:
      return std::to_string(d.*field.count32);
    case model::RunKind::seconds:
      return csv_number(d.*field.seconds);
    case model::RunKind::flag:
      return boolean(d.*field.flag);
  }
  return "";
}

/// The row of one record, in csv_columns() order.
std::vector<std::string> row_of(const Record& r) {
  const auto& f = r.flow;
  std::vector<std::string> row = {
      r.config, r.plugin, r.plugin_version, r.library_version, r.device, r.suite, r.test,
  };
  for (const model::FlowField& field : model::kFlowFields) {
    if (field.csv == model::CsvColumn::identity) row.push_back(field.text(f));
  }
  for (auto field : {
           std::to_string(r.size),
           std::string(to_string(r.status)),
           r.reason,
           std::to_string(r.iterations_run),
       }) {
    row.push_back(std::move(field));
  }
  if (r.latency) {
    const auto& l = *r.latency;
    for (auto field :
         {std::to_string(l.samples), boolean(l.one_way), csv_number(l.min), csv_number(l.p50),
          csv_number(l.p90), csv_number(l.p99), csv_number(l.p999), csv_number(l.p9999),
          csv_number(l.max), csv_number(l.mean), csv_number(l.stdev)}) {
      row.push_back(std::move(field));
    }
  } else {
    row.resize(row.size() + 11);
  }
  if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    for (auto field :
         {std::to_string(b.bytes), std::to_string(b.messages), csv_number(b.seconds),
          csv_number(b.mb_per_s), csv_number(b.gbit_per_s), csv_number(b.mmsg_per_s)}) {
      row.push_back(std::move(field));
    }
  } else {
    row.resize(row.size() + 6);
  }
  for (const model::FlowField& field : model::kFlowFields) {
    if (field.csv == model::CsvColumn::params) row.push_back(field.text(f));
  }
  for (const model::RunField& field : model::kRunFields) {
    if (field.in_csv) row.push_back(run_text(field, r.duration));
  }
  for (auto field : {r.preset, fmt::format("{}", fmt::join(r.emulated, " ")),
                     std::to_string(r.corrupted_bytes), r.clock_source, r.host, r.timestamp,
                     std::to_string(std::max<std::size_t>(1, r.flows.size()))}) {
    row.push_back(std::move(field));
  }
  for (const model::FlowField& field : model::kFlowFields) {
    if (field.csv == model::CsvColumn::appended) row.push_back(field.text(f));
  }
  // Loss (record 1.2): empty where delivery is reliable.
  if (r.bandwidth && r.bandwidth->messages_sent) {
    const auto& b = *r.bandwidth;
    for (auto field : {std::to_string(*b.messages_sent), std::to_string(b.messages_lost()),
                       csv_number(b.loss_rate())})
      row.push_back(std::move(field));
  } else {
    row.resize(row.size() + 3);
  }
  row.push_back(r.bandwidth ? csv_number(r.bandwidth->mib_per_s()) : "");
  for (const model::FlowField& field : model::kFlowFields) {
    if (field.csv == model::CsvColumn::after_1_8) row.push_back(field.text(f));
  }
  return row;
}

void write_row(std::ostream& out, const auto& fields) {
  bool first = true;
  for (const auto& field : fields) {
    if (!first) out << ',';
    first = false;
    out << csv_field(field);
  }
  out << "\r\n";
}

}  // namespace

const std::vector<std::string_view>& csv_columns() {
  static const std::vector<std::string_view> columns = [] {
    std::vector<std::string_view> c = {
        "config", "plugin", "plugin_version", "library_version", "device", "suite", "test"};
    for (const model::FlowField& field : model::kFlowFields) {
      if (field.csv == model::CsvColumn::identity) c.push_back(field.name);
    }
    c.insert(c.end(), {"size",           "status",           "reason",
                       "iterations_run", "latency_samples",  "latency_one_way",
                       "latency_min_us", "latency_p50_us",   "latency_p90_us",
                       "latency_p99_us", "latency_p99_9_us", "latency_p99_99_us",
                       "latency_max_us", "latency_mean_us",  "latency_stdev_us",
                       "bytes",          "messages",         "seconds",
                       "MB_per_s",       "Gb_per_s",         "Mmsg_per_s"});
    for (const model::FlowField& field : model::kFlowFields) {
      if (field.csv == model::CsvColumn::params) c.push_back(field.name);
    }
    for (const model::RunField& field : model::kRunFields) {
      if (field.in_csv) c.push_back(field.record_key);
    }
    c.insert(c.end(), {"preset", "emulated", "corrupted_bytes", "clock_source", "host", "timestamp",
                       "flows"});
    for (const model::FlowField& field : model::kFlowFields) {
      if (field.csv == model::CsvColumn::appended) c.push_back(field.name);
    }
    c.insert(c.end(), {"messages_sent", "messages_lost", "loss_rate"});
    c.push_back("MiB_per_s");  // record 1.8
    for (const model::FlowField& field : model::kFlowFields) {
      if (field.csv == model::CsvColumn::after_1_8) c.push_back(field.name);
    }
    return c;
  }();
  return columns;
}

void write_csv(std::ostream& out, const std::vector<Record>& records) {
  write_row(out, csv_columns());
  for (const auto& record : records) write_row(out, row_of(record));
}

}  // namespace uniperf::report
