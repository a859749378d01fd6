// The costs of a pipeline's stages, each measured on its own
// (docs/pipeline.md, "Stage costs"): what a memory copy of a size moves per
// second on this host (the copy a `delivery: copy` receiver or a `source:
// staged` sender adds per fragment), and what registering and releasing a
// buffer of a size costs the plugin at hand (what a zero-copy sender pays
// for a buffer its registration cache has not seen). No peer is needed:
// these are one process's numbers, beside the end-to-end pipeline tests.
//
// The functions return raw samples; the caller computes the statistics.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <uniperf/plugin.hpp>
#include <vector>

namespace uniperf::engine {

/// The pages a measurement's buffers are mapped with.
///   normal: the kernel's base pages (transparent huge pages as its policy
///     decides; this machine's is in the provenance).
///   huge: MAP_HUGETLB pages reserved by vm.nr_hugepages, as itperf asked
///     for large physical pages: fewer TLB misses for the copy, fewer pages
///     for a registration to pin.
enum class Pages : std::uint8_t { normal, huge };
inline constexpr std::size_t kPagesCount = 2;
const char* to_string(Pages pages);

/// Anonymous memory mapped for one measurement and touched, so no page is
/// first faulted in while timed. Throws Unavailable naming the reason when
/// the pages cannot be had ("huge pages: none are reserved ...").
class MappedBuffer {
 public:
  MappedBuffer(std::size_t length, Pages pages);
  ~MappedBuffer();
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;

  std::byte* data() const { return data_; }
  std::size_t length() const { return length_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t length_ = 0;
  std::size_t mapped_ = 0;  ///< length_ rounded up to the page size
};

/// memcpy of `size` bytes between two buffers of `pages`, the same two each
/// time (a cache-resident copy for sizes that fit: the pipeline's best
/// case). Each trial repeats the copy for at least `trial_time` (the count
/// found once, before the trials, by doubling) and gives its MB/s
/// (10^6 bytes/s).
struct CopySamples {
  std::vector<double> mb_per_s;  ///< one per trial
  std::uint64_t copies_per_trial = 0;
};
CopySamples measure_copy(std::size_t size, Pages pages, std::size_t trials,
                         std::chrono::microseconds trial_time);

/// register_memory() of a buffer of `size`, then its release, `repeats`
/// times, each on a buffer freshly mapped and touched (outside the timed
/// calls), so a registration cache keyed by address range is not hit by
/// design; then once more a registration of the last buffer again, which
/// such a cache may serve (`again_us`, one sample per repeat: registered
/// and released again, repeats times). Microseconds per call.
struct RegistrationSamples {
  std::vector<double> register_us;
  std::vector<double> release_us;
  std::vector<double> again_us;
};
RegistrationSamples measure_registration(Context& context, std::size_t size, Pages pages,
                                         std::size_t repeats);

}  // namespace uniperf::engine
