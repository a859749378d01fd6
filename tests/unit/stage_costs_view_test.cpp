// The HTML report's stage-cost tables from a file of `uniperf stages`
// (report/stage_costs_view.hpp), and the refusal of files it cannot read.
#include "report/stage_costs_view.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report/html_report.hpp"

namespace uniperf::report {
namespace {

using nlohmann::json;

json calls(double register_us, double release_us, double again_us) {
  const auto stats = [](double p50) { return json{{"p50", p50}, {"min", p50}, {"p99", p50}}; };
  return {{"register_us", stats(register_us)},
          {"release_us", stats(release_us)},
          {"again_us", stats(again_us)}};
}

json sample_file() {
  json registration = json::array();
  json row = calls(412.5, 76.25, 4.75);
  row["size"] = 4096;
  row["pages"] = "normal";
  registration.push_back(row);
  registration.push_back({{"size", 65536}, {"pages", "normal"}, {"error", "ibv_reg_mr: ENOMEM"}});
  return {
      {"schema", "1.0"},
      {"host", {{"host", "lab<1>"}}},
      {"sizes", {4096, 65536}},
      {"copy",
       {{{"size", 4096}, {"pages", "normal"}, {"MB_per_s", 150168.3}, {"ci95", {150000, 150336.6}}},
        {{"size", 65536}, {"pages", "huge"}, {"MB_per_s", 38000.0}}}},
      {"configs",
       {{{"name", "verbs-rxe"},
         {"library", "rdma-core 44"},
         {"device", "rxe0"},
         {"registration", registration}},
        {{"name", "verbs:device=nosuch"}, {"unavailable", "no RDMA device"}}}},
      {"skipped",
       {{{"stage", "register"},
         {"config", "verbs-rxe"},
         {"pages", "huge"},
         {"reason", "huge pages: none are reserved"}}}}};
}

std::string section(const json& stages) {
  std::ostringstream out;
  write_stage_costs(out, stages);
  return out.str();
}

TEST(StageCostsView, TablesShowCopyAndRegistrationPerSizePagesAndConfig) {
  const json stages = sample_file();
  ASSERT_EQ(stage_costs_problem(stages), "");
  const std::string html = section(stages);
  EXPECT_NE(html.find("<h2 id=\"stage-costs\">Stage costs</h2>"), std::string::npos);
  EXPECT_NE(html.find("on the host lab&lt;1&gt;"), std::string::npos) << "escaped";
  // Copy: a column per kind of pages, the CI's half-width beside the mean.
  EXPECT_NE(html.find("<th>huge pages</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>normal pages</th>"), std::string::npos);
  EXPECT_NE(html.find("150168 ± 168"), std::string::npos) << html;
  EXPECT_NE(html.find(">38000<"), std::string::npos);
  // Registration: the medians, an error row, the unavailable config, the skip.
  EXPECT_NE(html.find("verbs-rxe (rdma-core 44, rxe0)"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">412.5</td><td class=\"num\">76.25</td>"
                      "<td class=\"num\">4.75</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("error: ibv_reg_mr: ENOMEM"), std::string::npos);
  EXPECT_NE(html.find("verbs:device=nosuch: unavailable: no RDMA device"), std::string::npos);
  EXPECT_NE(html.find("register (verbs-rxe), huge pages: huge pages: none are reserved"),
            std::string::npos);
}

TEST(StageCostsView, TheHtmlReportCarriesTheSectionOnlyWhenGivenAFile) {
  std::ostringstream with, without;
  write_html(with, {}, "t", {}, json(), json(), sample_file());
  write_html(without, {}, "t");
  EXPECT_NE(with.str().find("id=\"stage-costs\""), std::string::npos);
  EXPECT_EQ(without.str().find("id=\"stage-costs\""), std::string::npos);
}

TEST(StageCostsView, FilesItCannotReadAreRefusedNamingTheField) {
  EXPECT_NE(stage_costs_problem(json::array()), "");
  json stages = sample_file();
  stages.erase("schema");
  EXPECT_NE(stage_costs_problem(stages).find("schema"), std::string::npos);
  stages = sample_file();
  stages["schema"] = "2.0";
  EXPECT_NE(stage_costs_problem(stages).find("reads 1.x"), std::string::npos);
  stages = sample_file();
  stages["copy"][1]["MB_per_s"] = "fast";
  EXPECT_EQ(stage_costs_problem(stages), "copy[1].MB_per_s is missing or not a number");
  stages = sample_file();
  stages["configs"][0]["registration"][0].erase("again_us");
  EXPECT_EQ(stage_costs_problem(stages), "configs[0].registration[0].again_us is not an object");
  stages = sample_file();
  stages["configs"][0]["registration"][0]["again_us"].erase("p50");
  EXPECT_EQ(stage_costs_problem(stages),
            "configs[0].registration[0].again_us.p50 is missing or not a number");
  stages = sample_file();
  stages["configs"][0]["registration"][0]["size"] = -1;
  EXPECT_EQ(stage_costs_problem(stages),
            "configs[0].registration[0].size is missing or not a whole number >= 0");
  // Past the checked fields, odd values are shown as "?", never thrown on.
  stages = sample_file();
  stages["skipped"][0]["reason"] = 7;
  stages["configs"][0]["library"] = json::array();
  EXPECT_EQ(stage_costs_problem(stages), "");
  const std::string html = section(stages);
  EXPECT_NE(html.find("huge pages: ?"), std::string::npos);
  EXPECT_NE(html.find("verbs-rxe (?, rxe0)"), std::string::npos);
}

}  // namespace
}  // namespace uniperf::report
