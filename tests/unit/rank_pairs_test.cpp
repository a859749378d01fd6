// The rounds a launched job's ranks are paired in (session/rank_pairs.hpp).
#include "session/rank_pairs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

namespace uniperf::session {
namespace {

using model::RankPairs;

/// No rank twice in a round, every pair well formed.
void expect_disjoint(const std::vector<Round>& rounds, int ranks) {
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::set<int> busy;
    for (const RankPair& pair : rounds[r]) {
      EXPECT_NE(pair.initiator, pair.responder);
      EXPECT_GE(pair.initiator, 0);
      EXPECT_LT(pair.initiator, ranks);
      EXPECT_GE(pair.responder, 0);
      EXPECT_LT(pair.responder, ranks);
      EXPECT_TRUE(busy.insert(pair.initiator).second) << "round " << r;
      EXPECT_TRUE(busy.insert(pair.responder).second) << "round " << r;
    }
  }
}

TEST(RankPairs, AllMeetsEveryPairOnceInNMinusOneRoundsOrNWhenOdd) {
  for (int n = 2; n <= 33; ++n) {
    SCOPED_TRACE(n);
    const auto rounds = rounds_of(RankPairs::all, n);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n));
    expect_disjoint(rounds, n);
    std::set<std::pair<int, int>> met;
    for (const Round& round : rounds) {
      EXPECT_EQ(round.size(), static_cast<std::size_t>(n / 2));
      for (const RankPair& pair : round) {
        EXPECT_LT(pair.initiator, pair.responder);  // the lower rank measures
        EXPECT_TRUE(met.insert({pair.initiator, pair.responder}).second);
      }
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2));
  }
}

