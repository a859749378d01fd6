// The fragment-sweep grid (docs/pipeline.md): from the records of a test
// swept over fragment sizes (`fragment: [..]` or `auto`: tests NAME.fragment_F),
// one grid per (config, NAME) of MB/s over (message size, fragment), and per
// size the fragment that moved the most bytes per second (the envelope). The
// HTML report draws each grid as a heatmap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/record.hpp"

namespace uniperf::report {

struct FragmentGrid {
  std::string config;
  std::string test;                      ///< the sweep's name, before ".fragment_"
  std::vector<std::uint64_t> sizes;      ///< rows, ascending
  std::vector<std::uint32_t> fragments;  ///< columns, ascending
  /// MB/s at [size][fragment]; nullopt where no record ran ok.
  std::vector<std::vector<std::optional<double>>> mb_per_s;
  /// Per size, the column of the most MB/s (nullopt: none ran ok).
  std::vector<std::optional<std::size_t>> best;
};

/// Every grid the records hold (ok bandwidth records of pipelined flows
/// whose test is named NAME.fragment_...; a grid needs two fragments or
/// more), in the order their tests first appear. A later record of the same
/// cell replaces an earlier one.
std::vector<FragmentGrid> build_fragment_grids(const std::vector<results::Record>& records);

}  // namespace uniperf::report
