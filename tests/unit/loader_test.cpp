// The loader against plugins broken on purpose (tests/fixture-plugins/):
// each is reported with its reason and the good one still loads.
#include <gtest/gtest.h>

#include "loader/plugin_registry.hpp"

namespace uniperf::loader {
namespace {

const LoadedPlugin* by_file(const PluginRegistry& registry, const std::string& file) {
  for (const auto& p : registry.plugins()) {
    if (p.path.filename() == file) return &p;
  }
  return nullptr;
}

class LoaderTest : public ::testing::Test {
 protected:
  PluginRegistry registry{{UNIPERF_TEST_PLUGIN_DIR}};
};

TEST_F(LoaderTest, LoadsTheGoodPluginDespiteBrokenNeighbours) {
  ASSERT_NE(registry.find("good"), nullptr);
  EXPECT_EQ(registry.find("good")->version(), "1.0");
  EXPECT_EQ(registry.plugins().size(), 9u);
}

TEST_F(LoaderTest, ReportsAMissingEntrySymbol) {
  const auto* p = by_file(registry, "libuniperf-no_entry.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("uniperf_plugin_entry"), std::string::npos) << p->load_error;
}

TEST_F(LoaderTest, RefusesAnotherMajorAbi) {
  const auto* p = by_file(registry, "libuniperf-wrong_abi.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("ABI " + std::to_string(kAbiMajor + 1) + ".0"), std::string::npos)
      << p->load_error;
}

// A plugin built before the queue limits joined Capabilities (3.0).
TEST_F(LoaderTest, RefusesAPluginOfTheLastMajorAbi) {
  const auto* p = by_file(registry, "libuniperf-abi2_plugin.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("ABI 2.0"), std::string::npos) << p->load_error;
}

TEST_F(LoaderTest, RefusesANewerMinorAbi) {
  const auto* p = by_file(registry, "libuniperf-newer_minor.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("rebuild"), std::string::npos) << p->load_error;
}

TEST_F(LoaderTest, RefusesAPluginBuiltWithOtherTypeLayouts) {
  const auto* p = by_file(registry, "libuniperf-wrong_fingerprint.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  const std::string expected =
      "libuniperf-wrong_fingerprint.so was built with other type "
      "layouts than this uniperf (WorkRequest " +
      std::to_string(sizeof(WorkRequest) + 8) + " bytes, here " +
      std::to_string(sizeof(WorkRequest)) + "): rebuild";
  EXPECT_NE(p->load_error.find(expected), std::string::npos) << p->load_error;
}

TEST_F(LoaderTest, RefusesAPluginWhoseNameIsNotItsFileStem) {
  const auto* p = by_file(registry, "libuniperf-misnamed.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("libuniperf-misnamed.so calls itself 'impostor' (name())"),
            std::string::npos)
      << p->load_error;
  EXPECT_NE(p->load_error.find("rename it libuniperf-impostor.so"), std::string::npos)
      << p->load_error;
  // Neither name finds it: a config naming either gets a reason, not this code.
  EXPECT_EQ(registry.find("impostor"), nullptr);
  EXPECT_EQ(registry.find("misnamed"), nullptr);
  EXPECT_NE(registry.why_missing("misnamed").find("calls itself"), std::string::npos);
}

TEST_F(LoaderTest, SurvivesAThrowingFactory) {
  const auto* p = by_file(registry, "libuniperf-throwing_factory.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("cannot initialise the fixture"), std::string::npos)
      << p->load_error;
}

TEST_F(LoaderTest, ReportsAFileThatIsNotALibrary) {
  const auto* p = by_file(registry, "libuniperf-garbage.so");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->load_error.find("cannot load"), std::string::npos) << p->load_error;
}

TEST_F(LoaderTest, ExplainsWhyAPluginIsMissing) {
  EXPECT_NE(registry.why_missing("wrong_abi").find("ABI"), std::string::npos);
  EXPECT_NE(registry.why_missing("nonexistent").find("no plugin named 'nonexistent'"),
            std::string::npos);
  EXPECT_EQ(registry.find("nonexistent"), nullptr);
}

TEST_F(LoaderTest, AnUnavailableDeviceIsNotALoadError) {
  Plugin* good = registry.find("good");
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->probe(), "no device (test fixture)");
  EXPECT_THROW(good->open(Options{}), Unavailable);
}

}  // namespace
}  // namespace uniperf::loader
