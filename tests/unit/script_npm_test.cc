// What an install-script cell gets of the host npm's config
// (source/script_npm.h): the registries it reaches (the default one and
// the scopes in use), the npmrc written for it, the cafile bound into it,
// and what a registry behind an upstream proxy turns into (issue 14).
#include "source/script_npm.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cell/script_cell.h"
#include "cell/script_network.h"
#include "source/install_scripts.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

/// No secret by the relay's rules: the shape rule of url_credential.h alone.
const SecretCheck NoSecret = [](std::string_view) { return false; };

namespace fs = std::filesystem;

NpmConfig CorpConfig() {
  NpmConfig c;
  c.registry = "https://registry.npmjs.org/";
  c.scopes = {{"@corp", "https://u:***@npm.corp.example/npm/"}, {"@unused", "https://other.example/"}};
  return c;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ScriptNpmPlan, ReachesTheDefaultRegistryAndTheScopesInUse) {
  auto plan = PlanScriptNpm(CorpConfig(), {"@corp", "@noreg"}, {}, NoSecret);
  EXPECT_EQ(plan.npm.registry, "https://registry.npmjs.org/");
  EXPECT_EQ(plan.npm.registries,
            (std::vector<std::string>{"https://registry.npmjs.org/", "https://npm.corp.example/npm/"}));
  EXPECT_EQ(plan.npm.unreached, "");
  // @corp's user and password are cut off, and that is said once.
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_EQ(plan.warnings[0],
            "npm config @corp:registry carries a user or password in its URL: the install scripts reach "
            "https://npm.corp.example without them (a credential never enters a cell), so a script that needs to log "
            "in there fails");
  // Every configured scope is named in the npmrc (an unused one too: npm in
  // the cell never asks the default registry for its packages), with no
  // user or password.
  EXPECT_NE(plan.npmrc_text.find("\nregistry=\"https://registry.npmjs.org/\"\n"), std::string::npos) << plan.npmrc_text;
  EXPECT_NE(plan.npmrc_text.find("\n@corp:registry=\"https://npm.corp.example/npm/\"\n"), std::string::npos);
  EXPECT_NE(plan.npmrc_text.find("\n@unused:registry=\"https://other.example/\"\n"), std::string::npos);
  EXPECT_EQ(plan.npmrc_text.find("u:"), std::string::npos) << plan.npmrc_text;
  EXPECT_EQ(plan.npmrc_text.find("cafile"), std::string::npos);
  EXPECT_EQ(plan.npmrc_text.find("strict-ssl"), std::string::npos);
}

TEST(ScriptNpmPlan, PassesCafileCaAndStrictSslOff) {
  NpmConfig c = CorpConfig();
  c.cafile = "/home/u/corp-ca.pem";
  c.ca = {"-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----"};
  c.strict_ssl = false;
  auto plan = PlanScriptNpm(c, {}, {}, NoSecret);
  EXPECT_EQ(plan.npm.cafile, "/home/u/corp-ca.pem");
  EXPECT_NE(plan.npmrc_text.find(std::string("\ncafile=\"") + kCellNpmCafile + "\"\n"), std::string::npos);
  EXPECT_NE(plan.npmrc_text.find("\nca[]=\"-----BEGIN CERTIFICATE-----\\nAAA\\n-----END CERTIFICATE-----\"\n"),
            std::string::npos)
      << plan.npmrc_text;
  EXPECT_NE(plan.npmrc_text.find("\nstrict-ssl=false\n"), std::string::npos);
  EXPECT_EQ(plan.npmrc_text.find("/home/u"), std::string::npos);  // the cell's path, not the host's
}

