// `uniperf run SUITE --quick`: a suite's short form for CI and a first look.
// A suite may carry a `quick:` mapping of test keys (sizes, fragment,
// duration, ...); --quick applies it: each key replaces its value where the
// suite sets it, in `defaults:` and in every test that sets it itself, and a
// key the suite sets nowhere goes into `defaults:`. So `quick: {sizes: [4K,
// 1M], fragment: [1K, 64K], duration: 0.1s}` shortens every test without
// making a whole-message test a pipelined one.
#pragma once

#include <string>

namespace uniperf::suite {

/// The suite's text with its `quick:` mapping applied, led by a comment
/// saying so: a suite text of its own (its hash is what a peer and the
/// records see). Throws SpecError at the `quick` key when the suite has
/// none, or when the suite with those values is not a valid suite.
std::string apply_quick(const std::string& suite_text, const std::string& suite_file);

}  // namespace uniperf::suite
