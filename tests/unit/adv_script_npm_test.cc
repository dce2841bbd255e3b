// Adversary pass 5 on the install-script cells' npm config (commit 474ac74,
// branch script-registries): where mcpcell's reading of npm's config or
// npm's proxy choice differs from npm's own. Each  test is a
// finding (it fails on 474ac74); the others are attacks that held.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cell/script_network.h"
#include "source/install_scripts.h"
#include "source/npm_config.h"
#include "source/script_npm.h"
#include "util/json_input.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

/// No secret by the relay's rules: the shape rule of url_credential.h alone.
const SecretCheck NoSecret = [](std::string_view) { return false; };

NpmConfig Proxied(const std::string& registry, const std::string& noproxy) {
  NpmConfig c;
  c.registry = registry;
  c.proxy = "http://user:pw@proxy.corp.example:3128/";
  c.noproxy = noproxy;
  return c;
}

// npm (@npmcli/agent lib/proxy.js isNoProxy) splits the WHATWG hostname on
// "." WITHOUT dropping empty labels: for "registry.corp." (a fully
// qualified name, trailing dot kept by URL parsing) the host's labels are
// ["", "corp", "registry"], so noproxy=registry.corp does NOT exempt it and
// npm goes through the proxy. mcpcell drops the empty label, calls it
// direct, and opens a direct path the user's network forces through a proxy.
TEST(Adv5NpmProxy, TrailingDotHostIsProxiedByNpmSoNotOpened) {
  auto c = Proxied("http://registry.corp.example./", "registry.corp.example");
  EXPECT_NE(NpmProxyFor("http://registry.corp.example./", c, {}), "")
      << "npm proxies registry.corp.example. (noproxy does not match the empty last label)";
  auto plan = PlanScriptNpm(c, {}, {}, NoSecret);
  EXPECT_TRUE(plan.npm.registries.empty()) << plan.npm.registries[0];
}

// WHATWG URL parsing turns a numeric IPv4 host into dotted form
// (2130706433 -> 127.0.0.1, 0x7f.1 -> 127.0.0.1) before npm compares it
// with noproxy; mcpcell compares the host as written. noproxy=2130706433:
// npm proxies (hostname is 127.0.0.1), mcpcell says direct.
TEST(Adv5NpmProxy, NumericIpv4HostComparedAsNpmSeesIt) {
  auto c = Proxied("http://2130706433:4873/", "2130706433");
  EXPECT_NE(NpmProxyFor("http://2130706433:4873/", c, {}), "") << "npm's hostname is 127.0.0.1: proxied";
}

// Held: the opposite direction (npm direct, mcpcell proxied) only refuses.
TEST(Adv5NpmProxy, UppercaseNoproxyEntryIsNotAMatchForEither) {
  auto c = Proxied("http://registry.corp.example/", "CORP.example");
  EXPECT_NE(NpmProxyFor("http://registry.corp.example/", c, {}), "");
}

// Held: ports and brackets in noproxy behave as in npm (no match).
TEST(Adv5NpmProxy, PortInNoproxyDoesNotExempt) {
  auto c = Proxied("http://registry.corp.example:8080/", "registry.corp.example:8080");
  EXPECT_NE(NpmProxyFor("http://registry.corp.example:8080/", c, {}), "");
  auto v6 = Proxied("http://[fd00::1]:8080/", "fd00::1");
  EXPECT_NE(NpmProxyFor("http://[fd00::1]:8080/", v6, {}), "");
}

// Held: the proxy's password never reaches the warning, even unparseable.
TEST(Adv5NpmProxy, UnparseableProxyValueIsNotEchoed) {
  NpmConfig c;
  c.registry = "https://r.example/";
  c.https_proxy = "socks5h://u:SECRETPW@proxy:1080";
  auto plan = PlanScriptNpm(c, {}, {}, NoSecret);
  EXPECT_EQ(plan.npm.unreached.find("SECRETPW"), std::string::npos) << plan.npm.unreached;
  c.https_proxy = "u:SECRETPW@proxy:1080";  // no scheme
  plan = PlanScriptNpm(c, {}, {}, NoSecret);
  EXPECT_EQ(plan.npm.unreached.find("SECRETPW"), std::string::npos) << plan.npm.unreached;
}

