// One CSV field quoted as RFC 4180 asks, only when needed: the files written
// as CSV (the trace, the kept samples, the CSV report) name configs that may
// hold commas (`-c ucx:transports=posix,self`).
#pragma once

#include <string>
#include <string_view>

namespace uniperf::results {

std::string csv_field(std::string_view text);

}  // namespace uniperf::results
