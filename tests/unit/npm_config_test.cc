// What mcpcell reads of the host npm's `npm config list -l` for the
// install-script cells (source/npm_config.h): registries, scoped
// registries, certificate authorities, proxies; never a token.
#include "source/npm_config.h"

#include <gtest/gtest.h>

#include <string>

namespace mcpcell {
namespace {

// The shape npm 11.19 prints (defaults, then each layer; what a later
// layer overrides is commented out), with a user npmrc holding scoped
// registries, a token, an inline ca and a proxy with a password.
constexpr const char* kListing = R"(; "default" config from default values

_auth = (protected)
; ca = null ; overridden by user
; cafile = null ; overridden by user
; https-proxy = null ; overridden by user
noproxy = [""]
proxy = null
registry = "https://registry.npmjs.org/"
strict-ssl = true

; "global" config from /usr/etc/npmrc

; cafile = "/etc/ssl/certs/ca-certificates.crt" ; overridden by user
; @corp:registry = "https://old.corp.example/" ; overridden by user

; "user" config from /home/u/.npmrc

@corp:registry = "https://u:***@npm.corp.example/npm/"
@Other-1.x:registry = "http://10.0.0.1:4873/x/"
@bad scope:registry = "https://evil.example/"
@x]:registry = "https://evil.example/"
//npm.corp.example/:_authToken = (protected)
//npm.corp.example/:username = "SECRETUSER"
//npm.corp.example/:certfile = "/home/u/SECRETCERT.pem"
//npm.corp.example/:keyfile = "/home/u/SECRETKEY.pem"
ca = ["-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----"]
cafile = "/home/u/corp-ca.pem"
https-proxy = "http://user:***@proxy.corp:3128"

; "cli" config from command line options

long = true
)";

TEST(NpmConfig, ReadsRegistriesCertificatesAndProxiesFromTheListing) {
  auto c = NpmConfigFromList(kListing);
  ASSERT_TRUE(c.ok()) << c.error().Message();
  EXPECT_EQ(c->registry, "https://registry.npmjs.org/");
  ASSERT_EQ(c->scopes.size(), 2u);  // the overridden @corp line, and keys no scope could be, are not read
  EXPECT_EQ(c->scopes.at("@corp"), "https://u:***@npm.corp.example/npm/");
  EXPECT_EQ(c->scopes.at("@Other-1.x"), "http://10.0.0.1:4873/x/");
  EXPECT_EQ(c->cafile, "/home/u/corp-ca.pem");
  EXPECT_EQ(c->ca, std::vector<std::string>{"-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----"});
  EXPECT_EQ(c->strict_ssl, true);
  EXPECT_EQ(c->https_proxy, "http://user:***@proxy.corp:3128");
  EXPECT_EQ(c->proxy, "");
  EXPECT_EQ(c->noproxy, "");
}

TEST(NpmConfig, KeepsNoTokenUserOrClientCertificate) {
  auto c = NpmConfigFromList(kListing);
  ASSERT_TRUE(c.ok());
  std::string all = c->registry + c->cafile + c->proxy + c->https_proxy + c->noproxy;
  for (const auto& [k, v] : c->scopes) all += k + v;
  for (const auto& pem : c->ca) all += pem;
  EXPECT_EQ(all.find("SECRET"), std::string::npos) << all;
  EXPECT_EQ(all.find("protected"), std::string::npos) << all;
}

TEST(NpmConfig, ReadsCaAsOneStringStrictSslOffAndNoproxyAsAList) {
  auto c = NpmConfigFromList(
      "registry = \"https://r.example/\"\nca = \"PEM\"\nstrict-ssl = false\nnoproxy = [\"a.example\",\"b\"]\n"
      "proxy = false\ncafile = null\n");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ca, std::vector<std::string>{"PEM"});
  EXPECT_EQ(c->strict_ssl, false);
  EXPECT_EQ(c->noproxy, "a.example,b");
  EXPECT_EQ(c->proxy, "");  // proxy=false: none (npm then asks the environment)
  EXPECT_EQ(c->cafile, "");
}

