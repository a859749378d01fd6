// The views made from records: CSV, JUnit XML, the side-by-side table's exact
// text, the HTML report, and the atomic file they are written through.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "report/csv_reporter.hpp"
#include "report/html_report.hpp"
#include "report/junit_reporter.hpp"
#include "report/table.hpp"
#include "results/atomic_file.hpp"
#include "results/record.hpp"
#include "results/stats.hpp"

namespace uniperf::report {
namespace {

using namespace results;  // the records these views format

namespace fs = std::filesystem;

Record latency(const std::string& config, const std::string& test, std::uint64_t size, double p50) {
  Record r;
  r.suite = "views";
  r.config = config;
  r.plugin = config == "tcp" ? "tcp" : "ucx";
  r.plugin_version = "0.1";
  r.library_version = "lib 1.0";
  r.device = "lo";
  r.test = test;
  r.size = size;
  r.flow.op = Op::send;
  r.flow.pattern = model::Pattern::latency;
  r.duration.iterations = 1000;
  r.iterations_run = 1000;
  LatencyStats l;
  l.samples = 1000;
  l.min = p50 / 2;
  l.p50 = p50;
  l.p90 = p50 * 1.25;
  l.p99 = p50 * 2;
  l.p999 = p50 * 3;
  l.p9999 = p50 * 4;
  l.max = p50 * 5;
  l.mean = p50;
  l.stdev = 0.5;
  r.latency = l;
  r.clock_source = "tsc";
  r.host = "host-a";
  r.timestamp = "2026-01-02T03:04:05Z";
  return r;
}

Record bandwidth(const std::string& config, const std::string& test, std::uint64_t size,
                 double seconds) {
  Record r = latency(config, test, size, 0);
  r.latency.reset();
  r.flow.op = Op::write;
  r.flow.pattern = model::Pattern::bandwidth;
  r.flow.window = 64;
  r.flow.signal_every = 32;
  r.iterations_run = 1000;
  r.bandwidth = compute_bandwidth(size * 1000, 1000, seconds);
  return r;
}

Record not_run(const std::string& config, const std::string& test, std::uint64_t size,
               Status status, const std::string& reason) {
  Record r = latency(config, test, size, 0);
  r.latency.reset();
  r.status = status;
  r.reason = reason;
  r.iterations_run = 0;
  return r;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

/// Splits RFC 4180 text back into rows of fields (quotes, doubled quotes,
/// CRLF inside quotes), so the tests check what a CSV reader would see.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back().front().empty()) rows.pop_back();
  return rows;
}

// ---------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------

TEST(Csv, QuotesOnlyWhatRfc4180Requires) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

TEST(Csv, OneRowPerRecordWithTheDocumentedColumns) {
  const std::vector<Record> records = {
      latency("ucx-shm", "send_lat", 8, 1.5), bandwidth("ucx-shm", "write_bw", 65536, 0.5),
      not_run("tcp", "read_lat", 8, Status::skipped, "op read: not supported, \"tcp\"\nline 2")};
  std::ostringstream out;
  write_csv(out, records);
  const std::string text = out.str();
  EXPECT_EQ(count_of(text, "\r\n"), 4u) << "4 rows; the LF in a reason is quoted: " << text;
  const auto rows = parse_csv(text);
  ASSERT_EQ(rows.size(), 4u) << text;
  const auto& columns = csv_columns();
  ASSERT_EQ(columns.size(), 79u);
  // Columns are only ever appended: 1.11's rail knobs, then 1.12's pipeline
  // ones, then 1.14's pages, then 1.18's stream_end, then 1.19's target_watch, then 1.20's
  // send_buffers.
  EXPECT_EQ(columns[69], "rail_policy");
  EXPECT_EQ(columns[70], "stripe_threshold");
  EXPECT_EQ(columns[71], "fragment");
  EXPECT_EQ(columns[74], "source");
  EXPECT_EQ(columns[75], "pages");
  EXPECT_EQ(columns[76], "stream_end");
  EXPECT_EQ(columns[77], "target_watch");
  EXPECT_EQ(columns[78], "send_buffers");
  for (const auto& row : rows) ASSERT_EQ(row.size(), columns.size()) << text;
  for (std::size_t i = 0; i < columns.size(); ++i) EXPECT_EQ(rows[0][i], columns[i]);

  const auto cell = [&](std::size_t row, std::string_view column) {
    const auto at = std::find(columns.begin(), columns.end(), column);
    EXPECT_NE(at, columns.end()) << column;
    return rows[row][static_cast<std::size_t>(at - columns.begin())];
  };
  EXPECT_EQ(cell(1, "config"), "ucx-shm");
  EXPECT_EQ(cell(1, "test"), "send_lat");
  EXPECT_EQ(cell(1, "op"), "send");
  EXPECT_EQ(cell(1, "pattern"), "latency");
  EXPECT_EQ(cell(1, "size"), "8");
  EXPECT_EQ(cell(1, "status"), "ok");
  EXPECT_EQ(cell(1, "latency_p50_us"), "1.5");
  EXPECT_EQ(cell(1, "latency_p99_us"), "3");
  EXPECT_EQ(cell(1, "latency_p99_9_us"), "4.5");
  EXPECT_EQ(cell(1, "MB_per_s"), "") << "no bandwidth measured";

  // 1000 x 64 KiB in 0.5 s: 131.072 MB/s, 1.048576 Gb/s, 0.002 Mmsg/s
  EXPECT_EQ(cell(2, "pattern"), "bandwidth");
  EXPECT_EQ(cell(2, "MB_per_s"), "131.072");
  EXPECT_EQ(cell(2, "Gb_per_s"), "1.048576");
  EXPECT_EQ(cell(2, "Mmsg_per_s"), "0.002");
  EXPECT_EQ(cell(2, "MiB_per_s"), "125") << "131.072 MB/s is 125 MiB/s";
  EXPECT_EQ(cell(1, "MiB_per_s"), "");
  EXPECT_EQ(cell(2, "window"), "64");
  EXPECT_EQ(cell(2, "rail_policy"), "bind");
  EXPECT_EQ(cell(2, "stripe_threshold"), "8192");
  EXPECT_EQ(cell(2, "signal_every"), "32");
  EXPECT_EQ(cell(2, "latency_p50_us"), "");

  EXPECT_EQ(cell(2, "max_loss"), "1");
  EXPECT_EQ(cell(2, "messages_sent"), "") << "reliable: no loss columns";

  EXPECT_EQ(cell(3, "status"), "skipped");
  EXPECT_EQ(cell(3, "reason"), "op read: not supported, \"tcp\"\nline 2");
  EXPECT_EQ(cell(3, "iterations_run"), "0");
}

TEST(Csv, LossHasItsOwnColumns) {
  Record r = bandwidth("verbs-ud", "send_bw", 1024, 0.5);
  r.flow.max_loss = 0.05;
  r.bandwidth->messages_sent = 1250;  // 1000 arrived
  std::ostringstream out;
  write_csv(out, {r});
  const auto rows = parse_csv(out.str());
  ASSERT_EQ(rows.size(), 2u);
  const auto& columns = csv_columns();
  const auto cell = [&](std::string_view column) {
    const auto at = std::find(columns.begin(), columns.end(), column);
    EXPECT_NE(at, columns.end()) << column;
    return rows[1][static_cast<std::size_t>(at - columns.begin())];
  };
  EXPECT_EQ(cell("messages"), "1000");
  EXPECT_EQ(cell("messages_sent"), "1250");
  EXPECT_EQ(cell("messages_lost"), "250");
  EXPECT_EQ(cell("loss_rate"), "0.2");
  EXPECT_EQ(cell("max_loss"), "0.05");
}

TEST(LiveTable, AStreamThatLostMessagesSaysHowMany) {
  Record r = bandwidth("verbs-ud", "send_bw", 1024, 0.5);
  r.bandwidth->messages_sent = 1250;
  std::ostringstream out;
  LiveReporter live(out);
  live.on_record(r);
  EXPECT_NE(out.str().find("lost 250 of 1250 (20.00%)"), std::string::npos) << out.str();
}

TEST(Csv, NotANumberIsAnEmptyField) {
  Record r = latency("ucx", "send_lat", 8, 1.0);
  r.latency->stdev = std::numeric_limits<double>::quiet_NaN();
  std::ostringstream out;
  write_csv(out, {r});
  const auto rows = parse_csv(out.str());
  ASSERT_EQ(rows.size(), 2u);
  const auto& columns = csv_columns();
  const auto at = std::find(columns.begin(), columns.end(), "latency_stdev_us") - columns.begin();
  EXPECT_EQ(rows[1][static_cast<std::size_t>(at)], "");
}

// ---------------------------------------------------------------------------
// JUnit XML
// ---------------------------------------------------------------------------

TEST(Junit, EscapesForXml) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("tab\tnl\n"), "tab&#9;nl&#10;");
  EXPECT_EQ(xml_escape(std::string("bell\x07", 5)), "bell\xEF\xBF\xBD");
  EXPECT_EQ(xml_escape("caf\xC3\xA9"), "caf\xC3\xA9") << "valid UTF-8 stays";
  EXPECT_EQ(xml_escape("bad\xC3("), "bad\xEF\xBF\xBD(") << "a cut sequence is replaced";
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") << "surrogate";
}