// A scope npm accepts (validate-npm-package-name: encodeURIComponent leaves
// ! ' ( ) * ~ alone, so `@corp!x/pkg` is a valid old-style name) whose
// `@corp!x:registry` the user configured is dropped by IsScopeRegistryKey:
// the cells' npmrc then has no line for it, and npm in the cell asks the
// DEFAULT registry for @corp!x packages (the dependency confusion the
// npmrc's "every configured scope" promise is there to prevent).
TEST(Adv5NpmConfig, EveryScopeNpmAcceptsIsPinnedInTheCellsNpmrc) {
  auto config = NpmConfigFromList("registry = \"https://registry.npmjs.org/\"\n"
                                  "@corp!x:registry = \"https://npm.corp.example/\"\n");
  ASSERT_TRUE(config.ok());
  auto plan = PlanScriptNpm(*config, {}, {}, NoSecret);
  EXPECT_NE(plan.npmrc_text.find("@corp!x:registry"), std::string::npos) << plan.npmrc_text;
}

// Held: values cannot add npmrc keys (JSON-quoted, newlines escaped).
TEST(Adv5NpmConfig, ValuesCannotInjectKeys) {
  NpmConfig c;
  c.registry = "https://r.example/\n//r.example/:_authToken=INJECT\nscript-shell=/tmp/x";
  c.scopes = {{"@a", "https://a.example/\"\nnode-options=--require=/tmp/x\n; \""}};
  c.ca = {"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\nprefix=/tmp/evil"};
  auto plan = PlanScriptNpm(c, {"@a"}, {}, NoSecret);
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = plan.npmrc_text.find('\n', at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 4u) << plan.npmrc_text;  // comment, registry, @a:registry, ca[] (each one line)
  for (const char* bad : {"\nscript-shell", "\nnode-options", "\nprefix", "\n//r.example/:_authToken"}) {
    EXPECT_EQ(plan.npmrc_text.find(bad), std::string::npos) << plan.npmrc_text;
  }
}

// npm's hidden lockfile as npm 11 writes it for
//   "dependencies": {"@corp/x": "npm:evil@1.0.0"}
// when the default registry's manifest of evil says "name": "@corp/x"
// (measured: npm records no "name" then, the alias is indistinguishable),
// and no `resolved` either. The scope's registry is then opened for a
// package that came from the default registry.
TEST(Adv5InstalledScopes, AliasWhoseManifestClaimsTheScopeOpensNothing) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/node_modules/@corp/x");
  std::ofstream(dir.path() + "/node_modules/@corp/x/package.json") << R"({"name":"evil","version":"1.0.0"})";
  std::ofstream(dir.path() + "/node_modules/.package-lock.json") << R"({
  "name": "i", "lockfileVersion": 3, "requires": true,
  "packages": {
    "node_modules/@corp/x": {"version": "1.0.0", "integrity": "sha512-x", "hasInstallScript": true},
    "node_modules/top": {"version": "1.0.0", "dependencies": {"@corp/x": "npm:evil@1.0.0"}}
  }})";
  // Fixed: only a package fetched from the scope's own registry opens it.
  NpmConfig config;
  config.registry = "https://registry.npmjs.org/";
  config.scopes = {{"@corp", "https://npm.corp.example/"}};
  EXPECT_EQ(ScopesFetchedFromTheirRegistry(InstalledScopes(dir.path()), config).count("@corp"), 0u)
      << "its package.json on disk says evil; the lockfile cannot tell the alias apart";
}


