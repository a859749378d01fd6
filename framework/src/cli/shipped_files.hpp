// The suites and configs an install ships (share/uniperf/suites,
// share/uniperf/configs beside bin/), found by name when the path given on
// the command line does not exist: `uniperf run quick -c ucx-shm` from any
// directory runs the installed suites/quick.yaml over configs/ucx-shm.yaml
// (in a source tree, its own suites/ and configs/).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace uniperf::cli {

/// What an install ships, under the data directory.
enum class ShippedKind { suite, config };

/// The data directory of this uniperf: <directory of the executable>/../share/uniperf.
std::filesystem::path shipped_data_dir();

/// Where suites or configs are looked for, in order: the working
/// directory's suites/ or configs/, then the install's.
std::vector<std::filesystem::path> shelves(
    ShippedKind kind, const std::filesystem::path& data_dir = shipped_data_dir());

/// `given` when it exists (or names nothing shipped); else the file it
/// names on the working directory's shelf (<kind>s/<given>[.yaml], as in a
/// source tree), else the shipped one: DATA/<given> (suites/quick.yaml),
/// DATA/<kind>s/<given> (quick.yaml) or DATA/<kind>s/<given>.yaml (quick).
std::string find_shipped(const std::string& given, ShippedKind kind,
                         const std::filesystem::path& data_dir = shipped_data_dir());

}  // namespace uniperf::cli