TEST(Junit, AStalledTestIsAnErrorOfTypeStalled) {
  Record stalled = not_run("tcp", "send_bw", 4096, Status::error, "no completion for 10 s");
  stalled.failure = "stalled";
  std::ostringstream out;
  write_junit(out, {stalled}, "stall");
  EXPECT_NE(out.str().find("<error message=\"no completion for 10 s\" type=\"stalled\">"),
            std::string::npos)
      << out.str();
}

TEST(Junit, OneTestcasePerRecordAndExactCounts) {
  const std::vector<Record> records = {
      latency("ucx-shm", "send_lat", 8, 1.5),
      bandwidth("ucx-shm", "write_bw", 65536, 0.5),
      not_run("ucx-shm", "read_lat", 8, Status::error, "peer <gone> & \"dead\""),
      latency("tcp", "send_lat", 8, 9.0),
      not_run("tcp", "write_bw", 65536, Status::skipped, "op write: not supported"),
      not_run("tcp", "read_lat", 8, Status::skipped, "op read: not supported")};
  std::ostringstream out;
  write_junit(out, records, "views & co");
  const std::string xml = out.str();
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u) << xml;
  EXPECT_NE(xml.find("<testsuites name=\"views &amp; co\" tests=\"6\" failures=\"0\" errors=\"1\" "
                     "skipped=\"2\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"ucx-shm\" tests=\"3\" failures=\"0\" errors=\"1\" "
                     "skipped=\"0\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(
      xml.find("<testsuite name=\"tcp\" tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\">"),
      std::string::npos)
      << xml;
  EXPECT_EQ(count_of(xml, "<testsuite "), 2u) << xml;
  EXPECT_EQ(count_of(xml, "<testcase "), 6u) << xml;
  EXPECT_EQ(count_of(xml, "</testcase>"), 6u) << xml;
  EXPECT_EQ(count_of(xml, "<skipped "), 2u) << xml;
  EXPECT_EQ(count_of(xml, "<error "), 1u) << xml;
  EXPECT_EQ(count_of(xml, "<system-out>"), 3u) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"ucx-shm\" name=\"send_lat/8\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"op write: not supported\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"peer &lt;gone&gt; &amp; &quot;dead&quot;\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<system-out>send_lat 8 B: 1.5 p50 one-way us</system-out>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<system-out>write_bw 65536 B: 131.072 MB/s</system-out>"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"latency_p99_us\" value=\"18\"/>"), std::string::npos) << xml;
  // Every element opened is closed, in order: a small well-formedness check
  // (the ctest script report_views parses the real output with python's xml).
  std::vector<std::string> open;
  for (std::size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    const std::size_t end = xml.find('>', at);
    ASSERT_NE(end, std::string::npos);
    const std::string tag = xml.substr(at + 1, end - at - 1);
    if (tag[0] == '?' || tag.back() == '/') continue;
    const std::string name = tag.substr(tag[0] == '/' ? 1 : 0, tag.find(' ') - (tag[0] == '/'));
    if (tag[0] == '/') {
      ASSERT_FALSE(open.empty()) << tag;
      EXPECT_EQ(open.back(), name);
      open.pop_back();
    } else {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty());
}

