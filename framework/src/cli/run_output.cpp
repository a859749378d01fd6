#include "cli/run_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <thread>

namespace uniperf::cli {

RunOutput::RunOutput(const std::string& results_path, const ReportFiles& reports, std::string title,
                     const std::filesystem::path& trace_path,
                     const std::filesystem::path& samples_path)
    : results_path_(results_path),
      reports_(reports),
      title_(std::move(title)),
      sample_completions_(!reports.html.empty()) {
  if (!results_path.empty()) jsonl_.emplace(results_path);
  if (!trace_path.empty()) trace_.emplace(trace_path, title_);
  if (!samples_path.empty()) samples_.emplace(samples_path, title_);
}

void RunOutput::add(const results::Record& record) {
  std::lock_guard lock(mutex_);
  if (committed_) return;
  if (trace_) trace_->add(record);
  if (samples_) samples_->add(record);
  if (sample_completions_) {
    completions_.add(record);
    latency_samples_.add(record);
  }
  records_.push_back(record);
  results::release_trace_rows(records_.back());    // in the trace file now
  results::release_kept_samples(records_.back());  // in the samples file now
  if (jsonl_) jsonl_->add(record);
}

void RunOutput::commit() {
  std::lock_guard lock(mutex_);
  commit_locked();
}

void RunOutput::commit_locked() {
  if (committed_) return;
  committed_ = true;
  if (jsonl_) {
    jsonl_->commit();
    std::cerr << "uniperf: results written to "
              << (results::is_standard_output(results_path_) ? "standard output" : results_path_)
              << "\n";
  }
  if (trace_) {
    trace_->commit();
    std::cerr << "uniperf: per-request trace written to " << trace_->target().string() << "\n";
  }
  if (samples_) {
    samples_->commit();
    std::cerr << "uniperf: latency samples written to " << samples_->target().string() << "\n";
  }
  reports_.commit(records_, title_, &completions_, &latency_samples_);
}

namespace {

[[noreturn]] void exit_without_teardown(int exit_code) {
  std::cerr.flush();
  // No destructors, no atexit handlers: another thread may be inside a
  // transport library that would block or crash on teardown.
  ::_exit(exit_code);
}

}  // namespace

void RunOutput::finish_now(const std::string& why, int exit_code) {
  keep_finished(why);
  exit_without_teardown(exit_code);
}

void RunOutput::keep_finished(const std::string& why) {
  std::cerr << "\nuniperf: " << why << "\n";
  try {
    std::lock_guard lock(mutex_);
    if (!committed_ && (jsonl_ || !records_.empty())) {
      std::cerr << "uniperf: keeping the " << records_.size() << " finished record"
                << (records_.size() == 1 ? "" : "s") << "\n";
    }
    commit_locked();
  } catch (const std::exception& e) {
    std::cerr << "uniperf: " << e.what() << "\n";
  }
  std::cerr.flush();
}

void RunOutput::end_now(const std::string& why, int exit_code) {
  std::cerr << "\nuniperf: " << why << "\n";
  exit_without_teardown(exit_code);
}

int bound_teardown(int exit_code, std::chrono::seconds grace) {
  // Detached: a teardown that ends in time ends the process, and the thread
  // with it, while it sleeps.
  std::thread([exit_code, grace] {
    std::this_thread::sleep_for(grace);
    RunOutput::end_now(fmt::format("the run is over, but tearing the transports down has not "
                                   "ended {} s later: ending without the rest of it",
                                   grace.count()),
                       exit_code);
  }).detach();
  return exit_code;
}

}  // namespace uniperf::cli
