// Whether a registry URL carries a credential an install-script cell must
// not be given (source/url_credential.h).
#include "source/url_credential.h"

#include <gtest/gtest.h>

#include "source/registry_url.h"

namespace mcpcell {
namespace {

const SecretCheck kNone = [](std::string_view) { return false; };

TEST(UrlCredential, UserinfoAsNpmReadsTheAuthority) {
  EXPECT_TRUE(HasUserinfo("https://u:p@host/"));
  EXPECT_TRUE(HasUserinfo("https://TOKEN@host/"));
  EXPECT_TRUE(HasUserinfo("http:/u:p@host/"));  // npm reads any run of slashes
  EXPECT_TRUE(HasUserinfo("https:\\\\u:p@host/"));
  EXPECT_FALSE(HasUserinfo("https://host/a@b/"));  // in the path: no userinfo
  EXPECT_FALSE(HasUserinfo("https://host/"));
}

TEST(UrlCredential, TokensInThePathOrQuery) {
  for (const char* url : {
           "https://npm.fury.io/a1B2c3D4e5F6g7H8i9J0/someone/",        // Gemfury
           "https://corp.example/artifactory/api/npm/AKCp8jQxyz0123456789abcdEFGH/",  // an API key
           "https://r.example/npm/?token=0123456789abcdef0123456789abcdef",   // hex in the query
           "https://r.example/abcdefghijklmnopqrstuvwxyzabcdef/",      // 32 letters
           "https://r.example/key/123e4567-e89b-12d3-a456-426614174000/",  // a UUID
           "https://r.example/npm/#a1b2c3d4e5f6g7h8i9j0",
       }) {
    EXPECT_TRUE(RegistryUrlHoldsToken(url, kNone)) << url;
  }
}

TEST(UrlCredential, OrdinaryRegistryPathsHoldNone) {
  for (const char* url : {
           "https://registry.npmjs.org/",
           "https://corp.example/artifactory/api/npm/npm-virtual/",
           "https://nexus.example/repository/npm-group/",
           "https://gitlab.example/api/v4/projects/12345678/packages/npm/",
           "https://pkgs.dev.azure.com/org/project/_packaging/feed/npm/registry/",
           "http://127.0.0.1:4873/",
           "https://a1b2c3d4e5f6g7h8i9j0.example/",  // the host is not read by the shape rule
       }) {
    EXPECT_FALSE(RegistryUrlHoldsToken(url, kNone)) << url;
  }
}

TEST(UrlCredential, TheRelaysRulesAndNoCheckAtAll) {
  EXPECT_TRUE(RegistryUrlHoldsToken("https://r.example/", [](std::string_view) { return true; }));
  // No check handed down: fail closed.
  EXPECT_TRUE(RegistryUrlHoldsToken("https://registry.npmjs.org/", SecretCheck()));
}

TEST(UrlCredential, TokenPiecesAreWhatIsMasked) {
  EXPECT_EQ(TokenPieces("https://npm.fury.io/Fq8abcDEF123ghiJKL456mn/acme/"),
            (std::vector<std::string>{"Fq8abcDEF123ghiJKL456mn"}));
  EXPECT_EQ(TokenPieces("https://r.example/api/npm/npm-virtual/"), (std::vector<std::string>{}));
  // Percent-encoded: masked decoded and as written.
  EXPECT_EQ(TokenPieces("https://r.example/t/AbCdEf12%2B34GhIjKl56%3D/"),
            (std::vector<std::string>{"AbCdEf12+34GhIjKl56=", "/AbCdEf12%2B34GhIjKl56%3D"}));
  auto uuid = TokenPieces("https://r.example/k/0f8fad5b-d9cb-469f-a165-70867728950e/");
  ASSERT_FALSE(uuid.empty());
  EXPECT_EQ(uuid[0], "0f8fad5b-d9cb-469f-a165-70867728950e");
}

TEST(UrlCredential, ARegistryUrlWithNoHostIsRefused) {
  // Fuzzing: "https://user:pw@/h/p" normalised to "https:///h/p", which
  // reads as "https://h/p" the second time.
  EXPECT_FALSE(NormalizeRegistryUrl("https://user:pw@/h/p").ok());
  EXPECT_FALSE(NormalizeRegistryUrl("https://@/x").ok());
  auto three = NormalizeRegistryUrl("https:///h/p");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(*three, "https://h/p");
}

}  // namespace
}  // namespace mcpcell
