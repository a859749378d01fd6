// The timed loop's clock. On x86-64 it reads the invariant TSC (one rdtsc,
// no system call); elsewhere CLOCK_MONOTONIC_RAW through steady_clock. The
// choice is made at compile time, so reading the clock never branches.
// calibrate() measures the tick rate against CLOCK_MONOTONIC_RAW once per
// process and says whether the TSC is invariant, for the result record.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace uniperf::engine {

using Ticks = std::uint64_t;

inline Ticks now() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<Ticks>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count());
#endif
}

struct ClockInfo {
  std::string source;         ///< "tsc" or "steady_clock"
  double ticks_per_us = 1e3;  ///< calibrated rate
  bool invariant = true;      ///< constant_tsc and nonstop_tsc seen in /proc/cpuinfo
  /// The rate of one 20 ms window checked over the next against
  /// CLOCK_MONOTONIC_RAW: how far a reading converted at the calibrated
  /// rate strays from the kernel's clock, in parts per million.
  double calibration_error_ppm = 0;
  /// What one reading costs, in nanoseconds (the least of several runs of
  /// back-to-back reads): a latency sample carries one.
  double read_ns = 0;
  /// A reading and CLOCK_MONOTONIC_RAW's time at the calibration's end:
  /// the start of lifetime_ticks_per_us()'s interval.
  Ticks anchor_ticks = 0;
  double anchor_raw_us = 0;
};

/// Measured once per process (about 40 ms the first time), then cached.
const ClockInfo& clock_info();

/// The tick rate over this process's life so far, against
/// CLOCK_MONOTONIC_RAW (the calibrated rate until a second has passed):
/// for placing readings on the wall clock long after they were taken,
/// where a 20 ms calibration's error of a few hundred ppm on a loaded
/// machine would move a reading a second back by as many microseconds.
double lifetime_ticks_per_us();

inline double ticks_to_us(Ticks ticks) {
  return static_cast<double>(ticks) / clock_info().ticks_per_us;
}

/// The clock reading `seconds` after `start`; "never" (the largest reading)
/// for 0 or for a duration past what the clock can count, so a duration of
/// 1e30 s cannot wrap around to a deadline already passed.
inline Ticks deadline_after(Ticks start, double seconds) {
  if (seconds <= 0) return std::numeric_limits<Ticks>::max();
  const double ticks = seconds * 1e6 * clock_info().ticks_per_us;
  const auto room = static_cast<double>(std::numeric_limits<Ticks>::max() - start);
  return ticks >= room ? std::numeric_limits<Ticks>::max() : start + static_cast<Ticks>(ticks);
}

}  // namespace uniperf::engine
