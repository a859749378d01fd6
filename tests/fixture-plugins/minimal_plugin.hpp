// A plugin with no transport behind it: enough for the loader to accept it.
#pragma once
#include <uniperf/plugin.hpp>

class MinimalPlugin : public uniperf::Plugin {
 public:
  std::string name() const override { return "good"; }
  std::string version() const override { return "1.0"; }
  std::string library_version() const override { return "none"; }
  std::string description() const override { return "loader test fixture"; }
  std::vector<uniperf::OptionSpec> options() const override {
    return {{"depth", uniperf::OptionType::integer, "4", "an integer option"}};
  }
  std::string probe() const override { return "no device (test fixture)"; }
  std::unique_ptr<uniperf::Context> open(const uniperf::Options&) override {
    throw uniperf::Unavailable("no device (test fixture)");
  }
};
