// What a run is made of besides its tests: the suite file that holds them
// and the provider profiles (configs) they run over. The engine never sees
// these; the suite reader builds them and the session walks them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/test_spec.hpp"

namespace uniperf::model {

struct SuiteSpec {
  std::string name;
  std::string description;
  std::string file;          ///< path it was read from
  std::string content_hash;  ///< hex SHA-256 (or FNV) of the file's bytes
  /// The YAML text it was parsed from: what a client sends a bare server
  /// (`uniperf serve`) so the server builds the same suite.
  std::string source;
  /// The tuning files applied to it (`uniperf run --tuning FILE...`), by
  /// the name of the config each is for: over that config its auto tests
  /// run the chosen setting per size.
  std::map<std::string, std::string> tuned_by;
  std::vector<TestSpec> tests;
  /// `tolerances:` metric -> allowed change in percent, for `uniperf
  /// compare --suite` (empty when the suite sets none).
  std::map<std::string, double> tolerances;
  /// `fail_on_skip: true` (or --fail-on-skip): a skipped record fails the
  /// run (exit 1), so a CI gate on a host whose device is missing does not
  /// pass green on records that measured nothing.
  bool fail_on_skip = false;
};

/// One rail of a config (`rails:`): options set over the config's own, so
/// each rail opens the plugin on its own device, port or interface.
struct RailSpec {
  std::map<std::string, std::string> options;
  std::map<std::string, std::uint32_t> option_lines;  ///< key -> line, for messages
};

/// The most rails a config may list.
inline constexpr std::size_t kMaxRails = 16;

/// A provider profile: which plugin, with which options.
struct ConfigSpec {
  std::string name;  ///< from the file's `name:` or its stem
  std::string plugin;
  std::map<std::string, std::string> options;         ///< raw values, validated by the loader
  std::map<std::string, std::uint32_t> option_lines;  ///< key -> line, for messages
  std::map<std::string, std::string> environment;     ///< env vars set before the plugin opens
  std::string file;
  std::string content_hash;
  /// The text it was parsed from (a file's YAML, or the `-c` text of a config
  /// given inline): what a client sends a bare server (`uniperf serve`).
  std::string source;
  bool given_inline = false;  ///< `-c PLUGIN:KEY=VALUE,...` rather than a file
  /// `rails:`: the rails a flow may use (docs/rails.md); empty: one rail,
  /// the config's own options.
  std::vector<RailSpec> rails;

  std::size_t rail_count() const { return rails.empty() ? 1 : rails.size(); }
  /// The config as rail `r` opens the plugin: its options with the rail's
  /// set over them (lines too, so a bad value is named where it is).
  ConfigSpec rail(std::size_t r) const {
    ConfigSpec one = *this;
    one.rails.clear();
    if (r < rails.size()) {
      for (const auto& [key, value] : rails[r].options) {
        one.options[key] = value;
        one.option_lines[key] = rails[r].option_lines.at(key);
      }
    }
    return one;
  }
};

}  // namespace uniperf::model
