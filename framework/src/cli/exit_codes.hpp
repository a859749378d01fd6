// The exit codes of uniperf's commands, documented in README.md and
// docs/ci.md. CI pipelines branch on them, so a code never changes meaning.
#pragma once

namespace uniperf::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitTestErrors = 1,  ///< the run finished, some records are errors
  kExitBadInput = 2,    ///< a suite, config or flag is wrong
  kExitNoPeer = 3,      ///< could not connect / handshake / the peer died
};

}  // namespace uniperf::cli