TEST(ScriptNpmPlan, ARegistryBehindAnUpstreamProxyIsNotReachedAndSaysWhy) {
  NpmConfig c = CorpConfig();
  c.https_proxy = "http://user:***@proxy.corp:3128";
  c.noproxy = "corp.example";
  auto plan = PlanScriptNpm(c, {"@corp"}, {{"https_proxy", "http://u:envsecret@envproxy:1"}}, NoSecret);
  // The corp registry is exempt (noproxy): reached. The default one is not.
  EXPECT_EQ(plan.npm.registries, std::vector<std::string>{"https://npm.corp.example/npm/"});
  EXPECT_EQ(plan.npm.registry, "https://registry.npmjs.org/");  // npm is still pointed at it, and fails there
  EXPECT_EQ(plan.npm.unreached,
            "https://registry.npmjs.org (npm's registry), which the host's npm reaches through npm config "
            "https-proxy (http://proxy.corp:3128)");
  EXPECT_EQ(plan.npmrc_text.find("proxy"), std::string::npos) << plan.npmrc_text;
  // Through the environment: named so, without the password.
  c = CorpConfig();
  plan = PlanScriptNpm(c, {"@corp"}, {{"https_proxy", "http://u:envsecret@envproxy:1"}}, NoSecret);
  EXPECT_TRUE(plan.npm.registries.empty());
  EXPECT_NE(plan.npm.unreached.find("environment variable HTTPS_PROXY (http://envproxy:1)"), std::string::npos);
  EXPECT_EQ(plan.npm.unreached.find("envsecret"), std::string::npos);
  EXPECT_NE(ScriptNetworkAdvice(plan.npm).find("no network at all (not https://registry.npmjs.org"), std::string::npos)
      << ScriptNetworkAdvice(plan.npm);
}

TEST(ScriptNpmPlan, AScopeWhoseRegistryIsNoHttpUrlIsWarnedAboutAndNotReached) {
  NpmConfig c = CorpConfig();
  c.scopes["@corp"] = "file:///SECRETPATH";
  auto plan = PlanScriptNpm(c, {"@corp"}, {}, NoSecret);
  EXPECT_EQ(plan.npm.registries, std::vector<std::string>{"https://registry.npmjs.org/"});
  ASSERT_EQ(plan.warnings.size(), 1u);
  EXPECT_NE(plan.warnings[0].find("@corp:registry"), std::string::npos);
  EXPECT_EQ(plan.warnings[0].find("SECRETPATH"), std::string::npos);
  EXPECT_EQ(plan.npmrc_text.find("SECRETPATH"), std::string::npos);
  // Still named, to nowhere: npm in the cell never asks the default registry for @corp.
  EXPECT_NE(plan.npmrc_text.find("\n@corp:registry=\"https://unusable-registry.invalid/\"\n"), std::string::npos)
      << plan.npmrc_text;
}

// Gemfury, Artifactory: the token is the registry's path. No cell gets the
// URL (npmrc, npm_config_registry) or the network to it; said once, naming
// the setting, never the token.
TEST(ScriptNpmPlan, ARegistryWithATokenInItsPathIsGivenToNoCell) {
  const std::string token = "a1B2c3D4e5F6g7H8i9J0kLmN";
  NpmConfig c;
  c.registry = "https://npm.fury.io/" + token + "/someone/";
  c.scopes = {{"@corp", "https://corp.example/artifactory/api/npm/npm/?key=" + token},
              {"@unused", "https://other.example/" + token + "/"}};
  auto plan = PlanScriptNpm(c, {"@corp"}, {}, NoSecret);
  EXPECT_EQ(plan.npm.registry, "https://unusable-registry.invalid/");
  EXPECT_TRUE(plan.npm.registries.empty());
  EXPECT_EQ(plan.npmrc_text.find(token), std::string::npos) << plan.npmrc_text;
  EXPECT_NE(plan.npmrc_text.find("\nregistry=\"https://unusable-registry.invalid/\"\n"), std::string::npos);
  EXPECT_NE(plan.npmrc_text.find("\n@unused:registry=\"https://unusable-registry.invalid/\"\n"), std::string::npos);
  // Once for each registry in use (@unused is in no installed package: no word).
  ASSERT_EQ(plan.warnings.size(), 2u);
  EXPECT_EQ(plan.warnings[0].rfind("npm config registry carries what looks like a token in its URL (not shown)", 0), 0u)
      << plan.warnings[0];
  EXPECT_EQ(plan.warnings[1].rfind("npm config @corp:registry carries what looks like a token", 0), 0u) << plan.warnings[1];
  for (const auto& w : plan.warnings) {
    EXPECT_EQ(w.find(token), std::string::npos) << w;
    EXPECT_EQ(w.find("fury"), std::string::npos) << w;
    EXPECT_NE(w.find("//HOST/:_authToken="), std::string::npos) << w;
  }
  // The relay's rules find a known format the shape rule would not.
  c = NpmConfig{};
  c.registry = "https://r.example/npm/short/";
  plan = PlanScriptNpm(c, {}, {}, [](std::string_view url) { return url.find("short") != std::string_view::npos; });
  EXPECT_TRUE(plan.npm.registries.empty());
  EXPECT_EQ(plan.npm.registry, "https://unusable-registry.invalid/");
}