// ---------------------------------------------------------------------------
// Side-by-side table: exact text
// ---------------------------------------------------------------------------

TEST(ComparisonTableText, ExactOutputForThreeConfigs) {
  ComparisonTable table;
  for (const auto& [config, scale] :
       {std::pair{"ucx-shm", 1.0}, std::pair{"ucx-tcp", 4.0}, std::pair{"tcp", 8.0}}) {
    table.add(latency(config, "send_lat", 8, 0.5 * scale));
    table.add(latency(config, "send_lat", 4096, 1.25 * scale));
    table.add(bandwidth(config, "write_bw", 65536, 0.5 * scale));
  }
  table.add(not_run("ucx-shm", "read_lat", 8, Status::ok, ""));
  table.add(not_run("tcp", "read_lat", 8, Status::skipped, "no read"));
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(
      out.str(),
      "test      bytes  metric (unit)   ucx-shm  ucx-tcp      tcp  ucx-tcp/ucx-shm  "
      "tcp/ucx-shm\n"
      "send_lat      8  p50 one-way us    0.500    2.000    4.000            4.000        "
      "8.000\n"
      "send_lat   4096  p50 one-way us    1.250    5.000   10.000            4.000        "
      "8.000\n"
      "write_bw  65536  MB/s              131.1     32.8     16.4            0.250        "
      "0.125\n"
      "read_lat      8  p50 one-way us        -        -  skipped                -            "
      "-\n"
      "ratio = config / ucx-shm: for latency below 1 is faster, for MB/s and Mmsg/s above 1 "
      "is faster\n");
}

