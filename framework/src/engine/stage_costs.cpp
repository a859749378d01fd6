#include "engine/stage_costs.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/clock.hpp"

namespace uniperf::engine {
namespace {

/// Keeps the compiler from proving a copy's destination dead.
inline void clobber_memory() {
  asm volatile("" ::: "memory");
}

}  // namespace

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
    // Not zero: the caller can tell the pages were touched, not left to
    // be faulted in by the registration.
    buffer = std::make_unique<MappedBuffer>(size, pages, std::byte{0x5a});
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