TEST(ScriptNpmPlan, NamesTheRegistriesReached) {
  ScriptNpm npm;
  EXPECT_EQ(RegistriesReached(npm), "");
  npm.registries = {"https://a.example/x/"};
  EXPECT_EQ(RegistriesReached(npm), "the npm registry https://a.example");
  npm.registries = {"https://a.example/", "http://127.0.0.1:1/", "https://c.example:8443/"};
  EXPECT_EQ(RegistriesReached(npm), "the npm registries https://a.example, http://127.0.0.1:1 and https://c.example:8443");
}

TEST(ScriptNpmrc, IsAFreshFileTheCellCanReadWhateverTheUmask) {
  testing::TempDir dir;
  fs::create_symlink("/etc/passwd", dir.File(".mcpcell-script-npmrc"));  // an earlier run's leftover, or a trap
  mode_t old = ::umask(077);
  auto path = WriteScriptNpmrc(dir.path(), "registry=\"x\"\n");
  ::umask(old);
  ASSERT_TRUE(path.ok()) << path.error().Message();
  struct stat st{};
  ASSERT_EQ(::lstat(path->c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(Slurp(*path), "registry=\"x\"\n");
}

const std::string kCert1 = "-----BEGIN CERTIFICATE-----\nMIIBone+/=\n-----END CERTIFICATE-----";
const std::string kCert2 = "-----BEGIN CERTIFICATE-----\r\nMIIBtwo\r\n-----END CERTIFICATE-----\n";

// Node in the cell (node-gyp, prebuild-install) reads NODE_EXTRA_CA_CERTS,
// one file: it holds the cafile's certificates and every inline ca.
TEST(ScriptCafile, HoldsTheCafilesCertificatesAndEveryInlineCa) {
  testing::TempDir dir;
  std::ofstream(dir.File("host-ca.pem")) << "-----BEGIN CERTIFICATE-----\nMIIBfile\n-----END CERTIFICATE-----\n";
  auto path = WriteScriptCafile(dir.path(), dir.File("host-ca.pem"), {kCert1, kCert2});
  ASSERT_TRUE(path.ok()) << path.error().Message();
  EXPECT_NE(*path, dir.File("host-ca.pem"));
  EXPECT_EQ(Slurp(*path), "-----BEGIN CERTIFICATE-----\nMIIBfile\n-----END CERTIFICATE-----\n" + kCert1 + "\n" +
                              "-----BEGIN CERTIFICATE-----\r\nMIIBtwo\r\n-----END CERTIFICATE-----\n");
  // No cafile, or a missing one (npm skips it): the inline ones alone.
  EXPECT_EQ(Slurp(*WriteScriptCafile(dir.path(), "", {kCert1})), kCert1 + "\n");
  EXPECT_EQ(Slurp(*WriteScriptCafile(dir.path(), dir.File("missing.pem"), {kCert1})), kCert1 + "\n");
  // A missing cafile and no inline ca: nothing to bind, as before.
  EXPECT_EQ(*WriteScriptCafile(dir.path(), dir.File("missing.pem"), {}), dir.File("missing.pem"));
}

TEST(ScriptCafile, RefusesAnInlineCaThatIsNoCertificateNamingTheSetting) {
  testing::TempDir dir;
  const std::string key = "-----BEGIN PRIVATE KEY-----\nMIIkeySECRET\n-----END PRIVATE KEY-----";
  for (const std::string& bad : {key, key + "\n" + kCert1, kCert1 + "\ntrailing text", std::string("garbage"),
                                 std::string(""), std::string("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----"),
                                 std::string("-----BEGIN CERTIFICATE-----\nMII$$\n-----END CERTIFICATE-----"),
                                 std::string("-----BEGIN CERTIFICATE-----\nMIIno-end")}) {
    auto path = WriteScriptCafile(dir.path(), "", {kCert1, bad});
    ASSERT_FALSE(path.ok()) << bad;
    EXPECT_NE(path.error().Message().find("npm config ca"), std::string::npos) << path.error().Message();
    EXPECT_NE(path.error().Message().find("entry 2 of 2"), std::string::npos) << path.error().Message();
    EXPECT_EQ(path.error().Message().find("SECRET"), std::string::npos) << path.error().Message();
  }
  EXPECT_FALSE(fs::exists(dir.File(".mcpcell-script-cafile.pem")));
}

TEST(ScriptNpmPlan, KeepsTheInlineCaForTheCafileWithoutACafileLine) {
  NpmConfig c = CorpConfig();
  c.ca = {kCert1};
  auto plan = PlanScriptNpm(c, {}, {}, NoSecret);
  EXPECT_EQ(plan.npm.ca, std::vector<std::string>{kCert1});
  EXPECT_EQ(plan.npm.cafile, "");
  // npm in the cell reads ca[] as the host's npm did; no cafile line, which
  // would replace it (npm's cafile wins over ca).
  EXPECT_EQ(plan.npmrc_text.find("cafile"), std::string::npos) << plan.npmrc_text;
}

TEST(RegistriesNetwork, MergesRegistriesAndPinsEveryNameOnEveryPort) {
  EXPECT_FALSE(RegistriesNetwork({"https://10.1.2.3/", "ftp://x/"}).ok());  // one refused: all refused
  auto net = RegistriesNetwork({"https://10.1.2.3/", "https://10.1.2.4:8443/", "http://localhost:4873/", "https://10.1.2.3/x/"});
  ASSERT_TRUE(net.ok()) << net.error().Message();
  EXPECT_EQ(net->mode, NetworkSpec::Mode::kAllowList);
  EXPECT_EQ(net->allow_hosts, (std::vector<std::string>{"10.1.2.3", "10.1.2.4"}));
  EXPECT_EQ(net->allow_ports, (std::vector<std::uint16_t>{443, 8443}));
  ASSERT_EQ(net->host_ports.size(), 1u);
  EXPECT_EQ(net->host_ports[0].port, 4873);
  // An address literal pins to itself, on both ports (the rules pair any name with any port).
  EXPECT_EQ(net->resolve.size() % 2, 0u);
  for (const auto& pin : net->resolve) EXPECT_EQ(pin.host, pin.address);
  EXPECT_TRUE(RegistriesNetwork({}).ok());
  EXPECT_EQ(RegistriesNetwork({})->mode, NetworkSpec::Mode::kNone);
}

class ScriptCellNpmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()).string();
    pkg_ = root_ + "/node_modules/@corp/addon";
    fs::create_directories(pkg_);
    std::ofstream(pkg_ + "/package.json") << R"({"name":"@corp/addon","scripts":{"install":"x"}})";
    std::ofstream(root_ + "/ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  }
  testing::TempDir dir_;
  std::string root_, pkg_;
};

TEST_F(ScriptCellNpmTest, TheCellGetsTheNpmrcTheCafileReadOnlyAndEveryRegistry) {
  ScriptNpm npm{"https://registry.npmjs.org/", {"https://registry.npmjs.org/", "http://localhost:4873/"},
                root_ + "/.mcpcell-script-npmrc", root_ + "/ca.pem", ""};
  ScriptRun run{root_, "@corp/addon", pkg_, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), npm, {}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(spec->env.at("npm_config_userconfig"), npm.npmrc);
  EXPECT_EQ(spec->env.at("npm_config_registry"), "https://registry.npmjs.org/");
  EXPECT_EQ(spec->env.at("NODE_EXTRA_CA_CERTS"), kCellNpmCafile);
  bool ca = false;
  for (const auto& m : spec->mounts) {
    if (m.target != kCellNpmCafile) continue;
    ca = true;
    EXPECT_EQ(m.source, root_ + "/ca.pem");
    EXPECT_FALSE(m.writable);
  }
  EXPECT_TRUE(ca);
  EXPECT_EQ(spec->network.allow_hosts, std::vector<std::string>{"registry.npmjs.org"});
  ASSERT_EQ(spec->network.host_ports.size(), 1u);
  EXPECT_NE(spec->network.fixed_how_to_allow.find(
                "only the npm registries https://registry.npmjs.org and http://localhost:4873"),
            std::string::npos)
      << spec->network.fixed_how_to_allow;
}

// A registry given to no cell for a token in its URL: the lockfiles, which
// record its tarball URLs, are /dev/null in the cell.
TEST_F(ScriptCellNpmTest, TheLockfilesAreHiddenWhenARegistryWasRefusedForAToken) {
  std::ofstream(root_ + "/node_modules/.package-lock.json") << "{}";
  ScriptNpm npm{"https://unusable-registry.invalid/", {}, "", "", ""};
  ScriptRun run{root_, "@corp/addon", pkg_, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), npm, {}};
  auto masked = [](const CellSpec& spec, const std::string& target) {
    return std::any_of(spec.mounts.begin(), spec.mounts.end(), [&](const MountSpec& m) {
      return m.target == target && m.source == "/dev/null" && m.origin == MountSpec::Origin::kMasked;
    });
  };
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_FALSE(masked(*spec, root_ + "/node_modules/.package-lock.json"));
  run.npm.hide_lockfiles = true;
  spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_TRUE(masked(*spec, root_ + "/node_modules/.package-lock.json"));
  EXPECT_FALSE(masked(*spec, root_ + "/package-lock.json"));  // none here: nothing to hide
  // The plan sets it for a registry in use refused for a token, not for a user:password@.
  NpmConfig c;
  c.registry = "https://npm.fury.io/a1B2c3D4e5F6g7H8i9J0/someone/";
  EXPECT_TRUE(PlanScriptNpm(c, {}, {}, NoSecret).npm.hide_lockfiles);
  c.registry = "https://u:***@npm.example/";
  EXPECT_FALSE(PlanScriptNpm(c, {}, {}, NoSecret).npm.hide_lockfiles);
}

