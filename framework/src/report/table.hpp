// Terminal reporters. They only format records; nothing here measures.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/record.hpp"

namespace uniperf::report {

/// One line per finished (config, test, size), perftest-like columns, with a
/// header whenever the config or test changes.
class LiveReporter {
 public:
  explicit LiveReporter(std::ostream& out) : out_(out) {}
  void on_record(const Record& record);

 private:
  std::ostream& out_;
  std::string current_;
};

/// The side-by-side view: a row per (test, size), a column per config with
/// the headline metric of the test's pattern, and each config's ratio to the
/// first one.
class ComparisonTable {
 public:
  void add(const Record& record);
  void print(std::ostream& out) const;

 private:
  struct Row {
    std::string test;
    std::uint64_t size = 0;
    std::string metric;                                     // headline metric and unit
    std::map<std::string, std::pair<bool, double>> values;  // config -> (ok, value)
    std::map<std::string, std::string> notes;               // config -> skipped / error
  };
  std::vector<std::string> configs_;
  std::vector<Row> rows_;
};

/// A progress line on stderr while a size runs, only when stderr is a TTY.
class Progress {
 public:
  Progress();
  void start(const std::string& what, std::uint64_t size, std::size_t index, std::size_t total);
  void finish();

 private:
  bool enabled_;
  bool shown_ = false;
};

/// The headline number of a record and its label ("p50 us", "MB/s", ...).
std::pair<double, std::string> headline(const Record& record);

}  // namespace uniperf::report
