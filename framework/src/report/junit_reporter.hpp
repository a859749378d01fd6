// JUnit XML for CI dashboards (Jenkins, GitLab, GitHub test reporters): a
// <testsuite> per config, a <testcase> per record (classname = config,
// name = "test/size"). Skipped records are <skipped message=reason/>, errors
// <error message=reason/>, ok records pass with the headline metric and the
// key statistics as <properties> and a line in <system-out>.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

// Views format the results layer's records (results/record.hpp).
using results::FlowResult;
using results::Record;
using results::Status;

/// `name` is the <testsuites> name (the suite's, when all records share one).
void write_junit(std::ostream& out, const std::vector<Record>& records, std::string_view name);

/// Text made safe for XML 1.0 character data and attribute values: & < > " '
/// become entities, bytes that are not UTF-8 and characters XML forbids
/// (controls other than tab, LF, CR) become U+FFFD.
std::string xml_escape(std::string_view text);

}  // namespace uniperf::report
