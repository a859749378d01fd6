// The stage-cost measurements (engine/stage_costs.hpp): what they call and
// how often, not how fast (timing figures belong in benchmarks).
#include "engine/stage_costs.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <vector>

namespace uniperf::engine {
namespace {

using namespace std::chrono_literals;

/// A context that records every registration and counts the live ones.
class RecordingContext final : public Context {
 public:
  struct Call {
    const void* address;
    std::size_t length;
  };
  std::vector<Call> registered;
  int live = 0;

  Capabilities capabilities() const override { return {}; }
  std::string device() const override { return "recording"; }
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override {
    registered.push_back({address, length});
    // The buffer is mapped and touched: reading its ends must not fault.
    const std::byte last = static_cast<const volatile std::byte*>(address)[length - 1];
    EXPECT_EQ(last, std::byte{0x5a});
    return std::make_unique<Region>(address, length, live);
  }
  std::unique_ptr<Endpoint> connect(const EndpointParams&, PeerChannel&) override {
    throw TransportError("recording: no endpoints");
  }

 private:
  class Region final : public MemoryRegion {
   public:
    Region(void* address, std::size_t length, int& live)
        : MemoryRegion(address, length), live_(live) {
      ++live_;
    }
    ~Region() override { --live_; }
    Bytes remote_key() const override { return {}; }

   private:
    int& live_;
  };
};

TEST(StageCosts, CopyGivesOneRatePerTrial) {
  for (const std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{100000}}) {
    const CopySamples samples = measure_copy(size, Pages::normal, 4, 200us);
    ASSERT_EQ(samples.mb_per_s.size(), 4u) << size;
    EXPECT_GE(samples.copies_per_trial, 1u) << size;
    for (const double rate : samples.mb_per_s) EXPECT_GT(rate, 0) << size;
  }
}

TEST(StageCosts, RegistrationRegistersFreshBuffersThenTheLastAgainAndReleasesAll) {
  RecordingContext context;
  const RegistrationSamples samples = measure_registration(context, 12345, Pages::normal, 5);
  EXPECT_EQ(samples.register_us.size(), 5u);
  EXPECT_EQ(samples.release_us.size(), 5u);
  EXPECT_EQ(samples.again_us.size(), 5u);
  ASSERT_EQ(context.registered.size(), 10u);
  EXPECT_EQ(context.live, 0) << "every region released";
  for (std::size_t k = 0; k < context.registered.size(); ++k)
    EXPECT_EQ(context.registered[k].length, 12345u) << k;
  // Consecutive fresh buffers never share an address (the one before is
  // still mapped when the next is); the repeats all register the last.
  for (std::size_t k = 1; k < 5; ++k)
    EXPECT_NE(context.registered[k].address, context.registered[k - 1].address) << k;
  for (std::size_t k = 5; k < 10; ++k)
    EXPECT_EQ(context.registered[k].address, context.registered[4].address) << k;
  for (const double us : samples.register_us) EXPECT_GE(us, 0);
}

TEST(StageCosts, HugePagesAreMappedOrRefusedWithTheReason) {
  // pages_e2e reserves some for a while: judged by what was reserved both
  // before and after the attempt.
  const auto reserved = [] {
    long n = -1;
    std::ifstream("/proc/sys/vm/nr_hugepages") >> n;
    return n;
  };
  const long before = reserved();
  try {
    MappedBuffer buffer(4096, Pages::huge);
    EXPECT_EQ(buffer.data()[4095], std::byte{0});
    EXPECT_TRUE(before != 0 || reserved() != 0) << "mapped huge pages where none are reserved";
  } catch (const Unavailable& e) {
    const std::string why = e.what();
    if (before == 0 && reserved() == 0) {
      EXPECT_NE(why.find("vm.nr_hugepages is 0"), std::string::npos) << why;
    } else {
      // Reserved but all in use: the reason names how many are free.
      EXPECT_EQ(why.rfind("huge pages:", 0), 0u) << why;
    }
  }
}

}  // namespace
}  // namespace uniperf::engine
