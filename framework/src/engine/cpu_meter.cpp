#include "engine/cpu_meter.hpp"

#include <sys/resource.h>

#include <tuple>

namespace uniperf::engine {
namespace {

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

/// {user, system} seconds this process has used so far.
std::pair<double, double> process_cpu() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return {seconds_of(usage.ru_utime), seconds_of(usage.ru_stime)};
}

}  // namespace

CpuMeter::CpuMeter() : started_(std::chrono::steady_clock::now()) {
  std::tie(user_s_, system_s_) = process_cpu();
}

CpuUse CpuMeter::elapsed() const {
  const auto [user_s, system_s] = process_cpu();
  return {.user_s = user_s - user_s_,
          .system_s = system_s - system_s_,
          .seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count()};
}

}  // namespace uniperf::engine