TEST(NpmConfig, RefusesAListingWithoutAnEffectiveRegistry) {
  EXPECT_FALSE(NpmConfigFromList("; registry = \"x\"\n").ok());
  EXPECT_FALSE(NpmConfigFromList("registry = not-json\n").ok());
  EXPECT_FALSE(NpmConfigFromList("").ok());
}

// adv15: npm prints a setting's name as it is; a name holding a line break
// ("zz\nregistry" in an npmrc, an npm_config_zz<LF>registry variable) adds
// a second effective line, written to be read as the registry.
TEST(NpmConfig, RefusesAKeyPrintedTwice) {
  auto r = NpmConfigFromList(
      "; \"env\" config from environment\n\n"
      "registry = \"http://127.0.0.1:4873/\"\n"
      "zz\nregistry = \"https://registry.npmjs.org/\"\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Message().find("`registry` twice"), std::string::npos) << r.error().Message();
  EXPECT_FALSE(NpmConfigFromList("registry = \"https://registry.npmjs.org/\"\nstrict-ssl = false\nstrict-ssl = true\n").ok());
  // Overridden lines are commented: one effective line per key is npm's own listing.
  EXPECT_TRUE(NpmConfigFromList("; registry = \"https://a.example/\" ; overridden by env\n"
                                "registry = \"https://registry.npmjs.org/\"\n").ok());
}

TEST(NpmProxy, TheEnvironmentIsReadInAnyCase) {
  std::string a = "HTTPS_PROXY=http://p:1", b = "No_Proxy=corp.example", c = "HTTP_PROXYX=no", d = "PATH=/bin";
  char* env[] = {a.data(), b.data(), c.data(), d.data(), nullptr};
  auto got = NpmProxyEnvironment(env);
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"https_proxy", "http://p:1"}, {"no_proxy", "corp.example"}}));
}

TEST(NpmProxy, FollowsNpmsOrderAndNamesTheSettingWithoutItsPassword) {
  NpmConfig c;
  std::map<std::string, std::string> env;
  EXPECT_EQ(NpmProxyFor("https://r.example/", c, env), "");
  env["http_proxy"] = "http://h:8080";
  EXPECT_EQ(NpmProxyFor("https://r.example/", c, env), "");  // npm asks https_proxy only for https://
  EXPECT_EQ(NpmProxyFor("http://r.example/", c, env), "environment variable HTTP_PROXY (http://h:8080)");
  env["https_proxy"] = "http://user:pass@s:3128/";
  EXPECT_EQ(NpmProxyFor("https://r.example/", c, env), "environment variable HTTPS_PROXY (http://s:3128)");
  c.proxy = "http://cfg:1";
  EXPECT_EQ(NpmProxyFor("https://r.example/", c, env), "npm config proxy (http://cfg:1)");  // config beats env
  c.https_proxy = "http://u:***@cfgs:2";
  EXPECT_EQ(NpmProxyFor("http://r.example/", c, env), "npm config https-proxy (http://cfgs:2)");
}

TEST(NpmProxy, NoproxyExemptsTheHostAndNamesBelowADomain) {
  NpmConfig c;
  c.https_proxy = "http://p:3128";
  c.noproxy = " other.example , corp.example";
  EXPECT_EQ(NpmProxyFor("https://npm.corp.example/x/", c, {}), "");
  EXPECT_EQ(NpmProxyFor("https://CORP.example:8443/", c, {}), "");
  EXPECT_NE(NpmProxyFor("https://notcorp.example/", c, {}), "");  // whole labels only, as npm
  c.noproxy = "CORP.example";
  EXPECT_NE(NpmProxyFor("https://npm.corp.example/", c, {}), "");  // npm compares the entry as written
  EXPECT_NE(NpmProxyFor("https://registry.npmjs.org/", c, {}), "");
  c.noproxy = "";
  EXPECT_EQ(NpmProxyFor("https://npm.corp.example/", c, {{"no_proxy", ".corp.example"}}), "");  // else NO_PROXY
}

}  // namespace
}  // namespace mcpcell
