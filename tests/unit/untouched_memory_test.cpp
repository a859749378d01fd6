// send_buffers: untouched. The send half of a lane's memory is never
// written, so its pages are not even faulted in (mincore says so), while the
// rest is zeroed and resident before anything is timed.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

#include "engine/mapped_buffer.hpp"

namespace uniperf::engine {
namespace {

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

/// How many of the `pages` pages at `at` are resident.
std::size_t resident_pages(const std::byte* at, std::size_t pages) {
  std::vector<unsigned char> in_core(pages);
  EXPECT_EQ(::mincore(const_cast<std::byte*>(at), pages * kPage, in_core.data()), 0);
  std::size_t resident = 0;
  for (const unsigned char page : in_core) resident += page & 1;
  return resident;
}

TEST(UntouchedMemory, TheEnginesBufferLeavesItsSendHalfUnfaultedAndZeroesTheRest) {
  const std::size_t send_half = 64 * kPage;
  MappedBuffer buffer(2 * send_half, Pages::normal, std::byte{0x5a}, send_half);
  EXPECT_EQ(resident_pages(buffer.data(), send_half / kPage), 0u);
  EXPECT_EQ(resident_pages(buffer.data() + send_half, send_half / kPage), send_half / kPage);
  EXPECT_EQ(buffer.data()[send_half], std::byte{0x5a});
  EXPECT_EQ(buffer.data()[2 * send_half - 1], std::byte{0x5a});
}

TEST(UntouchedMemory, ThePluginsMemoryIsZeroedButItsSendHalf) {
  // As a plugin's allocate_memory returns it: mapped, never written here.
  const std::size_t length = 128 * kPage;
  void* at = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(at, MAP_FAILED);
  auto* base = static_cast<std::byte*>(at);
  fill_but_untouched(base, length, 32 * kPage);
  EXPECT_EQ(resident_pages(base, 32), 0u);
  EXPECT_EQ(resident_pages(base + 32 * kPage, 96), 96u);
  // Nothing untouched: every page faulted in.
  fill_but_untouched(base, length, 0);
  EXPECT_EQ(resident_pages(base, 128), 128u);
  ::munmap(at, length);
}

}  // namespace
}  // namespace uniperf::engine
