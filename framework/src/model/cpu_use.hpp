// The CPU a side spent over a measured phase (engine/cpu_meter.hpp reads
// it from the kernel's accounting), as the record carries it for both
// sides: the figure that tells busy polling from sleeping on events, as
// perftest's --cpu_util and qperf's loc/rem_cpus_used do.
#pragma once

namespace uniperf::model {

/// CPU time one process used over an interval: every thread of it (the
/// flows, the transport's own threads, the session's watchdog), user and
/// system apart, and the interval's wall time.
struct CpuUse {
  double user_s = 0;
  double system_s = 0;
  double seconds = 0;  ///< wall time of the interval

  /// CPUs kept busy on average: 1.0 is one core all the time.
  double cpus_used() const { return seconds > 0 ? (user_s + system_s) / seconds : 0; }
  CpuUse& operator+=(const CpuUse& other) {
    user_s += other.user_s;
    system_s += other.system_s;
    seconds += other.seconds;
    return *this;
  }
};

}  // namespace uniperf::model
