// plugin_support.hpp: the ring, in-order retirement, the connect-time
// outcome exchange (over the real in-process bootstrap, both sides on their
// own thread), blobs and handles.
#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <uniperf/plugin_support.hpp>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace uniperf::support {
namespace {

// ------------------------------------------------------------------ ring

TEST(CompletionRing, RoundsCapacityUpToAPowerOfTwo) {
  EXPECT_EQ(CompletionRing<int>(0).capacity(), 1u);
  EXPECT_EQ(CompletionRing<int>(5).capacity(), 8u);
  EXPECT_EQ(CompletionRing<int>(8).capacity(), 8u);
}

TEST(CompletionRing, IsFifoAcrossManyWraps) {
  CompletionRing<int> ring(4);
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 100; ++round) {
    // Varying fill levels so head and tail wrap at every offset.
    const int burst = 1 + round % 4;
    for (int i = 0; i < burst; ++i) ASSERT_TRUE(ring.push(next_in++));
    for (int i = 0; i < burst; ++i) {
      ASSERT_EQ(ring.front(), next_out++);
      ring.pop();
    }
    ASSERT_TRUE(ring.empty());
  }
  EXPECT_EQ(ring.head_sequence(), 250u);
}

TEST(CompletionRing, RefusesWhenFullAndKeepsItsContents) {
  CompletionRing<int> ring(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring.push(i));
  EXPECT_TRUE(ring.full());
  EXPECT_FALSE(ring.push(99));
  EXPECT_EQ(ring.size(), 4u);
  int out[8] = {};
  EXPECT_EQ(ring.pop_into(out, 3), 3u);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[2], 2);
  EXPECT_EQ(ring.at(0), 3);
  EXPECT_TRUE(ring.push(4));  // room again, wraps
  EXPECT_EQ(ring.pop_into(out, 8), 2u);
  EXPECT_EQ(out[1], 4);
}

TEST(CompletionRing, SlotsKeepTheirResourcesAndKnowTheirSequence) {
  CompletionRing<int> ring(4);
  int tag = 100;
  for (int& slot : ring.storage()) slot = tag++;  // per-slot resources
  for (int i = 0; i < 6; ++i) {
    int& slot = ring.push_slot();
    EXPECT_EQ(slot, 100 + i % 4);  // push_slot leaves the slot as it was
    EXPECT_EQ(ring.sequence_of(slot), static_cast<std::uint64_t>(i));
    EXPECT_EQ(&ring.at_sequence(i), &slot);
    ring.pop();
  }
}

// ------------------------------------------------------------ retirement

struct Slot {
  std::uint64_t id = 0;
  std::int32_t status = 0;
  bool signaled = false;
  bool done = true;
  int resource = 0;
};

std::vector<std::uint64_t> retire_all(Retirement<Slot>& retirement) {
  std::vector<std::uint64_t> emitted;
  EXPECT_TRUE(retirement.retire([&](const Slot& s) {
    emitted.push_back(s.id);
    return true;
  }));
  return emitted;
}

TEST(Retirement, EmitsOnlySignaledInPostingOrderWhateverOrderTheyFinish) {
  Retirement<Slot> r(8);
  Slot* slots[5];
  for (std::uint64_t id = 0; id < 5; ++id) slots[id] = &r.post(id, id == 2 || id == 4);
  // Finish 4 and 2 first: nothing retires while 0 is running.
  slots[4]->done = slots[2]->done = true;
  EXPECT_TRUE(retire_all(r).empty());
  slots[0]->done = slots[1]->done = true;
  EXPECT_EQ(retire_all(r), std::vector<std::uint64_t>({2}));  // 3 still runs
  EXPECT_EQ(r.outstanding(), 2u);
  slots[3]->done = true;
  EXPECT_EQ(retire_all(r), std::vector<std::uint64_t>({4}));
  EXPECT_TRUE(r.empty());
}

TEST(Retirement, AFailedUnsignaledRequestIsNeverHidden) {
  Retirement<Slot> r(4);
  Slot& a = r.post(10, false);
  Slot& b = r.post(11, true);
  a.status = 5;
  a.done = b.done = true;
  std::vector<std::pair<std::uint64_t, std::int32_t>> emitted;
  r.retire([&](const Slot& s) {
    emitted.emplace_back(s.id, s.status);
    return true;
  });
  ASSERT_EQ(emitted.size(), 2u);
  EXPECT_EQ(emitted[0], std::make_pair(std::uint64_t{10}, 5));
  EXPECT_EQ(emitted[1], std::make_pair(std::uint64_t{11}, 0));
}

