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

#include "report/escape.hpp"
#include "results/record.hpp"

namespace uniperf::report {

// Views format the results layer's records (results/record.hpp).
using results::FlowResult;
using results::Record;
using results::Status;

/// `name` is the <testsuites> name (the suite's, when all records share one).
void write_junit(std::ostream& out, const std::vector<Record>& records, std::string_view name);

}  // namespace uniperf::report