TEST_F(ScriptCellNpmTest, TheHostsProxySettingsNeverReachTheCell) {
  ::setenv("HTTPS_PROXY", "http://u:pxsecret@corp-proxy:3128", 1);
  ::setenv("npm_config_https_proxy", "http://u:pxsecret@corp-proxy:3128", 1);
  ScriptRun run{root_, "@corp/addon", pkg_, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5),
                ScriptNpm{"https://registry.example/", {"https://registry.example/"}, "", "", ""}, {}};
  auto spec = ScriptCellSpec(run);
  ::unsetenv("HTTPS_PROXY");
  ::unsetenv("npm_config_https_proxy");
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(spec->env.at("HTTPS_PROXY").rfind("http://127.0.0.1:", 0), 0u);  // mcpcell's egress proxy
  for (const auto& [k, v] : spec->env) EXPECT_EQ(v.find("corp-proxy"), std::string::npos) << k;
}

TEST_F(ScriptCellNpmTest, AMissingCafileIsNotBoundAsNpmIgnoresIt) {
  ScriptRun run{root_, "@corp/addon", pkg_, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5),
                ScriptNpm{"", {}, "", root_ + "/missing.pem", ""}, {}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(spec->env.count("NODE_EXTRA_CA_CERTS"), 0u);
  for (const auto& m : spec->mounts) EXPECT_NE(m.target, kCellNpmCafile);
}

