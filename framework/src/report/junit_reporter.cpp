#include "report/junit_reporter.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/table.hpp"

namespace uniperf::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// Length of the valid UTF-8 sequence at text[at], 0 if it is not one
/// (overlong forms, surrogates and values past U+10FFFF are not).
std::size_t utf8_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3F);
  }
  if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF) || code == 0xFFFE || code == 0xFFFF) {
    return 0;
  }
  return length;
}

std::string number(double value) {
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
    out << ">\n      <error message=\"" << xml_escape(r.reason) << "\" type=\"error\">"
        << xml_escape(r.reason) << "</error>\n    </testcase>\n";
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
    write_property(out, "latency_p50_us", number(l.p50));
    write_property(out, "latency_p90_us", number(l.p90));
    write_property(out, "latency_p99_us", number(l.p99));
    write_property(out, "latency_max_us", number(l.max));
  }
  if (r.bandwidth) {
    const auto& b = *r.bandwidth;
    write_property(out, "MB_per_s", number(b.mb_per_s));
    write_property(out, "Gb_per_s", number(b.gbit_per_s));
    write_property(out, "Mmsg_per_s", number(b.mmsg_per_s));
  }
  out << "      </properties>\n";
  out << "      <system-out>"
      << xml_escape(fmt::format("{} {} B: {} {}", r.test, r.size, number(value), metric))
      << "</system-out>\n    </testcase>\n";
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const char c = text[at];
    const std::size_t length = utf8_length(text, at);
    if (length == 0) {
      out += kReplacement;
      ++at;
      continue;
    }
    if (length == 1) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&apos;";
          break;
        case '\t':
          out += "&#9;";  // attribute values normalise raw whitespace to spaces
          break;
        case '\n':
          out += "&#10;";
          break;
        case '\r':
          out += "&#13;";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
            out += kReplacement;
          } else {
            out += c;
          }
      }
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

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
