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

#include "engine/mapped_buffer.hpp"

namespace uniperf::engine {

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
