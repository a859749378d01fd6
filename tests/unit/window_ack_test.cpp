// window_ack measures whole windows: a count that is not one is rounded up,
// and the record says so instead of leaving it to be found in iterations_run.
#include <gtest/gtest.h>

#include <string>

#include "fake_session.hpp"

namespace uniperf {
namespace {

TEST(WindowAck, ARoundedUpCountIsSaidInTheRecord) {
  const testing::FakeRun run = testing::run_fake_suite(
      "  - {name: acked, op: send, pattern: bandwidth, window: 64, window_mode: window_ack,\n"
      "     sizes: [64]}\n"
      "  - {name: whole, op: send, pattern: bandwidth, window: 50, window_mode: window_ack,\n"
      "     sizes: [64]}\n",
      testing::FakeFaults{});
  ASSERT_EQ(run.records.size(), 2u);
  const results::Record& rounded = run.records[0];
  ASSERT_EQ(rounded.status, results::Status::ok) << rounded.reason;
  EXPECT_EQ(rounded.iterations_run, 256u);  // 200 in whole windows of 64
  ASSERT_FALSE(rounded.warnings.empty());
  EXPECT_EQ(rounded.warnings.back(),
            "window_ack runs whole windows: 200 iterations per endpoint rounded up to 256 "
            "(window 64)");
  const results::Record& whole = run.records[1];
  EXPECT_EQ(whole.iterations_run, 200u);
  for (const auto& w : whole.warnings) EXPECT_EQ(w.find("window_ack"), std::string::npos) << w;
}

}  // namespace
}  // namespace uniperf