TEST_F(ScriptCellNpmTest, ARelativeOrDirectoryCafileIsRefused) {
  for (const std::string& cafile : {std::string("ca.pem"), root_}) {
    ScriptRun run{root_, "@corp/addon", pkg_, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5),
                  ScriptNpm{"", {}, "", cafile, ""}, {}};
    auto spec = ScriptCellSpec(run);
    EXPECT_FALSE(spec.ok()) << cafile;
  }
}

TEST_F(ScriptCellNpmTest, RunPackageScriptsWritesTheNpmrcForTheRunsAndRemovesIt) {
  struct Recorder : ScriptCell {
    std::vector<ScriptRun> runs;
    std::string npmrc_seen;
    Status Run(const ScriptRun& r) override {
      runs.push_back(r);
      npmrc_seen = Slurp(r.npm.npmrc);
      return {};
    }
  } cell;
  // npm's hidden lockfile names what it installed from a registry; a
  // directory a tarball bundles (inBundle) opens no registry of its scope.
  std::ofstream(root_ + "/node_modules/.package-lock.json")
      << R"({"packages":{"node_modules/@corp/addon":{"version":"1.0.0",)"
      << R"("resolved":"https://npm.corp.example/npm/@corp/addon/-/addon-1.0.0.tgz"},)"
      << R"("node_modules/@corp/addon/node_modules/@unused/x":{"inBundle":true},"../@evil/x":{}}})";
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(5), [] { return CorpConfig(); }, NoSecret).ok());
  ASSERT_EQ(cell.runs.size(), 1u);
  const ScriptNpm& npm = cell.runs[0].npm;
  EXPECT_EQ(npm.npmrc, root_ + "/.mcpcell-script-npmrc");
  EXPECT_EQ(npm.registries,
            (std::vector<std::string>{"https://registry.npmjs.org/", "https://npm.corp.example/npm/"}));
  EXPECT_NE(cell.npmrc_seen.find("@corp:registry=\"https://npm.corp.example/npm/\""), std::string::npos);
  EXPECT_FALSE(fs::exists(npm.npmrc));  // gone with the runs: not published with the package
}

