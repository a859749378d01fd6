#include "session/rank_pairs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace uniperf::session {
namespace {

std::vector<Round> every_pair(int ranks) {
  // The circle method over an even number of seats; with an odd number of
  // ranks the last seat is empty and whoever faces it sits the round out.
  const int seats = ranks + ranks % 2;
  const int rotating = seats - 1;
  std::vector<Round> rounds;
  for (int round = 0; round < rotating; ++round) {
    Round pairs;
    auto add = [&](int a, int b) {
      if (a >= ranks || b >= ranks) return;  // the empty seat
      pairs.push_back({std::min(a, b), std::max(a, b)});
    };
    add(round, seats - 1);
    for (int k = 1; k < seats / 2; ++k)
      add((round + k) % rotating, (round - k + rotating) % rotating);
    std::sort(pairs.begin(), pairs.end(),
              [](const RankPair& x, const RankPair& y) { return x.initiator < y.initiator; });
    rounds.push_back(std::move(pairs));
  }
  return rounds;
}

std::vector<Round> ring(int ranks) {
  if (ranks == 2) return {{{0, 1}}};
  std::vector<Round> rounds(ranks % 2 == 0 ? 2 : 3);
  for (int i = 0; i < ranks; ++i) {
    const int next = (i + 1) % ranks;
    // For odd n the last pair {n-1, 0} shares rank 0 with the first even
    // one, and rank n-1 with the last odd one: a round of its own.
    const std::size_t round =
        ranks % 2 == 1 && i == ranks - 1 ? 2 : static_cast<std::size_t>(i % 2);
    rounds[round].push_back({i, next});
  }
  return rounds;
}

}  // namespace

std::vector<Round> rounds_of(model::RankPairs pairs, int ranks) {
  if (ranks < 2)
    throw std::invalid_argument("pairs need at least 2 ranks, not " + std::to_string(ranks));
  switch (pairs) {
    case model::RankPairs::first:
      return {{{0, 1}}};
    case model::RankPairs::all:
      return every_pair(ranks);
    case model::RankPairs::ring:
      return ring(ranks);
    case model::RankPairs::bisection: {
      Round across;
      for (int i = 0; i < ranks / 2; ++i) across.push_back({i, i + ranks / 2});
      return {across};
    }
    case model::RankPairs::incast: {
      Round into_zero;
      for (int r = 1; r < ranks; ++r) into_zero.push_back({r, 0});
      return {into_zero};
    }
    case model::RankPairs::fanout: {
      Round out_of_zero;
      for (int r = 1; r < ranks; ++r) out_of_zero.push_back({0, r});
      return {out_of_zero};
    }
    case model::RankPairs::neighbors: {
      Round each_to_next;
      for (int i = 0; i < ranks; ++i) each_to_next.push_back({i, (i + 1) % ranks});
      return {each_to_next};
    }
    case model::RankPairs::all_to_all: {
      Round every_ordered_pair;
      for (int i = 0; i < ranks; ++i)
        for (int j = 0; j < ranks; ++j)
          if (i != j) every_ordered_pair.push_back({i, j});
      return {every_ordered_pair};
    }
  }
  return {};
}

}  // namespace uniperf::session
