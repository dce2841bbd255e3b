// The relay's secret rules asked of a registry URL (guard/secret_check.h).
#include "guard/secret_check.h"

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

TEST(SecretCheck, FindsAKnownTokenFormatInARegistryUrlAndNoneInAPlainOne) {
  EXPECT_FALSE(HoldsBuiltinSecret("https://registry.npmjs.org/"));
  EXPECT_FALSE(HoldsBuiltinSecret("https://corp.example/artifactory/api/npm/npm-virtual/"));
  // A Google API key as a path segment: a format the relay knows.
  EXPECT_TRUE(HoldsBuiltinSecret("https://npm.example/AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW/npm/"));
}

}  // namespace
}  // namespace mcpcell
