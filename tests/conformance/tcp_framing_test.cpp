// The tcp plugin's receive path (plugins/tcp/tcp_endpoint.hpp) over a real
// socket pair: small receives read through its staging buffer (several
// messages per recv), large ones in place, in any mix, truncating a message
// longer than its receive either way; every byte where it belongs, in order.
// The same with the receiver sleeping between polls, in poll(2) and inside a
// blocking recv (the option `wait`), which stages the bytes it brings.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <thread>
#include <uniperf/plugin.hpp>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "loader/plugin_registry.hpp"
#include "suite/suite.hpp"

namespace uniperf {
namespace {

using namespace std::chrono_literals;

/// Must match plugins/tcp/tcp_endpoint.cpp's status for a truncated message.
constexpr std::int32_t kTruncated = 1;

std::byte pattern(std::size_t message, std::size_t i) {
  return static_cast<std::byte>((message * 131 + i * 7 + 1) & 0xff);
}

/// How the receiving side is configured and whether it sleeps in wait()
/// before each poll.
struct Receiving {
  std::string name;
  std::string config;  ///< inline config (-c), or "" for configs/tcp.yaml
  bool sleeps;
};

class TcpFraming : public testing::TestWithParam<Receiving> {};

TEST_P(TcpFraming, StagedAndInPlaceReceivesInAnyMixKeepEveryByteInOrder) {
  loader::PluginRegistry plugins{{std::filesystem::path(UNIPERF_PLUGIN_DIR)}};
  Plugin* tcp = plugins.find("tcp");
  if (tcp == nullptr) GTEST_SKIP() << "the tcp plugin: " << plugins.why_missing("tcp");
  const Receiving& receiving = GetParam();
  const auto config =
      receiving.config.empty()
          ? suite::load_config(std::string(UNIPERF_SOURCE_DIR) + "/configs/tcp.yaml")
          : suite::parse_inline_config(receiving.config);
  const Options options = suite::validate_options(config, tcp->options());
  auto sender_context = tcp->open(options);
  auto receiver_context = tcp->open(options);

  // Sizes against receive lengths: staged receives (up to 4 KiB) and in-place
  // ones, exact fits, a message longer than a staged receive and one longer
  // than an in-place receive (both truncated), empty and one-byte messages,
  // a run of small ones that one recv brings together, and runs of equal
  // in-place ones, as a stream sends them: one with a receive too short for
  // its message in the middle, one of 360 KB, more than a fresh socket's
  // buffers take in one go (so reads can end part-way through a message),
  // and one whose receives share a buffer (as `buffers: single` posts them).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> messages = {
      {8, 4096},    {64, 64},       {5000, 8192}, {1, 4096},     {3000, 4096}, {9000, 8192},
      {100, 50},    {0, 16},        {4096, 4096}, {4097, 65536}, {7, 8},       {7, 8},
      {7, 8},       {20000, 20000}, {12, 4096},   {70000, 4096}, {6000, 8192}, {6000, 8192},
      {6000, 8192}, {6000, 5000},   {6000, 8192}, {6000, 8192}};
  for (int i = 0; i < 40; ++i) messages.push_back({9000, 9000});
  for (int i = 0; i < 4; ++i) messages.push_back({5000, 5000});
  // Where each message comes from and lands: its own room in both buffers,
  // except the last four, whose receives share one (only the last one's
  // bytes are left in it).
  const std::size_t first_sharing = messages.size() - 4;
  std::vector<std::size_t> source_at, target_at;
  std::size_t source_total = 0, target_total = 0;
  for (std::size_t m = 0; m < messages.size(); ++m) {
    const std::size_t room = std::max(messages[m].first, messages[m].second);
    source_at.push_back(source_total);
    source_total += room;
    target_at.push_back(target_total);
    if (m < first_sharing || m + 1 == messages.size()) target_total += room;
  }