// ---------------------------------------------------------------------------
// HTML report (the real browser check is tests/report/check_browser.py)
// ---------------------------------------------------------------------------

TEST(Html, EscapesTextAndScriptData) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  const nlohmann::json value = {{"reason", "</script><!-- & more"}};
  const std::string safe = script_safe_json(value);
  EXPECT_EQ(safe, "{\"reason\":\"\\u003c/script\\u003e\\u003c!-- \\u0026 more\"}");
  EXPECT_EQ(nlohmann::json::parse(safe), value) << "the escapes read back as the same text";
}

TEST(Html, OneSelfContainedDeterministicPage) {
  std::vector<Record> records = {latency("ucx-shm", "send_lat", 8, 1.5),
                                 latency("tcp", "send_lat", 8, 9.0),
                                 bandwidth("ucx-shm", "write_bw", 65536, 0.5)};
  records.push_back(
      not_run("tcp", "write_bw", 65536, Status::error, "peer said </script><script>alert(1)"));
  std::ostringstream first, second;
  write_html(first, records, "A <title>");
  write_html(second, records, "A <title>");
  const std::string page = first.str();
  EXPECT_EQ(page, second.str()) << "same records, same bytes";
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>A &lt;title&gt; — uniperf report</title>"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos) << "nothing to fetch";
  // The reason's </script> must not end the data block: every "</script"
  // in the page closes one of its four script elements.
  EXPECT_EQ(count_of(page, "</script"), 4u);
  EXPECT_EQ(count_of(page, "<script type=\"application/json\" id=\"uniperf-data\">"), 1u);
  const std::string data_tag = "id=\"uniperf-data\">";
  const auto data_start = page.find(data_tag) + data_tag.size();
  const auto data_end = page.find("</script>", data_start);
  const auto data = nlohmann::json::parse(page.substr(data_start, data_end - data_start));
  ASSERT_EQ(data["records"].size(), 4u);
  EXPECT_EQ(data["records"][3]["reason"], "peer said </script><script>alert(1)");
  EXPECT_EQ(data["title"], "A <title>");
  // The side-by-side table, with the ratio coloured by direction: tcp's
  // latency is 6x the first config's, worse.
  EXPECT_NE(page.find("<table id=\"comparison\">"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num worse\">6.000</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("uPlot"), std::string::npos) << "the chart library is inlined";
}

// ---------------------------------------------------------------------------
// Atomic file
// ---------------------------------------------------------------------------

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("uniperf-views-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    target_ = directory_ / "report.csv";
  }
  void TearDown() override { fs::remove_all(directory_); }

  std::size_t file_count() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(directory_), {}));
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path directory_;
  fs::path target_;
};

