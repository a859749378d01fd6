#include "cli/exit_codes.hpp"

#include <fmt/format.h>

#include <iostream>

namespace uniperf::cli {

int exit_code_of(const std::vector<results::Record>& records, bool fail_on_skip) {
  const results::Record* first_skipped = nullptr;
  std::size_t skipped = 0;
  for (const auto& r : records) {
    if (r.status == results::Status::error) return kExitTestErrors;
    if (r.status == results::Status::skipped && skipped++ == 0) first_skipped = &r;
  }
  if (!fail_on_skip || skipped == 0) return kExitOk;
  std::cerr << fmt::format(
      "uniperf: {} record{} skipped, a failure with fail_on_skip; the first: {} / {} ({} B): {}\n",
      skipped, skipped == 1 ? "" : "s", first_skipped->config, first_skipped->test,
      first_skipped->size, first_skipped->reason);
  return kExitTestErrors;
}

}  // namespace uniperf::cli