TEST_F(ScriptCellNpmTest, InstalledScopesAreTheLockfilesButBundledOnes) {
  EXPECT_TRUE(InstalledScopes(root_).empty());  // no lockfile: no scope (only the default registry)
  std::ofstream(root_ + "/node_modules/.package-lock.json") << R"({"packages":{
    "": {"name":"top"},
    "node_modules/@a/x": {},
    "node_modules/y/node_modules/@b/z": {"optional": true},
    "node_modules/y/node_modules/@c/bundled": {"inBundle": true},
    "node_modules/@d": {},
    "node_modules/@corp/alias": {"name": "lodash"},
    "node_modules/renamed": {"name": "@e/real"},
    "node_modules/@f/alias": {"name": "@f/real"},
    "node_modules/plain": {}}})";
  // An alias counts only when both its path and the package npm fetched
  // name the scope: "@corp/alias": "npm:lodash" opens no @corp registry,
  // nor does a package whose own name claims a scope its path has not.
  std::set<std::string> names;
  for (const auto& [scope, resolved] : InstalledScopes(root_)) names.insert(scope);
  EXPECT_EQ(names, (std::set<std::string>{"@a", "@b", "@f"}));
}

// adv5: an alias or a tarball URL whose manifest claims a configured scope
// was counted as that scope's package; only one npm fetched from the
// scope's own registry opens it.
TEST_F(ScriptCellNpmTest, OnlyAPackageFetchedFromItsScopesRegistryOpensIt) {
  std::ofstream(root_ + "/node_modules/.package-lock.json") << R"({"packages":{
    "node_modules/@corp/real": {"resolved": "https://npm.corp.example/npm/@corp/real/-/real-1.0.0.tgz"},
    "node_modules/@sc/alias": {},
    "node_modules/@sc/url": {"resolved": "http://elsewhere.example/t.tgz"},
    "node_modules/@pub/x": {"resolved": "https://registry.npmjs.org/@pub/x/-/x-1.0.0.tgz"}}})";
  NpmConfig config;
  config.registry = "https://registry.npmjs.org/";
  config.scopes = {{"@corp", "https://npm.corp.example/npm/"}, {"@sc", "https://sc.example/"}};
  EXPECT_EQ(ScopesFetchedFromTheirRegistry(InstalledScopes(root_), config), (std::set<std::string>{"@corp"}));
}

}  // namespace
}  // namespace mcpcell
