// CSV results: one row per record, for spreadsheets and scripts that do not
// read JSON. RFC 4180: comma-separated, CRLF line ends, a field holding a
// comma, a double quote, CR or LF is quoted with its quotes doubled.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "results/csv_field.hpp"
#include "results/record.hpp"

namespace uniperf::report {

// Views format the results layer's records (results/record.hpp).
using results::FlowResult;
using results::Record;
using results::Status;

/// The header row, in order; the set is stable: columns are only ever
/// appended. Latency columns are microseconds; MB/s is 10^6 B/s, Gb/s
/// 10^9 bit/s, Mmsg/s 10^6 msg/s. A measurement a record does not have is
/// an empty field. `flows` is the number of concurrent flows (1 for a
/// plain test); a test of several flows reports the first flow's parameters
/// and the aggregate bandwidth (the JSON Lines record has every flow).
const std::vector<std::string_view>& csv_columns();

/// The header and one row per record.
void write_csv(std::ostream& out, const std::vector<Record>& records);

/// One field quoted as RFC 4180 asks (only when needed).
using results::csv_field;

}  // namespace uniperf::report