TEST_F(AtomicFileTest, NothingUntilCommitThenExactlyTheContent) {
  {
    AtomicFile file(target_);
    EXPECT_FALSE(fs::exists(target_));
    // Unnamed until commit (O_TMPFILE): a process killed here leaves nothing.
    EXPECT_EQ(file_count(), 0u) << "the temporary file has no name yet";
    file.commit("a,b\r\n");
    EXPECT_THROW(file.commit("again"), std::logic_error);
  }
  EXPECT_EQ(read(target_), "a,b\r\n");
  EXPECT_EQ(file_count(), 1u) << "no temporary left behind";
}

TEST_F(AtomicFileTest, AbandonedLeavesTheOldTargetAndNoTemporary) {
  write_file_atomically(target_, "old");
  { AtomicFile file(target_); }
  EXPECT_EQ(read(target_), "old");
  EXPECT_EQ(file_count(), 1u);
}

TEST_F(AtomicFileTest, UnwritableDirectoryFailsAtOnceNamingThePath) {
  try {
    AtomicFile file(directory_ / "missing" / "report.xml");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/report.xml"), std::string::npos) << e.what();
  }
}

// A link stays a link (a results file kept under a stable name): the file
// it names is replaced. Before, rename() put a plain file in the link's place.
TEST_F(AtomicFileTest, ALinkIsFollowedToTheFileItNames) {
  const fs::path real = directory_ / "runs" / "today.jsonl";
  fs::create_directories(real.parent_path());
  write_file_atomically(real, "old");
  const fs::path link = directory_ / "latest.jsonl";
  fs::create_symlink(fs::path("runs") / "today.jsonl", link);  // relative, as ln -s makes them
  write_file_atomically(link, "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(real), "new");
  EXPECT_EQ(file_count(), 2u) << "the link and runs/, no temporary left";
}

// A device or FIFO is written in place, as the shell's > would: /dev/null
// stays a device (as root, rename() replaced it with a plain file), and a
// reader of a FIFO gets each piece as it is written.
TEST_F(AtomicFileTest, ADeviceOrFifoIsWrittenInPlace) {
  EXPECT_TRUE(written_in_place("/dev/null"));
  write_file_atomically("/dev/null", "nothing");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  const fs::path fifo = directory_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so the writer's open returns
  ASSERT_GE(reader, 0);
  {
    AtomicFile file(fifo);
    EXPECT_TRUE(file.in_place());
    EXPECT_TRUE(file.temporary().empty());
    file.write("first\n");
    char seen[16] = {};
    EXPECT_EQ(::read(reader, seen, sizeof seen), 6) << "written as it comes, not at commit";
    file.commit("last\n");
  }
  char rest[16] = {};
  EXPECT_EQ(::read(reader, rest, sizeof rest), 5);
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// "-", /dev/stdout and /dev/fd/1 are this process's standard output, written
// through a copy of its descriptor (sharing its offset), which stays open;
// -o - once created a file named "-".
TEST_F(AtomicFileTest, StandardOutputByAnyOfItsNames) {
  EXPECT_EQ(descriptor_named("-"), STDOUT_FILENO);
  EXPECT_EQ(descriptor_named("/dev/stdout"), STDOUT_FILENO);
  EXPECT_EQ(descriptor_named("/dev/fd/1"), STDOUT_FILENO);
  EXPECT_EQ(descriptor_named("/dev/stderr"), STDERR_FILENO);
  EXPECT_FALSE(descriptor_named(target_));
  EXPECT_FALSE(descriptor_named("/dev/fd/1x"));

  // Standard output sent to a file of ours for the moment of the test.
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  const fs::path captured = directory_ / "captured";
  const int into = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(into, 0);
  ::dup2(into, STDOUT_FILENO);
  ::close(into);
  {
    AtomicFile file("-");
    file.write("{\"a\":1}\n");
    file.commit();
  }
  write_file_atomically("/dev/stdout", "{\"b\":2}\n");
  const bool still_open = ::fcntl(STDOUT_FILENO, F_GETFD) != -1;
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  EXPECT_TRUE(still_open);
  EXPECT_EQ(read(captured), "{\"a\":1}\n{\"b\":2}\n") << "appended at the shared offset";
  EXPECT_FALSE(fs::exists("-"));
}

}  // namespace
}  // namespace uniperf::report