// Held: a planted .mcpcell-script-npmrc (a symlink to a host file, a FIFO)
// is replaced by a fresh regular file; the link's target is untouched.
TEST(Adv5ScriptNpmrc, PlantedLinkOrFifoIsReplacedNotFollowed) {
  testing::TempDir dir;
  const std::string target = dir.path() + "/victim";
  std::ofstream(target) << "victim";
  const std::string rc = dir.path() + "/.mcpcell-script-npmrc";
  ASSERT_EQ(::symlink(target.c_str(), rc.c_str()), 0);
  auto path = WriteScriptNpmrc(dir.path(), "registry=\"https://r/\"\n");
  ASSERT_TRUE(path.ok()) << path.error().Message();
  struct stat st{};
  ASSERT_EQ(::lstat(rc.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  std::ifstream in(target);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "victim");
  ::unlink(rc.c_str());
  ASSERT_EQ(::mkfifo(rc.c_str(), 0600), 0);
  path = WriteScriptNpmrc(dir.path(), "x\n");
  ASSERT_TRUE(path.ok()) << path.error().Message();
  ASSERT_EQ(::lstat(rc.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

// Held (documented): two registries on different ports are each reachable
// on the other's port, but only at addresses pinned for that name.
TEST(Adv5RegistriesNetwork, CrossPortPinsStayOnTheNamesAddresses) {
  auto net = RegistriesNetwork({"https://127.0.0.2.nip.invalid/", "http://127.0.0.1:4873/"});
  // A name that does not resolve gets no pin (the proxy resolves it itself):
  // noted in the report; a loopback registry stays one host port.
  if (net.ok()) {
    for (const auto& hp : net->host_ports) EXPECT_EQ(hp.port, 4873);
  }
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// adv5 F4: a combined PEM (key first) handed the key to every script; the
// cells now get the certificate blocks alone, in a fresh copy.
TEST(Adv5Cafile, TheCellsGetTheCertificatesNeverTheKey) {
  const std::string pem =
      "-----BEGIN PRIVATE KEY-----\nMIIkey\n-----END PRIVATE KEY-----\n"
      "-----BEGIN CERTIFICATE-----\nMIIcert1\n-----END CERTIFICATE-----\njunk\n"
      "-----BEGIN CERTIFICATE-----\nMIIcert2\n-----END CERTIFICATE-----\n";
  std::string certs = CertificatesOf(pem);
  EXPECT_EQ(certs.find("PRIVATE"), std::string::npos) << certs;
  EXPECT_EQ(certs, "-----BEGIN CERTIFICATE-----\nMIIcert1\n-----END CERTIFICATE-----\n"
                   "-----BEGIN CERTIFICATE-----\nMIIcert2\n-----END CERTIFICATE-----\n");
  testing::TempDir dir;
  std::ofstream(dir.path() + "/combined.pem") << pem;
  auto copy = WriteScriptCafile(dir.path(), dir.path() + "/combined.pem", {});
  ASSERT_TRUE(copy.ok()) << copy.error().Message();
  EXPECT_NE(*copy, dir.path() + "/combined.pem");
  auto got = ReadTextFile(*copy, "read the copy");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, certs);
  // Missing or relative: as it is, for the cell to skip or refuse.
  EXPECT_EQ(*WriteScriptCafile(dir.path(), dir.path() + "/missing.pem", {}), dir.path() + "/missing.pem");
  EXPECT_EQ(*WriteScriptCafile(dir.path(), "relative.pem", {}), "relative.pem");
  // Too large to read: refused, not handed over whole (adv12: a 17 MB
  // cafile with a key in it was bound into the cell as it was).
  {
    std::ofstream big(dir.path() + "/big.pem");
    big << pem;
  }
  std::filesystem::resize_file(dir.path() + "/big.pem", (16u << 20) + 1);
  auto big = WriteScriptCafile(dir.path(), dir.path() + "/big.pem", {});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().Message().find("over 16 MiB"), std::string::npos) << big.error().Message();
}

}  // namespace
}  // namespace mcpcell
