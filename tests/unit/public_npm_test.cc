// public_npm.h: what makes a trusted npx:// package another's on an allow
// run (adv11, adv13): npm's settings before the install, the cache after.
#include "source/public_npm.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

NpmConfig Public() {
  NpmConfig c;
  c.registry = "https://registry.npmjs.org/";
  return c;
}

TEST(PublicNpmTest, ThePublicRegistryWithTheSystemsAuthoritiesPasses) {
  EXPECT_EQ(WhyNpmConfigIsNotPublic(Public(), "server-x"), "");
  NpmConfig c = Public();
  c.scopes["@modelcontextprotocol"] = "HTTPS://registry.npmjs.org";
  c.strict_ssl = true;
  if (::access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) c.cafile = "/etc/ssl/certs/ca-certificates.crt";
  EXPECT_EQ(WhyNpmConfigIsNotPublic(c, "@modelcontextprotocol/server-memory"), "");
}

TEST(PublicNpmTest, AnotherRegistryForThePackageOrItsScopeIsNamedByOriginOnly) {
  NpmConfig c = Public();
  c.registry = "https://npm.fury.io/SECRETTOKEN1234567890/u/";
  std::string why = WhyNpmConfigIsNotPublic(c, "server-x");
  EXPECT_NE(why.find("https://npm.fury.io"), std::string::npos) << why;
  EXPECT_EQ(why.find("SECRETTOKEN"), std::string::npos) << why;
  c = Public();
  c.scopes["@s"] = "http://127.0.0.1:4873/";
  EXPECT_NE(WhyNpmConfigIsNotPublic(c, "@s/srv").find("registry for @s is http://127.0.0.1:4873"), std::string::npos);
  EXPECT_EQ(WhyNpmConfigIsNotPublic(c, "srv"), "") << "another scope's registry does not serve an unscoped package";
}

TEST(PublicNpmTest, AuthoritiesThatCanAnswerForTheRegistryAreRefused) {
  NpmConfig c = Public();
  c.strict_ssl = false;
  EXPECT_NE(WhyNpmConfigIsNotPublic(c, "x").find("strict-ssl is off"), std::string::npos);
  c = Public();
  c.ca = {"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"};
  EXPECT_NE(WhyNpmConfigIsNotPublic(c, "x").find("ca setting"), std::string::npos);
  testing::TempDir dir("public-npm");
  c = Public();
  c.cafile = dir.File("mitm.pem");
  std::ofstream(c.cafile) << "x\n";
  EXPECT_NE(WhyNpmConfigIsNotPublic(c, "x").find("not the system's"), std::string::npos)
      << "a file of the caller's outside /etc and /usr is the caller's choice, even as root";
}

// Each CA variable, alone: a file must be the system's bundle, a directory
// the system's directory; the files are named before SSL_CERT_DIR.
TEST(PublicNpmTest, CaVariablesNamingAuthoritiesNotTheSystemsAreRefused) {
  testing::TempDir dir("public-ca");
  std::string mitm = dir.File("mitm.pem");
  std::ofstream(mitm) << "x\n";
  const std::vector<std::string> names = {"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE",
                                          "CURL_CA_BUNDLE", "SSL_CERT_DIR"};
  for (const auto& n : names) ::unsetenv(n.c_str());
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic(), "");
  for (const auto& n : names) {
    bool directory = n == "SSL_CERT_DIR";
    ::setenv(n.c_str(), directory ? dir.path().c_str() : mitm.c_str(), 1);
    std::string why = WhyCaEnvironmentIsNotPublic();
    EXPECT_EQ(why.rfind(n + " names ", 0), 0u) << why;
    ::setenv(n.c_str(), "", 1);
    EXPECT_EQ(WhyCaEnvironmentIsNotPublic(), "") << n << " set empty";
    ::unsetenv(n.c_str());
  }
  ::setenv("SSL_CERT_DIR", "/etc/ssl/certs", 1);
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic(), "");
  ::setenv("SSL_CERT_DIR", dir.path().c_str(), 1);
  ::setenv("CURL_CA_BUNDLE", mitm.c_str(), 1);
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic().rfind("CURL_CA_BUNDLE names ", 0), 0u);
  if (::access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) {
    ::setenv("CURL_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt", 1);
    EXPECT_EQ(WhyCaEnvironmentIsNotPublic().rfind("SSL_CERT_DIR names ", 0), 0u);
  }
  for (const auto& n : names) ::unsetenv(n.c_str());
}

std::string InstallWith(const testing::TempDir& dir, const std::string& lock) {
  std::ofstream(dir.File("package-lock.json")) << lock;
  return WhyInstallIsNotPublic(dir.path());
}

TEST(PublicNpmTest, AnInstallIsPublicOnlyWhenEveryPackageRecordsThePublicRegistry) {
  testing::TempDir dir("public-install");
  const std::string head = R"({"lockfileVersion":3,"packages":{"":{"dependencies":{"a":"1"}},)";
  EXPECT_EQ(InstallWith(dir, head + R"("node_modules/a":{"resolved":"https://registry.npmjs.org/a/-/a-1.tgz"},)"
                                    R"("node_modules/a/node_modules/b":{"inBundle":true}}})"),
            "");
  std::string why = InstallWith(dir, head + R"("node_modules/a":{"resolved":"http://127.0.0.1:9/a/-/a-1.tgz"}}})");
  EXPECT_NE(why.find("node_modules/a came from http://127.0.0.1:9"), std::string::npos) << why;
  why = InstallWith(dir, head + R"("node_modules/a":{"version":"1.0.0"}}})");
  EXPECT_NE(why.find("does not record where node_modules/a came from"), std::string::npos) << why;
  why = InstallWith(dir, head + R"("node_modules/a":{"resolved":"https://registry.npmjs.org.evil/a.tgz"}}})");
  EXPECT_NE(why, "") << "a prefix of the host name is not the registry";
  EXPECT_NE(InstallWith(dir, "{}"), "");
  EXPECT_NE(WhyInstallIsNotPublic(dir.File("missing")), "");
}

// adv14: the settings an install was made under, recorded beside it; an
// entry with no record, or one made under other settings, is not public.
TEST(PublicNpmTest, AnInstallsRecordSaysWhetherItsSettingsWereThePublicRegistrys) {
  testing::TempDir pub("origin-public"), other("origin-other"), none("origin-none");
  ASSERT_TRUE(WriteInstallOrigin(pub.path(), "").ok());
  EXPECT_EQ(WhyOriginIsNotPublic(pub.path()), "");
  ASSERT_TRUE(WriteInstallOrigin(other.path(), "npm's strict-ssl is off").ok());
  std::string why = WhyOriginIsNotPublic(other.path());
  EXPECT_NE(why.find("strict-ssl is off"), std::string::npos) << why;
  EXPECT_NE(WhyOriginIsNotPublic(none.path()).find("no record"), std::string::npos);
  EXPECT_FALSE(WriteInstallOrigin(pub.path(), "").ok()) << "a record is written once (O_EXCL)";
}

}  // namespace
}  // namespace mcpcell
