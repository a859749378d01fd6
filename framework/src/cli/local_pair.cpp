#include "cli/local_pair.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace uniperf::cli {
namespace {

using namespace std::chrono_literals;

std::string self_executable() {
  std::vector<char> path(4096);
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0)
    throw bootstrap::BootstrapError("cannot find the uniperf executable to start the responder");
  return std::string(path.data(), static_cast<std::size_t>(n));
}

}  // namespace

LocalPair::LocalPair(int argc, char** argv) : listener_("127.0.0.1", 0), args_(argv, argv + argc) {
  args_.emplace_back("--pair-connect");
  args_.push_back("127.0.0.1:" + std::to_string(listener_.port()));
  spawn({});
}

void LocalPair::spawn(const std::vector<std::string>& extra) {
  const std::string exe = self_executable();
  std::vector<std::string> args = args_;
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> child_argv;
  for (auto& a : args) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);

  child_ = ::fork();
  if (child_ < 0)
    throw bootstrap::BootstrapError(std::string("cannot start the responder: ") +
                                    std::strerror(errno));
  if (child_ == 0) {
    // The responder prints nothing on success; its errors go to stderr.
    ::execv(exe.c_str(), child_argv.data());
    std::_Exit(127);
  }
}

LocalPair::~LocalPair() {
  reap();
}

void LocalPair::reap() {
  if (child_ > 0) {
    ::kill(child_, SIGKILL);
    ::waitpid(child_, nullptr, 0);
    child_ = -1;
  }
}

void LocalPair::replace(const std::string& resume) {
  reap();
  spawn({"--pair-resume", resume});
}

std::unique_ptr<bootstrap::Bootstrap> LocalPair::accept() {
  // Accept in short slices so a responder that died at start-up is reported
  // at once instead of after the whole timeout.
  for (int slice = 0; slice < 100; ++slice) {
    try {
      return listener_.accept(0, 200ms);
    } catch (const bootstrap::BootstrapError&) {
      int status = 0;
      if (::waitpid(child_, &status, WNOHANG) == child_) {
        child_ = -1;
        throw bootstrap::BootstrapError(
            "the local responder process exited before connecting (status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")");
      }
    }
  }
  throw bootstrap::BootstrapError("the local responder process did not connect within 20 s");
}

int LocalPair::wait() {
  for (int slice = 0; slice < 100 && child_ > 0; ++slice) {
    int status = 0;
    if (::waitpid(child_, &status, WNOHANG) == child_) {
      child_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(50ms);
  }
  return -1;  // the destructor kills it
}

}  // namespace uniperf::cli
