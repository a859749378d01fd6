// Epochs on the control connection: what a failed epoch leaves behind is
// dropped when both sides meet at the next one, an abort reaches the peer as
// PeerFailed with its reason, in band and out of band.
#include "bootstrap/epoch_channel.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace uniperf::bootstrap {
namespace {

using namespace std::chrono_literals;

std::string text(const Bytes& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

/// Both channels enter `epoch` (each begin waits for the other's sync).
void begin_both(EpochChannel& a, EpochChannel& b, std::uint32_t epoch) {
  std::thread other([&] { b.begin(epoch, 5s); });
  a.begin(epoch, 5s);
  other.join();
}

TEST(EpochChannel, MessagesOfAFailedEpochAreDroppedAtTheNextOne) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0), side1(*base1);
  begin_both(side0, side1, 1);
  side0.send_text("left behind");  // side 1 failed before reading it
  side0.send_text("also left behind");
  begin_both(side0, side1, 2);
  side0.send_text("fresh");
  EXPECT_EQ(text(side1.receive(1s)), "fresh");
  EXPECT_FALSE(side1.message_ready());
}

TEST(EpochChannel, AnAbortReachesThePeerInBandAndOutOfBand) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0), side1(*base1);
  begin_both(side0, side1, 7);
  side1.abort("receive 12 failed");
  const auto tag = side0.take_interrupt();
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(*tag, side0.interrupt_tag());
  EXPECT_THROW(side0.message_ready(), PeerFailed);
  ASSERT_TRUE(side0.peer_failure().has_value());
  EXPECT_EQ(*side0.peer_failure(), "receive 12 failed");
  // Every later wait of the failed epoch fails the same way, at once.
  EXPECT_THROW(side0.receive(10s), PeerFailed);
  // Both meet again; the failure belongs to the old epoch.
  begin_both(side0, side1, 8);
  EXPECT_FALSE(side0.peer_failure().has_value());
  side1.send_text("next test");
  EXPECT_EQ(text(side0.receive(1s)), "next test");
}

TEST(EpochChannel, AStopEndsTheEpochLikeAnAbortButIsNoFailure) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0), side1(*base1);
  begin_both(side0, side1, 3);
  side0.stop("interrupted");
  ASSERT_TRUE(side1.take_interrupt().has_value());
  EXPECT_THROW(side1.receive(10s), PeerFailed);
  EXPECT_EQ(side1.peer_failure().value_or(""), "interrupted");
  EXPECT_TRUE(side1.peer_stopped());
  // The next epoch starts clean; an abort in it is a failure again.
  begin_both(side0, side1, 4);
  EXPECT_FALSE(side1.peer_stopped());
  side0.abort("send 3 failed");
  EXPECT_THROW(side1.receive(10s), PeerFailed);
  EXPECT_FALSE(side1.peer_stopped());
}

TEST(EpochChannel, APeerThatEndedTheEpochIsSeenWithoutWaiting) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0), side1(*base1);
  begin_both(side0, side1, 5);
  side0.send_text("a message of the epoch");
  // Nothing ended: the look returns at once, and drops the epoch's message.
  EXPECT_FALSE(side1.peer_ended_epoch());
  EXPECT_FALSE(side1.message_ready());
  side0.send_text("another");
  side0.stop("interrupted");
  EXPECT_TRUE(side1.peer_ended_epoch());
  EXPECT_TRUE(side1.peer_stopped());
  EXPECT_EQ(side1.peer_failure().value_or(""), "interrupted");
}

TEST(EpochChannel, AwaitingThePeersReasonDropsTheEpochsMessages) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0), side1(*base1);
  begin_both(side0, side1, 1);
  side1.send_text("a phase message");
  side1.abort("deadline passed");
  EXPECT_EQ(side0.await_peer_failure(1s).value_or(""), "deadline passed");
  EXPECT_FALSE(side1.await_peer_failure(50ms).has_value());  // side 0 did not fail
}

TEST(EpochChannel, APeerThatSkipsItsSyncIsAProtocolError) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0);
  // A raw frame for epoch 5 where side 0 expects the sync of epoch 1.
  const std::byte frame[] = {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{5}, std::byte{0}};
  base1->send(frame);
  try {
    side0.begin(1, 1s);
    FAIL() << "accepted a message of a later epoch before the sync";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("epoch 5 before its sync for epoch 1"), std::string::npos)
        << e.what();
  }
}

TEST(EpochChannel, APeerThatNeverArrivesEndsTheWait) {
  auto [base0, base1] = make_in_process_pair();
  EpochChannel side0(*base0);
  EXPECT_THROW(side0.begin(1, 100ms), BootstrapError);
  base1.reset();  // gone
  EXPECT_THROW(side0.begin(2, 5s), BootstrapError);
}

}  // namespace
}  // namespace uniperf::bootstrap
