#include "report/stage_costs_view.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "report/escape.hpp"

namespace uniperf::report {
namespace {

using nlohmann::json;

/// What a field must hold.
enum class Kind { text, number, count };

bool holds(const json& value, Kind kind) {
  switch (kind) {
    case Kind::text:
      return value.is_string();
    case Kind::number:
      return value.is_number();
    case Kind::count:
      return value.is_number_unsigned() ||
             (value.is_number_integer() && value.get<long long>() >= 0);
  }
  return false;
}

/// The first field of `object` at `path` that is missing or does not hold
/// its kind: "" when all are there.
std::string missing_field(const json& object, const std::string& path,
                          std::initializer_list<std::pair<const char*, Kind>> fields) {
  if (!object.is_object()) return path + " is not an object";
  for (const auto& [name, kind] : fields) {
    const auto at = object.find(name);
    if (at == object.end() || !holds(*at, kind)) {
      return fmt::format("{}.{} is missing or not {}", path, name,
                         kind == Kind::text     ? "a string"
                         : kind == Kind::number ? "a number"
                                                : "a whole number >= 0");
    }
  }
  return {};
}

/// `object[key]` where it is a string, else "?" (the file is read, not
/// trusted, past what stage_costs_problem checks).
std::string text_of(const json& object, const char* key) {
  if (!object.is_object()) return "?";
  const auto at = object.find(key);
  return at != object.end() && at->is_string() ? at->get<std::string>() : "?";
}

std::string number_text(double value) {
  return fmt::format("{:.4g}", value);
}

}  // namespace

std::string stage_costs_problem(const json& stages) {
  if (!stages.is_object()) return "not a JSON object";
  const auto schema = stages.find("schema");
  if (schema == stages.end() || !schema->is_string())
    return "no \"schema\": not a file of `uniperf stages`";
  if (schema->get<std::string>().rfind("1.", 0) != 0)
    return "schema " + schema->get<std::string>() + ": this uniperf reads 1.x";
  const auto copy = stages.find("copy");
  if (copy == stages.end() || !copy->is_array()) return "copy is missing or not a list";
  for (std::size_t i = 0; i < copy->size(); ++i) {
    const std::string problem =
        missing_field((*copy)[i], fmt::format("copy[{}]", i),
                      {{"size", Kind::count}, {"pages", Kind::text}, {"MB_per_s", Kind::number}});
    if (!problem.empty()) return problem;
  }
  const auto configs = stages.find("configs");
  if (configs == stages.end() || !configs->is_array()) return "configs is missing or not a list";
  for (std::size_t c = 0; c < configs->size(); ++c) {
    const json& config = (*configs)[c];
    const std::string at = fmt::format("configs[{}]", c);
    if (std::string problem = missing_field(config, at, {{"name", Kind::text}}); !problem.empty())
      return problem;
    if (config.contains("unavailable")) continue;
    const auto rows = config.find("registration");
    if (rows == config.end() || !rows->is_array())
      return at + ".registration is missing or not a list";
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const json& row = (*rows)[i];
      const std::string row_at = fmt::format("{}.registration[{}]", at, i);
      if (std::string problem =
              missing_field(row, row_at, {{"size", Kind::count}, {"pages", Kind::text}});
          !problem.empty())
        return problem;
      if (row.contains("error")) continue;
      for (const char* call : {"register_us", "release_us", "again_us"}) {
        if (std::string problem = missing_field(row.contains(call) ? row[call] : json(),
                                                row_at + "." + call, {{"p50", Kind::number}});
            !problem.empty())
          return problem;
      }
    }
  }
  return {};
}

