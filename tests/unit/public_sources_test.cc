// public_sources.h: what in the settings a trusted package is fetched
// under makes it another's on an allow run (adv11, adv13, adv14): npm's
// config, the CA variables, pip's settings.
#include "source/public_sources.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "util/home_path.h"

namespace mcpcell {
namespace {

NpmConfig Public() {
  NpmConfig c;
  c.registry = "https://registry.npmjs.org/";
  return c;
}

TEST(PublicSources, ThePublicRegistryWithTheSystemsAuthoritiesPasses) {
  EXPECT_EQ(WhyNpmConfigIsNotPublic(Public(), "server-x"), "");
  NpmConfig c = Public();
  c.scopes["@modelcontextprotocol"] = "HTTPS://registry.npmjs.org";
  c.strict_ssl = true;
  if (::access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) c.cafile = "/etc/ssl/certs/ca-certificates.crt";
  EXPECT_EQ(WhyNpmConfigIsNotPublic(c, "@modelcontextprotocol/server-memory"), "");
}

TEST(PublicSources, AnotherRegistryForThePackageOrItsScopeIsNamedByOriginOnly) {
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

TEST(PublicSources, AuthoritiesThatCanAnswerForTheRegistryAreRefused) {
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
TEST(PublicSources, CaVariablesNamingAuthoritiesNotTheSystemsAreRefused) {
  testing::TempDir dir("public-ca");
  std::string mitm = dir.File("mitm.pem");
  std::ofstream(mitm) << "x\n";
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic({"PATH=/usr/bin", "NODE_EXTRA_CA_CERTS"}), "") << "an entry without '='";
  for (std::string n : {"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_DIR"}) {
    std::string value = n == "SSL_CERT_DIR" ? dir.path() : mitm;
    std::string why = WhyCaEnvironmentIsNotPublic({n + "=" + value});
    EXPECT_EQ(why.rfind(n + " names ", 0), 0u) << why;
    EXPECT_EQ(WhyCaEnvironmentIsNotPublic({n + "="}), "") << n << " set empty";
  }
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic({"SSL_CERT_DIR=/etc/ssl/certs"}), "");
  std::string dir_entry = "SSL_CERT_DIR=" + dir.path();
  EXPECT_EQ(WhyCaEnvironmentIsNotPublic({dir_entry, "CURL_CA_BUNDLE=" + mitm}).rfind("CURL_CA_BUNDLE names ", 0), 0u);
  if (::access("/etc/ssl/certs/ca-certificates.crt", R_OK) == 0) {
    std::string bundle = "CURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt";
    EXPECT_EQ(WhyCaEnvironmentIsNotPublic({bundle}), "");
    EXPECT_EQ(WhyCaEnvironmentIsNotPublic({dir_entry, bundle}).rfind("SSL_CERT_DIR names ", 0), 0u);
  }
}

// adv11, adv13: pip's settings are judged in the environment handed in,
// not mcpcell's own.
TEST(PublicSources, PipSettingsAreJudgedInTheEnvironmentGiven) {
  std::string home = AccountHome();
  struct stat st{};
  bool own_config = ::lstat((home + "/.config/pip/pip.conf").c_str(), &st) == 0 ||
                    ::lstat((home + "/.pip/pip.conf").c_str(), &st) == 0;
  if (!own_config) {
    EXPECT_EQ(WhyPipSettingsAreNotPublic({"HOME=" + home, "PATH=/usr/bin", "XDG_CONFIG_DIRS=/etc/xdg"}), "");
    EXPECT_EQ(WhyPipSettingsAreNotPublic({"XDG_CONFIG_HOME=" + home + "/./.config"}), "");
  }
  auto why = [](std::vector<std::string> env) { return WhyPipSettingsAreNotPublic(env); };
  EXPECT_EQ(why({"PATH=/usr/bin", "PIP_INDEX_URL=http://x/"}).rfind("PIP_INDEX_URL is set", 0), 0u);
  EXPECT_EQ(why({"UV_INDEX"}).rfind("UV_INDEX is set", 0), 0u) << "a name alone counts";
  EXPECT_EQ(why({"HOME=/nonexistent/home"}).rfind("HOME is not your account's home", 0), 0u);
  EXPECT_EQ(why({"XDG_CONFIG_HOME=/tmp/x"}).rfind("XDG_CONFIG_HOME is set", 0), 0u);
  EXPECT_EQ(why({"XDG_CONFIG_DIRS=/tmp/x"}).rfind("XDG_CONFIG_DIRS is set", 0), 0u);
  EXPECT_EQ(why({"NODE_EXTRA_CA_CERTS=/tmp/mitm.pem"}).rfind(own_config ? "your pip config" : "NODE_EXTRA_CA_CERTS", 0), 0u);
}

}  // namespace
}  // namespace mcpcell
