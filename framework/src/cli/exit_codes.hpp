// The exit codes of uniperf's commands, documented in README.md and
// docs/ci.md. CI pipelines branch on them, so a code never changes meaning.
#pragma once

#include <vector>

#include "results/record.hpp"

namespace uniperf::cli {

/// 1 and 3 mean different things to `run` and to `compare`; 0 and 2 are
/// shared by every command.
enum ExitCode : int {
  kExitOk = 0,             ///< run: every test ran or was skipped; compare: pass
  kExitTestErrors = 1,     ///< run: the run finished, some records are errors (or skipped,
                           ///< with --fail-on-skip)
  kExitRegression = 1,     ///< compare: some (config, test, size) regressed
  kExitBadInput = 2,       ///< a suite, config, flag or result file is wrong
  kExitNoPeer = 3,         ///< run: could not connect / handshake / the peer died
  kExitIncomparable = 3,   ///< compare: nothing measured in both, or another schema major
  kExitInterrupted = 130,  ///< run: ended by SIGINT/SIGTERM/SIGHUP; finished records kept
};

/// A finished run's code from its records: kExitTestErrors when one is an
/// error, or skipped while `fail_on_skip` (said on stderr, with how many and
/// the first one's reason); else kExitOk.
int exit_code_of(const std::vector<results::Record>& records, bool fail_on_skip);

}  // namespace uniperf::cli
