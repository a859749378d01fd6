// Files built into the binary (framework/cmake/embed_files.cmake generates
// their definitions from framework/src/report/vendor/): the HTML report
// inlines them, so a report is one file that opens with no network.
#pragma once

#include <string_view>

namespace uniperf::report::vendor {

std::string_view uplot_js();       ///< uPlot's minified IIFE build (MIT)
std::string_view uplot_css();      ///< uPlot's stylesheet
std::string_view uplot_license();  ///< uPlot's LICENSE text
std::string_view report_js();      ///< the report page's script (src/report/html/)
std::string_view report_css();     ///< the report page's style

}  // namespace uniperf::report::vendor