TEST(RankPairs, RingSendsEachRankToTheNextInTwoRoundsOrThreeWhenOdd) {
  EXPECT_EQ(rounds_of(RankPairs::ring, 2), (std::vector<Round>{{{0, 1}}}));
  EXPECT_EQ(rounds_of(RankPairs::ring, 4),
            (std::vector<Round>{{{0, 1}, {2, 3}}, {{1, 2}, {3, 0}}}));
  EXPECT_EQ(rounds_of(RankPairs::ring, 5),
            (std::vector<Round>{{{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}, {{4, 0}}}));
  for (int n = 3; n <= 17; ++n) {
    SCOPED_TRACE(n);
    const auto rounds = rounds_of(RankPairs::ring, n);
    expect_disjoint(rounds, n);
    std::set<int> senders;
    for (const Round& round : rounds) {
      for (const RankPair& pair : round) {
        EXPECT_EQ(pair.responder, (pair.initiator + 1) % n);
        EXPECT_TRUE(senders.insert(pair.initiator).second);
      }
    }
    EXPECT_EQ(senders.size(), static_cast<std::size_t>(n));
  }
}

TEST(RankPairs, BisectionPairsTheLowerHalfWithTheUpperAllAtOnce) {
  EXPECT_EQ(rounds_of(RankPairs::bisection, 2), (std::vector<Round>{{{0, 1}}}));
  EXPECT_EQ(rounds_of(RankPairs::bisection, 6), (std::vector<Round>{{{0, 3}, {1, 4}, {2, 5}}}));
  EXPECT_EQ(rounds_of(RankPairs::bisection, 5), (std::vector<Round>{{{0, 2}, {1, 3}}}));
  for (int n = 2; n <= 32; ++n) {
    const auto rounds = rounds_of(RankPairs::bisection, n);
    ASSERT_EQ(rounds.size(), 1u);
    EXPECT_EQ(rounds[0].size(), static_cast<std::size_t>(n / 2));
    expect_disjoint(rounds, n);
  }
}

/// Every pattern of shared ranks is one round of distinct, well-formed pairs.
std::vector<RankPair> one_round_of_distinct_pairs(RankPairs pairs, int ranks) {
  const auto rounds = rounds_of(pairs, ranks);
  EXPECT_EQ(rounds.size(), 1u);
  if (rounds.size() != 1) return {};
  std::set<std::pair<int, int>> seen;
  for (const RankPair& pair : rounds[0]) {
    EXPECT_NE(pair.initiator, pair.responder);
    EXPECT_GE(std::min(pair.initiator, pair.responder), 0);
    EXPECT_LT(std::max(pair.initiator, pair.responder), ranks);
    EXPECT_TRUE(seen.insert({pair.initiator, pair.responder}).second);
  }
  return rounds[0];
}

TEST(RankPairs, IncastSendsEveryOtherRankIntoRankZeroAtOnce) {
  EXPECT_EQ(rounds_of(RankPairs::incast, 4), (std::vector<Round>{{{1, 0}, {2, 0}, {3, 0}}}));
  for (int n = 2; n <= 32; ++n) {
    const auto round = one_round_of_distinct_pairs(RankPairs::incast, n);
    EXPECT_EQ(round.size(), static_cast<std::size_t>(n - 1));
    for (const RankPair& pair : round) EXPECT_EQ(pair.responder, 0);
  }
}

TEST(RankPairs, FanoutSendsRankZeroToEveryOtherRankAtOnce) {
  EXPECT_EQ(rounds_of(RankPairs::fanout, 3), (std::vector<Round>{{{0, 1}, {0, 2}}}));
  for (int n = 2; n <= 32; ++n) {
    const auto round = one_round_of_distinct_pairs(RankPairs::fanout, n);
    EXPECT_EQ(round.size(), static_cast<std::size_t>(n - 1));
    for (const RankPair& pair : round) EXPECT_EQ(pair.initiator, 0);
  }
}

TEST(RankPairs, NeighborsSendEachRankToTheNextAllAtOnce) {
  EXPECT_EQ(rounds_of(RankPairs::neighbors, 2), (std::vector<Round>{{{0, 1}, {1, 0}}}));
  EXPECT_EQ(rounds_of(RankPairs::neighbors, 3), (std::vector<Round>{{{0, 1}, {1, 2}, {2, 0}}}));
  for (int n = 2; n <= 32; ++n) {
    const auto round = one_round_of_distinct_pairs(RankPairs::neighbors, n);
    EXPECT_EQ(round.size(), static_cast<std::size_t>(n));
    for (const RankPair& pair : round) EXPECT_EQ(pair.responder, (pair.initiator + 1) % n);
  }
}

TEST(RankPairs, AllToAllRunsEveryOrderedPairAtOnce) {
  EXPECT_EQ(rounds_of(RankPairs::all_to_all, 3),
            (std::vector<Round>{{{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}}}));
  for (int n = 2; n <= 32; ++n) {
    const auto round = one_round_of_distinct_pairs(RankPairs::all_to_all, n);
    EXPECT_EQ(round.size(), static_cast<std::size_t>(n * (n - 1)));
  }
}

TEST(RankPairs, OnlyThePatternsOfSharedRanksShareRanks) {
  for (std::size_t i = 0; i < model::kRankPairsCount; ++i) {
    const auto pairs = static_cast<RankPairs>(i);
    if (!model::shares_ranks(pairs)) expect_disjoint(rounds_of(pairs, 7), 7);
  }
  EXPECT_TRUE(model::shares_ranks(RankPairs::incast));
  EXPECT_FALSE(model::shares_ranks(RankPairs::bisection));
}

TEST(RankPairs, FirstIsRanksZeroAndOneWhateverTheSize) {
  for (int n : {2, 3, 64})
    EXPECT_EQ(rounds_of(RankPairs::first, n), (std::vector<Round>{{{0, 1}}}));
}

TEST(RankPairs, ALoneRankHasNoPairs) {
  EXPECT_THROW(rounds_of(RankPairs::all, 1), std::invalid_argument);
}

}  // namespace
}  // namespace uniperf::session
