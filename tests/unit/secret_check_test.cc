// The relay's secret rules asked of a registry URL (guard/secret_check.h).
#include "guard/secret_check.h"

#include <gtest/gtest.h>

#include "source/url_credential.h"

namespace mcpcell {
namespace {

TEST(SecretCheck, FindsAKnownTokenFormatInARegistryUrlAndNoneInAPlainOne) {
  EXPECT_FALSE(HoldsBuiltinSecret("https://registry.npmjs.org/"));
  EXPECT_FALSE(HoldsBuiltinSecret("https://corp.example/artifactory/api/npm/npm-virtual/"));
  // A Google API key as a path segment: a format the relay knows.
  EXPECT_TRUE(HoldsBuiltinSecret("https://npm.example/AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW/npm/"));
}

// The registries people use, as the install-script cells' check reads
// them with the relay's rules: none is taken for a token.
TEST(SecretCheck, RealRegistryUrlsHoldNoToken) {
  for (const char* url : {
           "https://registry.npmjs.org/",
           "https://registry.yarnpkg.com/",
           "https://npm.pkg.github.com/",
           "https://gitlab.com/api/v4/projects/12345678/packages/npm/",
           "https://gitlab.example.com/api/v4/groups/42/-/packages/npm/",
           "https://mycompany.jfrog.io/artifactory/api/npm/npm-remote/",
           "https://my-domain-111122223333.d.codeartifact.us-west-2.amazonaws.com/npm/my-repo/",
           "https://pkgs.dev.azure.com/contoso/_packaging/contoso-feed/npm/registry/",
           "https://nexus.example.com/repository/npm-group/",
           "http://localhost:4873/",
           "https://registry.npmmirror.com/",
       }) {
    EXPECT_FALSE(RegistryUrlHoldsToken(url, HoldsBuiltinSecret)) << url;
  }
}

}  // namespace
}  // namespace mcpcell
