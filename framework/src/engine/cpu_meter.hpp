// Reads the CPU this process uses (getrusage) before and after a measured
// phase, never inside it.
#pragma once

#include <chrono>

#include "model/cpu_use.hpp"

namespace uniperf::engine {

using model::CpuUse;

/// Started on construction; elapsed() is the CPU used since.
class CpuMeter {
 public:
  CpuMeter();
  CpuUse elapsed() const;

 private:
  double user_s_, system_s_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace uniperf::engine