void write_stage_costs(std::ostream& out, const json& stages) {
  if (stages.is_null()) return;
  out << "<h2 id=\"stage-costs\">Stage costs</h2>\n<p class=\"hint\">Each stage of a pipeline "
         "measured on its own by <code>uniperf stages</code> (docs/pipeline.md), on the host "
      << html_escape(text_of(stages.contains("host") ? stages["host"] : json(), "host"))
      << ": the memory copy a staged sender or a copying receiver adds per fragment, in MB/s "
         "(10<sup>6</sup> B/s, with the trials' 95% CI), and what a config's plugin takes to "
         "register a buffer it has not seen, release it, and register the same buffer again "
         "(a registration cache's hit), in µs (median).</p>\n";

  // Copy: a row per size, a column per kind of pages.
  std::set<std::string> pages_seen;
  std::map<std::uint64_t, std::map<std::string, const json*>> copy;
  for (const json& row : stages.at("copy")) {
    const std::string pages = row.at("pages").get<std::string>();
    pages_seen.insert(pages);
    copy[row.at("size").get<std::uint64_t>()][pages] = &row;
  }
  if (!copy.empty()) {
    out << "<div class=\"card table-wrap\"><table class=\"stage-costs\">\n<caption>memory "
           "copy, MB/s by size</caption>\n<thead><tr><th>size</th>";
    for (const auto& pages : pages_seen) out << "<th>" << html_escape(pages) << " pages</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& [size, by_pages] : copy) {
      out << "<tr><th class=\"num\">" << size << "</th>";
      for (const auto& pages : pages_seen) {
        const auto at = by_pages.find(pages);
        if (at == by_pages.end()) {
          out << "<td class=\"num\"></td>";
          continue;
        }
        const json& row = *at->second;
        std::string text = fmt::format("{:.0f}", row.at("MB_per_s").get<double>());
        const auto ci = row.find("ci95");
        if (ci != row.end() && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() &&
            (*ci)[1].is_number())
          text += fmt::format(" ± {:.0f}", ((*ci)[1].get<double>() - (*ci)[0].get<double>()) / 2);
        out << "<td class=\"num\">" << html_escape(text) << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody></table></div>\n";
  }

  for (const json& config : stages.at("configs")) {
    const std::string name = config.at("name").get<std::string>();
    if (config.contains("unavailable")) {
      out << "<p class=\"hint\">" << html_escape(name)
          << ": unavailable: " << html_escape(text_of(config, "unavailable")) << "</p>\n";
      continue;
    }
    out << "<div class=\"card table-wrap\"><table class=\"stage-costs\">\n<caption>"
        << html_escape(fmt::format("{} ({}, {}): register_memory(), µs (median of fresh buffers)",
                                   name, text_of(config, "library"), text_of(config, "device")))
        << "</caption>\n<thead><tr><th>size</th><th>pages</th><th>register</th>"
           "<th>release</th><th>again</th></tr></thead>\n<tbody>\n";
    for (const json& row : config.at("registration")) {
      out << "<tr><th class=\"num\">" << row.at("size").get<std::uint64_t>() << "</th><td>"
          << html_escape(row.at("pages").get<std::string>()) << "</td>";
      if (row.contains("error")) {
        out << "<td colspan=\"3\">error: " << html_escape(text_of(row, "error")) << "</td></tr>\n";
        continue;
      }
      for (const char* call : {"register_us", "release_us", "again_us"})
        out << "<td class=\"num\">" << number_text(row.at(call).at("p50").get<double>()) << "</td>";
      out << "</tr>\n";
    }
    out << "</tbody></table></div>\n";
  }

  const auto skipped = stages.find("skipped");
  if (skipped != stages.end() && skipped->is_array() && !skipped->empty()) {
    out << "<p class=\"hint\">Skipped:</p>\n<ul class=\"stage-skipped\">\n";
    for (const json& s : *skipped) {
      if (!s.is_object()) continue;
      std::string what = text_of(s, "stage");
      if (s.contains("config")) what += " (" + text_of(s, "config") + ")";
      what += ", " + text_of(s, "pages") + " pages: " + text_of(s, "reason");
      out << "<li>" << html_escape(what) << "</li>\n";
    }
    out << "</ul>\n";
  }
}

}  // namespace uniperf::report
