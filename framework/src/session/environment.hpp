// A config's `env:` map, set in the process environment for as long as the
// config runs (plugins' libraries read their variables when they open).
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uniperf::session {

/// Sets a config's environment for as long as it lives, then restores it.
/// A variable that already holds its value is left alone: a rank of a
/// launched job sets a config's environment once around a round whose
/// pairs run on threads of their own (cli/rank_job.cpp), and their
/// sessions' scopes then write nothing while the others read.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const std::map<std::string, std::string>& variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      if (old != nullptr && value == old) continue;
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace uniperf::session