  EndpointParams params;
  params.max_message = 70000;
  params.send_depth = static_cast<std::uint32_t>(messages.size());
  params.recv_depth = static_cast<std::uint32_t>(messages.size());
  auto [sender_end, receiver_end] = bootstrap::make_in_process_pair();
  auto connecting = std::async(std::launch::async, [&, end = sender_end.get()] {
    bootstrap::BootstrapPeerChannel channel(*end);
    return sender_context->connect(params, channel);
  });
  bootstrap::BootstrapPeerChannel channel(*receiver_end);
  auto receiver = receiver_context->connect(params, channel);
  auto sender = connecting.get();

  std::vector<std::byte> source(source_total), target(target_total, std::byte{0xee});
  auto source_region = sender_context->register_memory(source.data(), source.size());
  auto target_region = receiver_context->register_memory(target.data(), target.size());
  std::vector<WorkRequest> sends;
  std::vector<RecvRequest> receives;
  for (std::size_t m = 0; m < messages.size(); ++m) {
    const auto [size, room] = messages[m];
    for (std::size_t i = 0; i < size; ++i) source[source_at[m] + i] = pattern(m, i);
    sends.push_back(
        {.id = m, .length = size, .local = source_region.get(), .local_offset = source_at[m]});
    receives.push_back(
        {.id = m, .local = target_region.get(), .offset = target_at[m], .length = room});
  }
  // A polling receiver gets every send at once: the stream then holds many
  // messages, and a staged recv takes several. A sleeping one gets them one
  // at a time, each into an empty socket, and waits before each poll: its
  // wait() then reads each message's start (wait: recv), and poll the rest.
  receiver->post_recv(receives.data(), receives.size());
  std::size_t posted = receiving.sleeps ? 1 : sends.size();
  sender->post(sends.data(), posted);

  std::vector<Completion> got;
  std::size_t sent = 0;
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while ((got.size() < messages.size() || sent < messages.size()) &&
         std::chrono::steady_clock::now() < give_up) {
    Completion c[16];
    sent += sender->poll(c, 16);
    // The sender moves bytes only while polled: the sleep is short.
    if (receiving.sleeps) receiver->wait(2ms, 1);
    const std::size_t n = receiver->poll(c, 16);
    got.insert(got.end(), c, c + n);
    if (n == 0) std::this_thread::yield();
    if (posted < sends.size() && got.size() == posted) sender->post(&sends[posted++], 1);
  }
  ASSERT_EQ(sent, messages.size());
  ASSERT_EQ(got.size(), messages.size());
  for (std::size_t m = 0; m < messages.size(); ++m) {
    SCOPED_TRACE("message " + std::to_string(m));
    const auto [size, room] = messages[m];
    const std::uint32_t kept = std::min(size, room);
    EXPECT_EQ(got[m].id, m);
    EXPECT_EQ(got[m].type, CompletionType::recv);
    EXPECT_EQ(got[m].length, kept);
    EXPECT_EQ(got[m].status, size > room ? kTruncated : 0);
    const std::size_t landed = m < first_sharing ? m : messages.size() - 1;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kept; ++i) wrong += target[target_at[m] + i] != pattern(landed, i);
    EXPECT_EQ(wrong, 0u);
    // Nothing beyond the message was written into its receive buffer.
    for (std::size_t i = kept; i < room; ++i) wrong += target[target_at[m] + i] != std::byte{0xee};
    EXPECT_EQ(wrong, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Receivers, TcpFraming,
    testing::Values(Receiving{"Polling", "", false},
                    Receiving{"SleepingInPoll", "tcp:wait=poll", true},
                    Receiving{"SleepingInRecv", "tcp:wait=recv", true},
                    Receiving{"SleepingInRecvWithTinyStaging", "tcp:wait=recv,staging=16", true},
                    Receiving{"SleepingInRecvWithLargeStaging", "tcp:wait=recv,staging=64K", true}),
    [](const testing::TestParamInfo<Receiving>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace uniperf
