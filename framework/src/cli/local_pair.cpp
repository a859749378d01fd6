#include "cli/local_pair.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace uniperf::cli {

std::string self_executable() {
  std::vector<char> path(4096);
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0)
    throw bootstrap::BootstrapError("cannot find the uniperf executable to start the responder");
  return std::string(path.data(), static_cast<std::size_t>(n));
}

namespace {

using namespace std::chrono_literals;

}  // namespace

pid_t start_self(const std::vector<std::string>& argv, const std::string& output,
                 const std::vector<std::string>& extra_env, bool die_with_parent) {
  const std::string exe = self_executable();
  // Built before the fork: the child only opens, duplicates and execs.
  std::vector<std::string> args = argv;
  std::vector<char*> child_argv;
  for (auto& a : args) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);
  std::vector<std::string> env_text = extra_env;
  std::vector<char*> child_env;
  auto overridden = [&](const char* entry) {
    for (const auto& e : extra_env) {
      const auto name = e.substr(0, e.find('=') + 1);  // "NAME="
      if (std::strncmp(entry, name.c_str(), name.size()) == 0) return true;
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!overridden(*e)) child_env.push_back(*e);
  }
  for (auto& e : env_text) child_env.push_back(e.data());
  child_env.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    if (die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) std::_Exit(127);  // it ended before the line above
    }
    if (!output.empty()) {
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
    }
    ::execve(exe.c_str(), child_argv.data(), child_env.data());
    std::_Exit(127);
  }
  return child;
}

LocalPair::LocalPair(int argc, char** argv) : listener_("127.0.0.1", 0), args_(argv, argv + argc) {
  args_.emplace_back("--pair-connect");
  args_.push_back("127.0.0.1:" + std::to_string(listener_.port()));
  spawn({});
}

void LocalPair::spawn(const std::vector<std::string>& extra) {
  std::vector<std::string> args = args_;
  args.insert(args.end(), extra.begin(), extra.end());
  extra_ = extra;
  ended_status_ = 0;
  // The responder prints nothing on success; its errors go to stderr.
  child_ = start_self(args);
  if (child_ < 0)
    throw bootstrap::BootstrapError(std::string("cannot start the responder: ") +
                                    std::strerror(errno));
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
        ended_status_ = status;
        throw bootstrap::BootstrapError(
            "the local responder process exited before connecting (status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) + ")");
      }
    }
  }
  throw bootstrap::BootstrapError("the local responder process did not connect within 20 s");
}

bool LocalPair::exited_by_itself() {
  int status = 0;
  if (child_ > 0 && ::waitpid(child_, &status, WNOHANG) == child_) {
    child_ = -1;
    ended_status_ = status;
  }
  return child_ < 0 && WIFEXITED(ended_status_) && WEXITSTATUS(ended_status_) != 0;
}

std::unique_ptr<bootstrap::Bootstrap> LocalPair::connect(
    const std::function<void(bootstrap::Bootstrap&)>& handshake) {
  for (int attempt = 1;; ++attempt) {
    try {
      std::unique_ptr<bootstrap::Bootstrap> control = accept();
      handshake(*control);
      return control;
    } catch (const std::exception& e) {
      // A responder with an error of its own would only say it again.
      if (attempt == kConnectAttempts || exited_by_itself()) throw;
      std::cerr << fmt::format(
          "uniperf: lost the local responder while connecting ({}); starting a fresh one\n",
          e.what());
      reap();
      spawn(extra_);
    }
  }
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

std::vector<results::Record> LocalPair::run_replacing(
    std::unique_ptr<bootstrap::Bootstrap>& control, const model::SuiteSpec& suite,
    const std::vector<model::ConfigSpec>& configs, loader::PluginRegistry& plugins,
    const session::RunSettings& settings, const session::Observer& observer,
    const std::function<void(bootstrap::Bootstrap&)>& handshake,
    const std::function<std::string()>& why_lost) {
  std::vector<results::Record> records;
  std::optional<session::SuitePosition> resume;
  while (true) {
    session::RunOutcome part =
        session::run_from(*control, suite, configs, plugins, settings, observer, resume, true);
    std::move(part.records.begin(), part.records.end(), std::back_inserter(records));
    const bool stopping = settings.stop_requested != nullptr && settings.stop_requested->load();
    if (!part.resume_at || part.resume_at->config >= configs.size() || stopping) return records;
    // The responder died or stopped answering: a fresh one runs the rest,
    // from the test after the one it was lost in.
    resume = part.resume_at;
    const std::string why = why_lost();
    std::cerr << fmt::format(
        "uniperf: lost the local responder ({}); a fresh one goes on from config '{}' test "
        "'{}'\n",
        why.empty() ? "the control connection closed" : why, configs[resume->config].name,
        suite.tests[resume->test].name);
    control.reset();
    try {
      replace(fmt::format("{}:{}", resume->config, resume->test));
      control = connect(handshake);
    } catch (const std::exception& e) {
      std::cerr << "uniperf: cannot start a fresh local responder: " << e.what() << "\n";
      control.reset();
      return records;
    }
  }
}

}  // namespace uniperf::cli