TEST(Retirement, StopsWhenTheConsumerHasNoRoomAndResumesLater) {
  Retirement<Slot> r(4);
  for (std::uint64_t id = 0; id < 3; ++id) r.post(id, true).done = true;
  std::vector<std::uint64_t> emitted;
  auto room_for_one = [&](const Slot& s) {
    if (!emitted.empty()) return false;
    emitted.push_back(s.id);
    return true;
  };
  EXPECT_FALSE(r.retire(room_for_one));
  EXPECT_EQ(emitted, std::vector<std::uint64_t>({0}));
  EXPECT_EQ(r.outstanding(), 2u);  // the refused slot was not lost
  EXPECT_EQ(retire_all(r), std::vector<std::uint64_t>({1, 2}));
}

TEST(Retirement, PostResetsStateButKeepsPerSlotResources) {
  Retirement<Slot> r(2);
  int tag = 1;
  for (Slot& s : r.storage()) s.resource = tag++;
  for (int round = 0; round < 3; ++round) {
    Slot& s = r.post(round, false);
    EXPECT_FALSE(s.done);
    EXPECT_EQ(s.status, 0);
    EXPECT_EQ(s.resource, 1 + round % 2);
    s.status = 7;  // a failure must not leak into the slot's next use
    s.done = true;
    r.retire([](const Slot&) { return true; });
  }
}

TEST(Retirement, DoneThroughCompletesEveryEarlierRequest) {
  Retirement<Slot> r(8);
  // Start at an offset so the range wraps around the storage.
  for (int i = 0; i < 6; ++i) r.post(i, false).done = true;
  r.retire([](const Slot&) { return true; });
  for (std::uint64_t id = 6; id < 10; ++id) r.post(id, id == 8);
  r.done_through(r.at(2));  // the in-order CQ entry of id 8
  EXPECT_EQ(retire_all(r), std::vector<std::uint64_t>({8}));
  EXPECT_EQ(r.outstanding(), 1u);  // id 9 still runs
  EXPECT_FALSE(r.at(0).done);
}

// ------------------------------------------------------ outcome exchange

/// Runs `initiator` and `responder` on two threads joined by the engine's
/// in-process bootstrap, as the plugin's two sides of connect() would be.
template <class A, class B>
std::pair<std::exception_ptr, std::exception_ptr> run_pair(A initiator, B responder) {
  auto [a, b] = bootstrap::make_in_process_pair();
  auto side = [](bootstrap::Bootstrap& control, auto body) {
    bootstrap::BootstrapPeerChannel channel(control);
    try {
      body(channel);
    } catch (...) {
      return std::current_exception();
    }
    return std::exception_ptr();
  };
  auto far = std::async(std::launch::async, side, std::ref(*b), responder);
  std::exception_ptr near = side(*a, initiator);
  return {near, far.get()};
}

template <class E>
std::string thrown(const std::exception_ptr& e) {
  if (!e) return "<nothing>";
  try {
    std::rethrow_exception(e);
  } catch (const E& expected) {
    return expected.what();
  } catch (const std::exception& other) {
    return std::string("<other kind> ") + other.what();
  }
}

TEST(OutcomeExchange, PayloadsCrossWhenBothSucceed) {
  Bytes seen_by_initiator, seen_by_responder;
  auto [a, b] = run_pair(
      [&](PeerChannel& c) {
        seen_by_initiator = exchange_step(c, "demo", [] { return to_bytes("from 0"); });
      },
      [&](PeerChannel& c) {
        seen_by_responder = exchange_step(c, "demo", [] { return to_bytes("from 1"); });
      });
  EXPECT_FALSE(a);
  EXPECT_FALSE(b);
  EXPECT_EQ(to_text(seen_by_initiator), "from 1");
  EXPECT_EQ(to_text(seen_by_responder), "from 0");
}

// An Unsupported on either side SKIPs both, with the failing side's reason.
TEST(OutcomeExchange, UnsupportedOnTheResponderIsUnsupportedOnBoth) {
  auto [a, b] = run_pair(
      [](PeerChannel& c) { exchange_step(c, "demo", [] { return Bytes{}; }); },
      [](PeerChannel& c) {
        exchange_step(c, "demo", []() -> Bytes { throw Unsupported("demo: no UD on this port"); });
      });
  EXPECT_EQ(thrown<Unsupported>(b), "demo: no UD on this port");
  EXPECT_EQ(thrown<Unsupported>(a), "demo: the peer cannot: no UD on this port");
}

