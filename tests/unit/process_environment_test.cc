#include "util/process_environment.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(EnvironmentValue, FindsTheFirstEntryOfTheNameAsGetenvDoes) {
  std::vector<std::string> env = {"PATHX=1", "PATH=/bin", "PATH=/usr/bin", "EMPTY=", "BARE", "A=b=c"};
  EXPECT_EQ(EnvironmentValue(env, "PATH"), "/bin");
  EXPECT_EQ(EnvironmentValue(env, "PATHX"), "1");
  EXPECT_EQ(EnvironmentValue(env, "EMPTY"), "");
  EXPECT_EQ(EnvironmentValue(env, "A"), "b=c");
  EXPECT_EQ(EnvironmentValue(env, "BARE"), std::nullopt) << "an entry without '=' is no variable";
  EXPECT_EQ(EnvironmentValue(env, "PAT"), std::nullopt);
  EXPECT_EQ(EnvironmentValue({}, "PATH"), std::nullopt);
}

TEST(ProcessEnvironment, HoldsWhatGetenvReads) {
  ::setenv("MCPCELL_PROCESS_ENV_TEST", "v=1", 1);
  EXPECT_EQ(EnvironmentValue(ProcessEnvironment(), "MCPCELL_PROCESS_ENV_TEST"), "v=1");
  ::unsetenv("MCPCELL_PROCESS_ENV_TEST");
  EXPECT_EQ(EnvironmentValue(ProcessEnvironment(), "MCPCELL_PROCESS_ENV_TEST"), std::nullopt);
}

}  // namespace
}  // namespace mcpcell
