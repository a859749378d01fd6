#include "engine/stage_costs.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/clock.hpp"

namespace uniperf::engine {
namespace {

/// A value of /proc/meminfo ("Hugepagesize:", in kB), or `otherwise`.
long meminfo_kb(const std::string& key, long otherwise) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  long value = 0;
  std::string unit;
  while (in >> name >> value) {
    std::getline(in, unit);
    if (name == key) return value;
  }
  return otherwise;
}

long nr_hugepages() {
  std::ifstream in("/proc/sys/vm/nr_hugepages");
  long n = -1;
  in >> n;
  return n;
}

std::string huge_pages_missing(std::size_t length, int error) {
  const long reserved = nr_hugepages();
  if (reserved == 0) {
    return "huge pages: none are reserved (vm.nr_hugepages is 0; as root: sysctl "
           "vm.nr_hugepages=N)";
  }
  return "huge pages: mapping " + std::to_string(length) +
         " bytes failed: " + std::strerror(error) + " (" +
         std::to_string(meminfo_kb("HugePages_Free:", -1)) + " of " + std::to_string(reserved) +
         " reserved pages free)";
}

/// Keeps the compiler from proving a copy's destination dead.
inline void clobber_memory() {
  asm volatile("" ::: "memory");
}

}  // namespace

const char* to_string(Pages pages) {
  return pages == Pages::huge ? "huge" : "normal";
}

MappedBuffer::MappedBuffer(std::size_t length, Pages pages) : length_(length) {
  const std::size_t page = pages == Pages::huge
                               ? static_cast<std::size_t>(meminfo_kb("Hugepagesize:", 2048)) * 1024
                               : static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  mapped_ = (std::max<std::size_t>(length, 1) + page - 1) / page * page;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (pages == Pages::huge ? MAP_HUGETLB : 0);
  void* at = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (at == MAP_FAILED) {
    const int error = errno;
    if (pages == Pages::huge) throw Unavailable(huge_pages_missing(mapped_, error));
    throw Unavailable("memory: mapping " + std::to_string(mapped_) +
                      " bytes failed: " + std::strerror(error));
  }
  data_ = static_cast<std::byte*>(at);
  std::memset(data_, 0x5a, mapped_);  // every page faulted in now, not while timed
}

MappedBuffer::~MappedBuffer() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

CopySamples measure_copy(std::size_t size, Pages pages, std::size_t trials,
                         std::chrono::microseconds trial_time) {
  using Clock = std::chrono::steady_clock;
  MappedBuffer from(size, pages);
  MappedBuffer to(size, pages);
  for (std::size_t i = 0; i < size; ++i) from.data()[i] = static_cast<std::byte>(i * 131 + 7);

  const auto copy_n = [&](std::uint64_t n) {
    const auto start = Clock::now();
    for (std::uint64_t k = 0; k < n; ++k) {
      std::memcpy(to.data(), from.data(), size);
      clobber_memory();
    }
    return Clock::now() - start;
  };
  // The count that fills a trial: doubled until one run takes a quarter of
  // it, then scaled (the clock's resolution and the first-touch effects are
  // behind us by then).
  CopySamples samples;
  std::uint64_t n = 1;
  for (;;) {
    const auto took = copy_n(n);
    if (took * 4 >= trial_time || n >= (std::uint64_t{1} << 40)) {
      const double per_copy = std::chrono::duration<double>(took).count() / n;
      const double wanted = std::chrono::duration<double>(trial_time).count() / per_copy;
      samples.copies_per_trial = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
      break;
    }
    n *= 2;
  }
  samples.mb_per_s.reserve(trials);
  for (std::size_t t = 0; t < trials; ++t) {
    const double seconds = std::chrono::duration<double>(copy_n(samples.copies_per_trial)).count();
    samples.mb_per_s.push_back(static_cast<double>(size) * samples.copies_per_trial / seconds /
                               1e6);
  }
  if (std::memcmp(to.data(), from.data(), size) != 0)
    throw std::logic_error("stage costs: memcpy left the destination unlike its source");
  return samples;
}

RegistrationSamples measure_registration(Context& context, std::size_t size, Pages pages,
                                         std::size_t repeats) {
  RegistrationSamples samples;
  samples.register_us.reserve(repeats);
  samples.release_us.reserve(repeats);
  samples.again_us.reserve(repeats);
  const auto timed = [](auto&& call) {
    const Ticks start = now();
    call();
    return ticks_to_us(now() - start);
  };
  std::unique_ptr<MappedBuffer> buffer;
  for (std::size_t r = 0; r < repeats; ++r) {
    // Mapped while the one before still is: consecutive buffers never
    // share an address (a cache that missed an unmap cannot be hit).
    buffer = std::make_unique<MappedBuffer>(size, pages);
    std::unique_ptr<MemoryRegion> region;
    samples.register_us.push_back(
        timed([&] { region = context.register_memory(buffer->data(), size); }));
    samples.release_us.push_back(timed([&] { region.reset(); }));
  }
  for (std::size_t r = 0; r < repeats && buffer; ++r) {
    std::unique_ptr<MemoryRegion> region;
    samples.again_us.push_back(
        timed([&] { region = context.register_memory(buffer->data(), size); }));
  }  // each released untimed as it goes
  return samples;
}

}  // namespace uniperf::engine