TEST(OutcomeExchange, UnsupportedOnTheInitiatorIsUnsupportedOnBoth) {
  auto [a, b] = run_pair(
      [](PeerChannel& c) {
        exchange_outcome(c, "demo", std::make_exception_ptr(Unsupported("demo: inline 4K")));
      },
      [](PeerChannel& c) { exchange_outcome(c, "demo", nullptr); });
  EXPECT_EQ(thrown<Unsupported>(a), "demo: inline 4K");
  EXPECT_EQ(thrown<Unsupported>(b), "demo: the peer cannot: inline 4K");
}

TEST(OutcomeExchange, UnavailableAndFailuresKeepTheirKind) {
  auto [a, b] = run_pair(
      [](PeerChannel& c) {
        exchange_outcome(c, "demo", std::make_exception_ptr(Unavailable("no device")));
      },
      [](PeerChannel& c) { exchange_outcome(c, "demo", nullptr); });
  EXPECT_EQ(thrown<Unavailable>(a), "no device");
  EXPECT_EQ(thrown<Unavailable>(b), "on the peer: no device");

  auto [c, d] = run_pair([](PeerChannel& ch) { exchange_outcome(ch, "demo", nullptr); },
                         [](PeerChannel& ch) {
                           exchange_outcome(ch, "demo",
                                            std::make_exception_ptr(TransportError("demo: bind")));
                         });
  EXPECT_EQ(thrown<TransportError>(c), "demo: the peer failed: bind");
  EXPECT_EQ(thrown<TransportError>(d), "demo: bind");
}

// When both fail, each reports its own failure, not the peer's.
TEST(OutcomeExchange, BothFailingEachKeepsItsOwn) {
  auto [a, b] = run_pair(
      [](PeerChannel& c) {
        exchange_outcome(c, "demo", std::make_exception_ptr(Unsupported("demo: mine")));
      },
      [](PeerChannel& c) {
        exchange_outcome(c, "demo", std::make_exception_ptr(TransportError("demo: yours")));
      });
  EXPECT_EQ(thrown<Unsupported>(a), "demo: mine");
  EXPECT_EQ(thrown<TransportError>(b), "demo: yours");
}

TEST(OutcomeExchange, AnEmptyBlobIsAFailureNotAnOk) {
  EXPECT_THROW(payload_or_throw(Bytes{}, "demo"), TransportError);
}

// ------------------------------------------------------------ blobs etc.

struct Address {
  std::uint32_t qpn;
  std::uint16_t lid;
  std::uint8_t gid[16];
};

TEST(Blob, RoundTripsAPod) {
  Address in{0x1234, 7, {1, 2, 3}};
  const Address out = from_blob<Address>(to_blob(in), "demo", "queue pair address");
  EXPECT_EQ(out.qpn, 0x1234u);
  EXPECT_EQ(out.lid, 7);
  EXPECT_EQ(out.gid[2], 3);
}

TEST(Blob, ASizeMismatchNamesWhatAndBothSizes) {
  Bytes shorter = to_blob(Address{});
  shorter.pop_back();
  try {
    from_blob<Address>(shorter, "demo", "queue pair address");
    FAIL() << "no exception";
  } catch (const TransportError& e) {
    const std::string text = e.what();
    EXPECT_NE(
        text.find("demo: the peer's queue pair address is " + std::to_string(sizeof(Address) - 1) +
                  " bytes, expected " + std::to_string(sizeof(Address))),
        std::string::npos)
        << text;
  }
}

int destroyed = 0;
void count_destroy(int* p) {
  destroyed += *p;
}

TEST(Handle, DestroysOnceAndNotAfterRelease) {
  int a = 1, b = 10, c = 100;
  destroyed = 0;
  {
    Handle<int*, &count_destroy> h(&a);
    Handle<int*, &count_destroy> moved(std::move(h));
    EXPECT_FALSE(h);
    EXPECT_TRUE(moved);
    moved.reset(&b);  // destroys a
    EXPECT_EQ(destroyed, 1);
    Handle<int*, &count_destroy> kept(&c);
    EXPECT_EQ(kept.release(), &c);
  }  // destroys b only
  EXPECT_EQ(destroyed, 11);
}

TEST(Handle, OwnsADescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  { Descriptor read_end(fds[0]); }
  EXPECT_EQ(::close(fds[0]), -1);  // already closed by the handle
  EXPECT_EQ(errno, EBADF);
  EXPECT_EQ(errno_text(EBADF), std::strerror(EBADF));
  ::close(fds[1]);
}

TEST(Ops, AtomicAndTwoSidedAreConstexpr) {
  static_assert(is_atomic(Op::cswap) && is_atomic(Op::fetch_add) && !is_atomic(Op::write));
  static_assert(is_two_sided(Op::send) && is_two_sided(Op::write_imm) && !is_two_sided(Op::read));
}

}  // namespace
}  // namespace uniperf::support
