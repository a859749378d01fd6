#include "engine/clock.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace uniperf::engine {
namespace {

double monotonic_raw_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Ticks per microsecond over one window of `window_us`, bracketing each end
// of the window with two reads so a preemption between them is visible.
double measure_rate(double window_us) {
  const double start_us = monotonic_raw_us();
  const Ticks start = now();
  double end_us = start_us;
  while (end_us - start_us < window_us) end_us = monotonic_raw_us();
  const Ticks end = now();
  return static_cast<double>(end - start) / (end_us - start_us);
}

bool cpu_has_invariant_tsc() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}

/// Nanoseconds per reading of now(), the least over several runs of
/// back-to-back reads (a run that was preempted only ever costs more).
double read_cost_ns(double ticks_per_us) {
  constexpr int kReads = 1000, kRuns = 20;
  double least = 1e300;
  for (int run = 0; run < kRuns; ++run) {
    const Ticks start = now();
    Ticks last = start;
    for (int k = 0; k < kReads; ++k) last = now();
    least = std::min(least, static_cast<double>(last - start) / kReads);
  }
  return least / ticks_per_us * 1e3;
}

ClockInfo calibrate() {
  ClockInfo info;
#if defined(__x86_64__) || defined(__i386__)
  info.source = "tsc";
  info.invariant = cpu_has_invariant_tsc();
  // Two windows: the second is the rate; their disagreement is the error.
  const double first = measure_rate(20'000);
  const double second = measure_rate(20'000);
  info.ticks_per_us = second;
  info.calibration_error_ppm = std::fabs(first - second) / second * 1e6;
#else
  info.source = "steady_clock";
  info.ticks_per_us = 1e3;  // nanoseconds
#endif
  info.read_ns = read_cost_ns(info.ticks_per_us);
  info.anchor_raw_us = monotonic_raw_us();
  info.anchor_ticks = now();
  return info;
}

}  // namespace

const ClockInfo& clock_info() {
  static const ClockInfo info = calibrate();
  return info;
}

double lifetime_ticks_per_us() {
  const ClockInfo& info = clock_info();
  const double raw_us = monotonic_raw_us();
  const Ticks ticks = now();
  // A microsecond of read jitter over a second is one ppm.
  if (raw_us - info.anchor_raw_us < 1e6 || ticks <= info.anchor_ticks) return info.ticks_per_us;
  return static_cast<double>(ticks - info.anchor_ticks) / (raw_us - info.anchor_raw_us);
}

}  // namespace uniperf::engine
