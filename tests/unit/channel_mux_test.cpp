// The control channels of concurrent flows: each flow's messages reach only
// that flow's channel, in order, whichever thread happens to read the shared
// connection; deadlines and a lost peer still end every wait.
#include "bootstrap/channel_mux.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace uniperf::bootstrap {
namespace {

using namespace std::chrono_literals;

std::string text(const Bytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

TEST(ChannelMux, EachChannelGetsOnlyItsOwnMessagesInOrder) {
  auto [left, right] = make_in_process_pair();
  constexpr std::size_t kChannels = 3;
  constexpr int kMessages = 200;
  ChannelMux a(*left, kChannels);
  ChannelMux b(*right, kChannels);

  // One thread per channel and side, as concurrent flows run: every channel
  // sends its numbered messages and expects the peer's, interleaved on the
  // one connection by the scheduler.
  std::vector<std::string> problems(2 * kChannels);
  std::vector<std::jthread> threads;
  for (std::size_t side = 0; side < 2; ++side) {
    for (std::size_t c = 0; c < kChannels; ++c) {
      threads.emplace_back([&, side, c] {
        Bootstrap& channel = (side == 0 ? a : b).channel(c);
        for (int i = 0; i < kMessages; ++i) {
          channel.send_text(std::to_string(c) + ":" + std::to_string(i));
          const std::string got = channel.receive_text(5s);
          const std::string expected = std::to_string(c) + ":" + std::to_string(i);
          if (got != expected && problems[side * kChannels + c].empty()) {
            problems[side * kChannels + c] = "expected " + expected + ", got " + got;
          }
        }
        channel.barrier(5s);
      });
    }
  }
  threads.clear();  // joins
  for (const auto& problem : problems) EXPECT_EQ(problem, "");
  // Nothing is left over for the connection's next user.
  EXPECT_FALSE(left->message_ready());
  EXPECT_FALSE(right->message_ready());
}

TEST(ChannelMux, MessageReadyFilesWhatItReadsUnderTheRightChannel) {
  auto [left, right] = make_in_process_pair();
  ChannelMux a(*left, 2);
  ChannelMux b(*right, 2);
  a.channel(1).send_text("for one");
  a.channel(0).send_text("for zero");
  // Channel 0 asks first; the message at the head of the connection is
  // channel 1's, so it is filed there, not handed to channel 0.
  EXPECT_FALSE(b.channel(0).message_ready());
  EXPECT_TRUE(b.channel(0).message_ready());
  EXPECT_TRUE(b.channel(1).message_ready());
  EXPECT_EQ(text(b.channel(0).receive(1s)), "for zero");
  EXPECT_EQ(text(b.channel(1).receive(1s)), "for one");
  EXPECT_FALSE(b.channel(1).message_ready());
}

TEST(ChannelMux, ASilentPeerEndsTheWaitAtItsDeadline) {
  auto [left, right] = make_in_process_pair();
  ChannelMux a(*left, 2);
  ChannelMux b(*right, 2);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(b.channel(1).receive(200ms), BootstrapError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(ChannelMux, ALostPeerFailsEveryChannel) {
  auto [left, right] = make_in_process_pair();
  ChannelMux b(*right, 2);
  std::jthread waiter([&] { EXPECT_THROW(b.channel(0).receive(10s), BootstrapError); });
  std::this_thread::sleep_for(50ms);
  left.reset();  // the peer goes away
  EXPECT_THROW(b.channel(1).receive(10s), BootstrapError);
}

TEST(ChannelMux, AMessageForAChannelThePeerDoesNotHaveIsAProtocolError) {
  auto [left, right] = make_in_process_pair();
  ChannelMux a(*left, 3);  // the peer believes the test has three flows
  ChannelMux b(*right, 2);
  a.channel(2).send_text("stray");
  try {
    b.channel(0).receive(1s);
    FAIL() << "no error";
  } catch (const BootstrapError& e) {
    EXPECT_NE(std::string(e.what()).find("channel 2 of 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uniperf::bootstrap
