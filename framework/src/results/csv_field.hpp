// One CSV field quoted as RFC 4180 asks, only when needed: the files written
// as CSV (the trace, the kept samples, the CSV report) name configs that may
// hold commas (`-c ucx:transports=posix,self`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace uniperf::results {

std::string csv_field(std::string_view text);

/// The fields of one CSV line, quotes undone (a field's doubled quote is
/// one quote). A line of the files above never holds a line break.
std::vector<std::string> csv_fields(std::string_view line);

}  // namespace uniperf::results
