// Both sides of one flow in one process, for the engine's tests over the
// fake transport: the responder's TestRunner on a thread of its own, the
// initiator's on the caller's, joined by an in-process control channel. A
// failure on either side stops the other and is rethrown.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "engine/runner.hpp"

namespace uniperf::testing {

/// What each side measured at `size` (which its plan must hold), each side
/// running its own plan over its Contexts (one per rail).
struct BothSides {
  engine::SizeOutcome measured;  ///< the initiator's
  engine::SizeOutcome served;    ///< the responder's
};

/// A test of a stall the engine must not have passes `give_up`: past it,
/// both sides are aborted as the session's watchdog would, and
/// engine::Aborted is thrown instead of the test hanging.
inline BothSides run_both_sides(const std::vector<Context*>& initiator,
                                const engine::FlowPlan& initiator_plan,
                                const std::vector<Context*>& responder,
                                const engine::FlowPlan& responder_plan, std::uint64_t size,
                                std::chrono::seconds give_up = std::chrono::seconds(0)) {
  BothSides out;
  auto [control0, control1] = bootstrap::make_in_process_pair();
  control0->set_timeout(std::chrono::seconds(10));
  control1->set_timeout(std::chrono::seconds(10));
  std::atomic<bool> abort{false};
  std::mutex watch_mutex;
  std::condition_variable_any watch;
  std::jthread watchdog;
  if (give_up.count() > 0) {
    watchdog = std::jthread([&](std::stop_token done) {
      std::unique_lock lock(watch_mutex);
      // Nothing notifies it: it wakes when the run ended (stop) or at give_up.
      watch.wait_for(lock, done, give_up, [] { return false; });
      if (!done.stop_requested()) abort = true;
    });
  }
  std::exception_ptr responder_error;
  std::thread peer([&, c1 = control1.get()] {
    try {
      engine::TestRunner runner(responder, *c1, responder_plan, abort);
      runner.setup();
      out.served = runner.run(size);
    } catch (...) {
      responder_error = std::current_exception();
      abort = true;
    }
  });
  try {
    engine::TestRunner runner(initiator, *control0, initiator_plan, abort);
    runner.setup();
    out.measured = runner.run(size);
  } catch (...) {
    abort = true;
    control0.reset();  // wakes the responder
    peer.join();
    throw;
  }
  peer.join();
  if (responder_error) std::rethrow_exception(responder_error);
  return out;
}

}  // namespace uniperf::testing
