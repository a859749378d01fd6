// Which ranks of a launched job meet in a test, and when (model::RankPairs):
// pairs that run at once, round after round. For the patterns of disjoint
// pairs a job of n ranks measures every pair in n-1 rounds rather than
// n(n-1)/2 tests one after another; the patterns of shared ranks (incast,
// fanout, neighbors, all_to_all) are one round whose pairs load the same
// ranks at once. A pure function of the pattern and the job's size.
#pragma once

#include <vector>

#include "model/test_spec.hpp"

namespace uniperf::session {

/// Two ranks measured together: the initiator measures (and its records
/// name it first), the responder serves.
struct RankPair {
  int initiator = 0;
  int responder = 0;
  friend bool operator==(const RankPair&, const RankPair&) = default;
};

/// Pairs run at the same time.
using Round = std::vector<RankPair>;

/// The rounds of `pairs` over `ranks` ranks (at least 2), in order. A rank
/// is in at most one pair of a round unless model::shares_ranks(pairs).
///   first: one round, {0, 1}.
///   all: the circle method: rank n-1 (for odd n, an absent rank that
///     leaves one rank idle per round) stays put while the others rotate,
///     so every pair meets exactly once, in n-1 rounds (n when n is odd);
///     the lower rank of a pair is its initiator.
///   ring: the pairs {i, i+1 mod n}, each rank sending to the next (for
///     two ranks the one pair {0, 1}): the even-numbered pairs, then the
///     odd ones, then, when n is odd, {n-1, 0} on its own.
///   bisection: one round, {i, i + n/2} for every i < n/2.
///   incast: one round, {r, 0} for every r > 0.
///   fanout: one round, {0, r} for every r > 0.
///   neighbors: one round, {i, i+1 mod n} for every i.
///   all_to_all: one round, {i, j} for every i != j, by initiator.
std::vector<Round> rounds_of(model::RankPairs pairs, int ranks);

}  // namespace uniperf::session
