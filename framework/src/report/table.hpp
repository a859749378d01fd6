// Terminal reporters. They only format records; nothing here measures.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

// Views format the results layer's records (results/record.hpp).
using results::FlowResult;
using results::Record;
using results::Status;

/// How the table and the live lines show bandwidth (--units): MB/s, 10^6 B/s
/// (uniperf's, iperf's), or MiB/s, 2^20 B/s (perftest's, ucx_perftest's).
/// Records carry both (MB_per_s, MiB_per_s); the HTML report shows MB/s.
enum class BandwidthUnit { mb, mib };
/// "MB" or "MiB"; throws std::invalid_argument for anything else.
BandwidthUnit parse_bandwidth_unit(const std::string& text);
/// "MB/s" or "MiB/s".
const char* unit_label(BandwidthUnit unit);
/// `mb_per_s` in `unit`.
double in_unit(double mb_per_s, BandwidthUnit unit);

/// One line per finished (config, test, size), perftest-like columns, with a
/// title and column header whenever the config or test changes. Latency rows:
/// min/p50/p90/p99/p99.9/max/mean/stdev in microseconds; bandwidth and
/// message-rate rows: MB/s, Gb/s, Mmsg/s. SKIPPED / ERROR rows carry the reason.
class LiveReporter {
 public:
  explicit LiveReporter(std::ostream& out, BandwidthUnit unit = BandwidthUnit::mb)
      : out_(out), unit_(unit) {}
  void on_record(const Record& record);

 private:
  std::ostream& out_;
  BandwidthUnit unit_;
  bool started_ = false;
  std::string config_;
  std::string test_;
  std::string pair_;  ///< the ranks of the last record's placement, if any
};

/// Writes one live line, without a header (LiveReporter adds those).
void print_record_line(std::ostream& out, const Record& record,
                       BandwidthUnit unit = BandwidthUnit::mb);

/// The side-by-side view: a row per (test, size) in the order they first
/// appear, a column per config in the order configs first appear, each cell the
/// headline metric of the test's pattern (or "skipped" / "error"), and with two
/// or more configs a ratio column per config against its base: the first
/// config, or for a config that several files hold ("tcp [new]", as `uniperf
/// report base.jsonl new.jsonl` labels them) the same config of the first
/// file ("tcp [base]"), so each config's new/base ratio is a column.
class ComparisonTable {
 public:
  explicit ComparisonTable(BandwidthUnit unit = BandwidthUnit::mb) : unit_(unit) {}
  void add(const Record& record);
  void print(std::ostream& out) const;

  /// The table as text cells, the header first: test, bytes, metric (unit),
  /// a value per config, then with two or more configs a ratio per config
  /// after the first. print() and the HTML report both show this.
  std::vector<std::vector<std::string>> cells() const;
  /// The line that explains the ratios; empty with fewer than two configs.
  std::string legend() const;
  /// Each config's base column (see the class comment); the first's is itself.
  std::vector<std::size_t> ratio_bases() const;

 private:
  struct Cell {
    bool has_value = false;
    double value = 0;
    std::string note;  ///< "skipped", "error" or "-" when there is no value
    /// With trials: half the 95% confidence interval of the headline's mean
    /// over them, printed as "±x" after the value.
    std::optional<double> half_ci = std::nullopt;
    /// Its record's headline metric: a row's configs may have kept
    /// different statistics (a p50 beside a native tool's mean).
    std::string metric = {};
    /// The statistic the value is ("p50", "mean"; "" for a bandwidth or a
    /// rate): named beside the value in a row that mixes them.
    std::string statistic = {};
  };
  struct Row {
    std::string test;
    std::uint64_t size = 0;
    std::string metric;       ///< headline metric and unit
    int decimals = 3;         ///< digits after the point for this metric
    std::vector<Cell> cells;  ///< one per configs_ entry
  };
  std::vector<std::string> configs_;
  std::vector<Row> rows_;
  bool with_intervals_ = false;  ///< some cell has a confidence interval
  BandwidthUnit unit_;

  /// The headline metrics a row's values hold, in order of appearance: one,
  /// but where a config kept only a mean beside another's p50 (a native
  /// tool's record).
  static std::vector<std::string> metrics_of(const Row& row);
};

/// A transient "[ 3/24] write_bw 65536 B ..." line, rewritten in place with
/// '\r'. Writes nothing at all unless enabled, which by default means stderr
/// is a terminal, so logs and pipes never see it.
class Progress {
 public:
  Progress();  ///< std::cerr, enabled when isatty(fileno(stderr))
  Progress(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}
  ~Progress();  ///< clears a line still shown (an exception ended the run)
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Shows "[index/total] what size B  elapsed 1m05s  ETA 2m10s": elapsed
  /// since the first start(), the ETA from the mean time per finished size
  /// (absent until one has finished).
  void start(const std::string& what, std::uint64_t size, std::size_t index, std::size_t total);
  /// Appends `text` (an interim result) to the current line.
  void interim(const std::string& text);
  /// Clears the line, so the next output starts on a clean line.
  void finish();

 private:
  std::ostream& out_;
  bool enabled_;
  std::size_t shown_ = 0;  ///< characters of the line on screen; 0 when none
  std::chrono::steady_clock::time_point first_start_{};
  bool started_ = false;
  std::string line_;  ///< the current line without an interim suffix
  void show(std::string line);
};

/// The headline number of an ok record and its label with the unit:
/// latency "p50 one-way us" or "p50 RTT us" (read and atomics time full round
/// trips), or "mean one-way us" / "mean RTT us" for a record that holds a
/// mean and no p50 (a native tool's mean in tests/fidelity/fidelity.py's
/// records); bandwidth "MB/s", message rate "Mmsg/s". The value is 0 when
/// the record carries no such measurement.
std::pair<double, std::string> headline(const Record& record);

/// The statistic headline() reports for a latency record ("p50", or "mean"
/// for a record that holds a mean alone); "" for a bandwidth or a rate.
std::string_view headline_statistic(const Record& record);

}  // namespace uniperf::report
