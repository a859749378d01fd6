// A config's env: in the process environment for as long as it runs
// (session/environment.hpp).
#include "session/environment.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace uniperf::session {
namespace {

std::string value_of(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "<unset>" : value;
}

TEST(ScopedEnvironment, SetsForItsLifeThenRestoresOrUnsets) {
  ::setenv("UNIPERF_TEST_KEPT", "before", 1);
  ::unsetenv("UNIPERF_TEST_NEW");
  {
    const ScopedEnvironment scope({{"UNIPERF_TEST_KEPT", "during"}, {"UNIPERF_TEST_NEW", "x"}});
    EXPECT_EQ(value_of("UNIPERF_TEST_KEPT"), "during");
    EXPECT_EQ(value_of("UNIPERF_TEST_NEW"), "x");
  }
  EXPECT_EQ(value_of("UNIPERF_TEST_KEPT"), "before");
  EXPECT_EQ(value_of("UNIPERF_TEST_NEW"), "<unset>");
  ::unsetenv("UNIPERF_TEST_KEPT");
}

// A rank sets a config's environment around a round whose pairs run on
// threads; each pair's session opens its own scope of the same values,
// which must neither write nor, when it ends first, undo the rank's.
TEST(ScopedEnvironment, AScopeOfValuesAlreadySetLeavesThemAlone) {
  ::unsetenv("UNIPERF_TEST_ROUND");
  {
    const std::map<std::string, std::string> config = {{"UNIPERF_TEST_ROUND", "on"}};
    const ScopedEnvironment round(config);
    const char* before = std::getenv("UNIPERF_TEST_ROUND");
    {
      const ScopedEnvironment pair(config);
      EXPECT_EQ(std::getenv("UNIPERF_TEST_ROUND"), before);  // not even rewritten
    }
    EXPECT_EQ(value_of("UNIPERF_TEST_ROUND"), "on");  // the pair's end kept the round's
  }
  EXPECT_EQ(value_of("UNIPERF_TEST_ROUND"), "<unset>");
}

}  // namespace
}  // namespace uniperf::session
