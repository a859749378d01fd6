#include "report/junit_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/table.hpp"

namespace uniperf::report {
namespace {

std::string junit_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "nan";
}

/// Seconds the measurement took, for the testcase's time attribute.
double seconds_of(const Record& r) {
  if (r.bandwidth) return r.bandwidth->seconds;
  if (r.latency) {
    const double per_sample_us = r.latency->one_way ? 2 * r.latency->mean : r.latency->mean;
    const double total = per_sample_us * static_cast<double>(r.latency->samples) / 1e6;
    return std::isfinite(total) ? total : 0;
  }
  return 0;
}

void write_property(std::ostream& out, std::string_view name, const std::string& value) {
  out << "        <property name=\"" << name << "\" value=\"" << xml_escape(value) << "\"/>\n";
}

void write_testcase(std::ostream& out, const Record& r) {
  out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"",
                     xml_escape(r.config), xml_escape(r.test + "/" + std::to_string(r.size)),
                     seconds_of(r));
  if (r.status == Status::skipped) {
    out << ">\n      <skipped message=\"" << xml_escape(r.reason) << "\"/>\n    </testcase>\n";
    return;
  }
  if (r.status == Status::error) {
    out << ">\n      <error message=\"" << xml_escape(r.reason) << "\" type=\""
        << xml_escape(r.failure.empty() ? "error" : r.failure) << "\">" << xml_escape(r.reason)
        << "</error>\n    </testcase>\n";
    return;
  }
  const auto [value, metric] = headline(r);
  out << ">\n      <properties>\n";
  write_property(out, "plugin", r.plugin);
  write_property(out, "device", r.device);
  write_property(out, "op", std::string(to_string(r.flow.op)));
  write_property(out, "pattern", std::string(model::to_string(r.flow.pattern)));
  write_property(out, "size", std::to_string(r.size));
  if (r.latency) {
    const auto& l = *r.latency;
    write_property(out, "latency_p50_us", junit_number(l.p50));
    write_property(out, "latency_p90_us", junit_number(l.p90));
    write_property(out, "latency_p99_us", junit_number(l.p99));
    write_property(out, "latency_max_us", junit_number(l.max));
  }
  if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    write_property(out, "MB_per_s", junit_number(b.mb_per_s));
    write_property(out, "Gb_per_s", junit_number(b.gbit_per_s));
    write_property(out, "Mmsg_per_s", junit_number(b.mmsg_per_s));
  }
  out << "      </properties>\n";
  out << "      <system-out>"
      << xml_escape(fmt::format("{} {} B: {} {}", r.test, r.size, junit_number(value), metric))
      << "</system-out>\n    </testcase>\n";
}

}  // namespace

void write_junit(std::ostream& out, const std::vector<Record>& records, std::string_view name) {
  std::vector<std::string> configs;
  for (const auto& r : records) {
    if (std::find(configs.begin(), configs.end(), r.config) == configs.end()) {
      configs.push_back(r.config);
    }
  }
  const auto count = [&](const std::string* config, Status status) {
    return std::count_if(records.begin(), records.end(), [&](const Record& r) {
      return (config == nullptr || r.config == *config) && r.status == status;
    });
  };
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"0\" errors=\"{}\" skipped=\"{}\">\n",
      xml_escape(name), records.size(), count(nullptr, Status::error),
      count(nullptr, Status::skipped));
  for (const auto& config : configs) {
    const auto tests = std::count_if(records.begin(), records.end(),
                                     [&](const Record& r) { return r.config == config; });
    out << fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"0\" errors=\"{}\" skipped=\"{}\">\n",
        xml_escape(config), tests, count(&config, Status::error), count(&config, Status::skipped));
    for (const auto& r : records) {
      if (r.config == config) write_testcase(out, r);
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace uniperf::report
