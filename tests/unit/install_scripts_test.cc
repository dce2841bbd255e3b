// Which installed npm packages have install scripts, in what order they run,
// and the cell ScriptCellSpec builds for one of them (source/install_scripts.h,
// cell/script_cell.h).
#include "source/install_scripts.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cell/script_cell.h"
#include "cell/script_network.h"
#include "source/lifecycle.h"
#include "source/npx_install.h"
#include "source/script_plan.h"
#include "source/script_bins.h"
#include "source/npm_config.h"
#include "source/registry_url.h"
#include "source/script_npm.h"

namespace mcpcell {
namespace {

/// No secret by the relay's rules: the shape rule of url_credential.h alone.
const SecretCheck NoSecret = [](std::string_view) { return false; };

namespace fs = std::filesystem;

/// npm's config naming the registry `url` and nothing else.
NpmConfig OnlyRegistry(const std::string& url) {
  NpmConfig c;
  c.registry = url;
  return c;
}

/// The npm settings of a cell that reaches the one registry `url`.
ScriptNpm Npm(const std::string& url) { return ScriptNpm{url, {url}, "", "", ""}; }

class InstallScriptsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/install-scripts-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = fs::canonical(tmpl).string();
    nm_ = root_ + "/node_modules";
    fs::create_directories(nm_);
  }
  void TearDown() override { fs::remove_all(root_); }

  /// A package at node_modules/<rel> with this manifest.
  std::string Pkg(const std::string& rel, const std::string& manifest) {
    std::string dir = nm_ + "/" + rel;
    fs::create_directories(dir);
    std::ofstream(dir + "/package.json") << manifest;
    return dir;
  }
  std::vector<std::string> Names() {
    std::vector<std::string> out;
    for (const auto& p : FindScriptPackages(nm_)) out.push_back(p.name);
    return out;
  }

  std::string root_, nm_;
};

TEST_F(InstallScriptsTest, FindsScriptsBindingGypScopesAndNestedPackages) {
  Pkg("plain", R"({"name":"plain","scripts":{"test":"x","prepare":"y"}})");
  Pkg("post", R"({"name":"post","scripts":{"postinstall":"node x.js"}})");
  std::string gyp = Pkg("gyp", R"({"name":"gyp"})");
  std::ofstream(gyp + "/binding.gyp") << "{}";
  Pkg("@s/pre", R"({"name":"@s/pre","scripts":{"preinstall":"sh x"}})");
  Pkg("@s/none", R"({"name":"@s/none"})");
  Pkg("plain/node_modules/inner", R"({"name":"inner","scripts":{"install":"make"}})");
  Pkg(".bin", R"({"scripts":{"install":"x"}})");
  Pkg("broken", "not json");
  Pkg("numeric", R"({"scripts":{"install":42}})");
  EXPECT_EQ(PackagesWithInstallScripts(nm_), (std::vector<std::string>{"@s/pre", "gyp", "inner", "post"}));
  EXPECT_TRUE(PackagesWithInstallScripts(root_ + "/missing").empty());
}

TEST_F(InstallScriptsTest, BindingGypIsNpmsImplicitInstallOnlyWithoutInstallOrPreinstall) {
  std::string a = Pkg("a", R"({"name":"a","scripts":{"postinstall":"p"}})");
  std::ofstream(a + "/binding.gyp") << "{}";
  std::string b = Pkg("b", R"({"name":"b","scripts":{"install":"prebuild-install || node-gyp rebuild"}})");
  std::ofstream(b + "/binding.gyp") << "{}";
  auto found = FindScriptPackages(nm_);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].events, (std::vector<std::string>{"install", "postinstall"}));  // node-gyp rebuild, then p
  EXPECT_EQ(found[1].events, (std::vector<std::string>{"install"}));
}

TEST_F(InstallScriptsTest, SymlinksAndFifosAreNotFollowed) {
  fs::create_directories(root_ + "/elsewhere");
  std::ofstream(root_ + "/elsewhere/package.json") << R"({"scripts":{"install":"x"}})";
  fs::create_directory_symlink(root_ + "/elsewhere", nm_ + "/linked");
  std::string f = Pkg("fifo", "");
  fs::remove(f + "/package.json");
  ASSERT_EQ(::mkfifo((f + "/package.json").c_str(), 0600), 0);  // would hang a read
  EXPECT_TRUE(Names().empty());
}

TEST_F(InstallScriptsTest, DependenciesWithScriptsRunFirstResolvedAsNodeDoes) {
  // app -> mid -> base (all with scripts); mid's nested copy of base wins for mid.
  Pkg("app", R"({"name":"app","dependencies":{"mid":"1"},"scripts":{"install":"a"}})");
  Pkg("mid", R"({"name":"mid","dependencies":{"base":"2"},"scripts":{"install":"m"}})");
  Pkg("base", R"({"name":"base","scripts":{"install":"b1"}})");
  Pkg("mid/node_modules/base", R"({"name":"base","scripts":{"install":"b2"}})");
  Pkg("zed", R"({"name":"zed","optionalDependencies":{"app":"1"},"scripts":{"install":"z"}})");
  auto found = FindScriptPackages(nm_);
  std::vector<std::string> dirs;
  for (const auto& p : found) dirs.push_back(p.dir.substr(nm_.size() + 1));
  // Depth first from each package by path: app pulls in mid, mid its own base;
  // the top-level base (nobody's dependency here) follows in path order.
  EXPECT_EQ(dirs, (std::vector<std::string>{"mid/node_modules/base", "mid", "app", "base", "zed"}));
}

TEST_F(InstallScriptsTest, DependencyCycleRunsEachOnce) {
  Pkg("a", R"({"name":"a","dependencies":{"b":"1"},"scripts":{"install":"a"}})");
  Pkg("b", R"({"name":"b","dependencies":{"a":"1"},"scripts":{"install":"b"}})");
  EXPECT_EQ(Names(), (std::vector<std::string>{"b", "a"}));
}

TEST(InstallScriptsMode, ParsesCellAndSkipOnly) {
  EXPECT_EQ(*ParseInstallScriptsMode("cell"), InstallScriptsMode::kCell);
  EXPECT_EQ(*ParseInstallScriptsMode("skip"), InstallScriptsMode::kSkip);
  EXPECT_FALSE(ParseInstallScriptsMode("host").ok());
  EXPECT_FALSE(ParseInstallScriptsMode("").ok());
}

TEST_F(InstallScriptsTest, RunsEachPackageInOrderAndRecordsIt) {
  struct Recorder : ScriptCell {
    std::vector<ScriptRun> runs;
    Status Run(const ScriptRun& r) override {
      runs.push_back(r);
      return {};
    }
  } cell;
  Pkg("dep", R"({"name":"dep","scripts":{"install":"d"}})");
  Pkg("top", R"({"name":"top","dependencies":{"dep":"1"},"scripts":{"postinstall":"t"}})");
  std::ofstream(nm_ + "/.package-lock.json") << "{}";
  EXPECT_FALSE(InstallScriptsRan(root_));
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(7), [] { return OnlyRegistry("https://registry.example/"); }, NoSecret).ok());
  ASSERT_EQ(cell.runs.size(), 2u);
  EXPECT_EQ(cell.runs[0].package, "dep");
  EXPECT_EQ(cell.runs[0].package_dir, nm_ + "/dep");
  ASSERT_EQ(cell.runs[0].argv.size(), 2u);
  EXPECT_EQ(cell.runs[0].argv[0], "/bin/sh");  // its planned steps, no npm
  EXPECT_EQ(cell.runs[0].argv[1].rfind(root_ + "/.mcpcell-bin.", 0), 0u) << cell.runs[0].argv[1];
  EXPECT_EQ(cell.runs[0].limit, std::chrono::seconds(7));
  EXPECT_EQ(cell.runs[0].npm.registries, std::vector<std::string>{"https://registry.example/"});  // the one host its cell reaches
  EXPECT_EQ(cell.runs[1].package, "top");
  EXPECT_TRUE(InstallScriptsRan(root_));
  EXPECT_FALSE(fs::exists(cell.runs[0].argv[1])) << "the program goes with its command view";
}

TEST_F(InstallScriptsTest, TheRegistryIsAskedOnlyWhenAPackageHasScripts) {
  struct Never : ScriptCell {
    Status Run(const ScriptRun&) override { return MakeError("no package has scripts"); }
  } cell;
  Pkg("plain", R"({"name":"plain"})");
  int asked = 0;
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [&] { ++asked; return OnlyRegistry("x"); }, NoSecret).ok());
  EXPECT_EQ(asked, 0) << "npm is not run for a registry no cell needs";
  EXPECT_TRUE(InstallScriptsRan(root_));
}

TEST_F(InstallScriptsTest, AFailureStopsAndRecordsNothing) {
  struct Failing : ScriptCell {
    int calls = 0;
    Status Run(const ScriptRun& r) override {
      ++calls;
      return MakeError("run the install scripts of", r.package, "boom");
    }
  } cell;
  Pkg("a", R"({"name":"a","scripts":{"install":"x"}})");
  Pkg("b", R"({"name":"b","scripts":{"install":"x"}})");
  EXPECT_FALSE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  EXPECT_EQ(cell.calls, 1);
  EXPECT_FALSE(InstallScriptsRan(root_));
}

TEST_F(InstallScriptsTest, AFailedOptionalDependencyIsRemovedAndTheInstallGoesOn) {
  struct FailsOpt : ScriptCell {
    std::vector<std::string> ran;
    Status Run(const ScriptRun& r) override {
      ran.push_back(r.package);
      if (r.package == "opt") return MakeError("run the install scripts of", r.package, "no compiler");
      return {};
    }
  } cell;
  Pkg("opt", R"({"name":"opt","scripts":{"install":"node-gyp rebuild"}})");
  Pkg("req", R"({"name":"req","scripts":{"install":"x"}})");
  // npm's own verdict on which packages are optional; a path out of the install is ignored.
  std::ofstream(nm_ + "/.package-lock.json")
      << R"({"packages":{"node_modules/opt":{"optional":true},"node_modules/req":{},"../../etc":{"optional":true}}})";
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  EXPECT_EQ(cell.ran, (std::vector<std::string>{"opt", "req"}));
  EXPECT_FALSE(fs::exists(nm_ + "/opt"));
  EXPECT_TRUE(fs::exists(nm_ + "/req"));
  EXPECT_TRUE(InstallScriptsRan(root_));
  // Not optional: the same failure fails the install.
  Pkg("opt", R"({"name":"opt","scripts":{"install":"node-gyp rebuild"}})");
  fs::remove(root_ + "/.mcpcell-install-scripts.json");
  std::ofstream(nm_ + "/.package-lock.json") << R"({"packages":{"node_modules/opt":{},"node_modules/req":{}}})";
  EXPECT_FALSE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  EXPECT_TRUE(fs::exists(nm_ + "/opt"));
}

// Adversary pass (adv2): a package directory's name is not a registry
// name when a tarball bundles it (node_modules/<anything> inside the
// tarball); its escapes went raw to the terminal in "running the install
// scripts of NAME", the optional dependency's warning and the skip warning.
TEST_F(InstallScriptsTest, AHostileDirectoryNameReachesStderrOnlyVisibly) {
  struct Fails : ScriptCell {
    Status Run(const ScriptRun& r) override { return MakeError("run the install scripts of", r.package, "no"); }
  } cell;
  const std::string evil = "x\x1b]0;owned\x07\x1b[2J\x1b[1A\rmcpcell: forged";
  Pkg(evil, R"({"name":"x","scripts":{"install":"x"}})");
  std::ofstream(nm_ + "/.package-lock.json") << R"({"packages":{"node_modules/)" << "x\\u001b]0;owned\\u0007\\u001b[2J\\u001b[1A\\rmcpcell: forged"
                                              << R"(":{"optional":true}}})";
  testing::internal::CaptureStderr();
  Status st = RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret);
  std::string err = testing::internal::GetCapturedStderr();
  std::string all = err + (st.ok() ? "" : st.error().Message());
  EXPECT_NE(all.find("running the install scripts of"), std::string::npos) << all;
  EXPECT_EQ(all.find('\x1b'), std::string::npos) << all;
  EXPECT_EQ(all.find('\x07'), std::string::npos) << all;
  EXPECT_EQ(all.find('\r'), std::string::npos) << all;
}

// The same with a newline in the name: a line of the tarball's own that
// reads as mcpcell's.
TEST_F(InstallScriptsTest, ANewlineInADirectoryNameForgesNoLine) {
  struct Ok : ScriptCell {
    Status Run(const ScriptRun&) override { return {}; }
  } cell;
  Pkg("x\nmcpcell: forged line", R"({"name":"x","scripts":{"install":"x"}})");
  testing::internal::CaptureStderr();
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("\nmcpcell: forged line"), std::string::npos) << err;
}

TEST_F(InstallScriptsTest, CellWritesOnlyThePackageDirAndHasNoNetworkWithoutARegistry) {
  std::string dir = Pkg("addon", R"({"name":"addon"})");
  Pkg("addon/node_modules/dep", R"({"name":"dep"})");
  ScriptRun run{root_, "addon", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  std::vector<std::string> writable_binds;
  bool install_ro = false, nested_ro = false;
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.writable) writable_binds.push_back(m.source);
    if (m.kind == MountSpec::Kind::kBind && m.source == root_) install_ro = !m.writable;
    if (m.kind == MountSpec::Kind::kBind && m.source == dir + "/node_modules") nested_ro = !m.writable;
  }
  EXPECT_EQ(writable_binds, std::vector<std::string>{dir});
  EXPECT_TRUE(install_ro);
  EXPECT_TRUE(nested_ro);  // its dependencies are other packages' code
  EXPECT_EQ(spec->network.mode, NetworkSpec::Mode::kNone);
  EXPECT_EQ(spec->workdir, root_);
  EXPECT_EQ(spec->env.at("npm_config_nodedir"), "/usr");
  EXPECT_EQ(spec->env.at("HOME"), spec->home);
  EXPECT_EQ(spec->env.count("NPM_TOKEN"), 0u);
  for (const auto& [k, v] : spec->env) EXPECT_EQ(v.find(root_ + "/.."), std::string::npos) << k;
}

TEST_F(InstallScriptsTest, CellReachesOnlyTheRegistryThroughTheProxyWithNpmPointedAtIt) {
  std::string dir = Pkg("addon", R"({"name":"addon"})");
  ScriptRun run{root_, "addon", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), Npm("https://registry.example.org/npm/"), {}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(spec->network.mode, NetworkSpec::Mode::kAllowList);
  EXPECT_FALSE(spec->network.allow_all);
  EXPECT_EQ(spec->network.allow_hosts, std::vector<std::string>{"registry.example.org"});
  EXPECT_EQ(spec->network.allow_ports, std::vector<std::uint16_t>{443});
  EXPECT_TRUE(spec->network.host_ports.empty());
  EXPECT_EQ(spec->env.at("npm_config_registry"), "https://registry.example.org/npm/");
  EXPECT_EQ(spec->env.at("HTTPS_PROXY").rfind("http://127.0.0.1:", 0), 0u);  // npm speaks to the proxy
  // A denial names the registry and --install-scripts=skip, not --allow-host (no flag reaches this cell).
  EXPECT_NE(spec->network.fixed_how_to_allow.find("only the npm registry https://registry.example.org,"),
            std::string::npos);
  EXPECT_EQ(spec->network.fixed_how_to_allow.find("--allow-host"), std::string::npos);
  bool certs = false, host_resolv = false;
  for (const auto& m : spec->mounts) {
    certs = certs || m.target == "/etc/ssl";
    host_resolv = host_resolv || m.target == "/etc/resolv.conf";
  }
  EXPECT_TRUE(certs);
  EXPECT_FALSE(host_resolv);  // the DNS stub's, never the host's
}

TEST_F(InstallScriptsTest, ARegistryOnTheHostsLoopbackIsReachedAsThatOnePort) {
  std::string dir = Pkg("addon", R"({"name":"addon"})");
  for (const char* url : {"http://127.0.0.1:4873/", "http://localhost:4873", "http://[::1]:4873/x"}) {
    ScriptRun run{root_, "addon", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), Npm(url), {}};
    auto spec = ScriptCellSpec(run);
    ASSERT_TRUE(spec.ok()) << url << ": " << spec.error().Message();
    EXPECT_EQ(spec->network.mode, NetworkSpec::Mode::kAllowList) << url;
    EXPECT_TRUE(spec->network.allow_hosts.empty()) << url;
    EXPECT_TRUE(spec->network.allow_ports.empty()) << url;
    ASSERT_EQ(spec->network.host_ports.size(), 1u) << url;
    EXPECT_EQ(spec->network.host_ports[0].port, 4873) << url;
  }
}

TEST(RegistryNetwork, RefusesWhatIsNoPlainRegistryUrlSayingWhy) {
  for (const char* url : {"ftp://registry.example/", "registry.example", "https://user:tok@registry.example/",
                          "https://.example.com/", "https://*.example.com/", "https://registry.example:0/",
                          "https://registry.example:65536/", "https://registry.example:/", "https://a:1:2/",
                          "https:///", "https://reg istry.example/", "https://registry.example\n.evil/",
                          "http://127.0.0.2:4873/", "http://0.0.0.0:80/", "https://[::1/"}) {
    auto net = RegistryNetwork(url);
    ASSERT_FALSE(net.ok()) << url;
    EXPECT_NE(net.error().Message().find("--install-scripts=skip"), std::string::npos) << net.error().Message();
  }
  // Default ports, case, an IP literal and a path are fine.
  auto plain = RegistryNetwork("HTTP://Registry.Example.:8080/path?q#f");
  ASSERT_TRUE(plain.ok()) << plain.error().Message();
  EXPECT_EQ(plain->allow_hosts, std::vector<std::string>{"registry.example"});
  EXPECT_EQ(plain->allow_ports, std::vector<std::uint16_t>{8080});
  // A name is pinned to what the host resolves it to (an intranet name to 10.x, this machine's own name to 127.x).
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof name - 1), 0);
  auto own = RegistryNetwork(std::string("http://") + name + ":4873/");
  ASSERT_TRUE(own.ok()) << own.error().Message();
  for (const auto& pin : own->resolve) {
    EXPECT_EQ(pin.port, 4873);
    EXPECT_EQ(pin.host, own->allow_hosts.at(0));
  }
  EXPECT_FALSE(own->resolve.empty()) << "this machine's own name " << name << " resolves";
  auto ip = RegistryNetwork("http://203.0.113.7/");
  ASSERT_TRUE(ip.ok()) << ip.error().Message();
  EXPECT_EQ(ip->allow_ports, std::vector<std::uint16_t>{80});
}

TEST_F(InstallScriptsTest, CellRefusesAPackageDirThatIsASymlinkOutOfTheInstall) {
  // An earlier package's script cannot plant a link that becomes this cell's writable bind.
  fs::create_directories(root_ + "/host-dir");
  Pkg("a", R"({"name":"a"})");
  fs::create_directory_symlink(root_ + "/host-dir", nm_ + "/a/node_modules");
  std::string via_link = nm_ + "/a/node_modules";
  ScriptRun run{root_, "b", via_link, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {}};
  auto spec = ScriptCellSpec(run);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().Message().find("not a plain directory below"), std::string::npos) << spec.error().Message();
  ScriptRun outside{root_, "c", root_ + "/host-dir", {"npm"}, std::chrono::seconds(5), {}, {}};
  EXPECT_FALSE(ScriptCellSpec(outside).ok());
}

// Adversary pass (adv2): the server package's own install script may
// rewrite its package.json and leave symlinks; the refusals PackageBin
// gives name the "bin" and where it leads, and run_cmd prints them with Say.
TEST_F(InstallScriptsTest, PackageBinRefusalsShowHostileTextVisibly) {
  std::string dir = Pkg("srv", R"({"name":"srv","bin":"../\u001b[2J\u001b]0;owned\u0007x.js"})");
  auto outside = PackageBin(dir, "srv");
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().Message().find('\x1b'), std::string::npos) << outside.error().Message();
  fs::create_directories(root_ + "/host\x1b[2J\rdir");
  std::ofstream(root_ + "/host\x1b[2J\rdir/x.js") << "";
  fs::create_symlink(root_ + "/host\x1b[2J\rdir/x.js", dir + "/cli.js");
  std::ofstream(dir + "/package.json") << R"({"name":"srv","bin":"cli.js"})";
  auto linked = PackageBin(dir, "srv");
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.error().Message().find('\x1b'), std::string::npos) << linked.error().Message();
  EXPECT_EQ(linked.error().Message().find('\r'), std::string::npos) << linked.error().Message();
}

// The registry URL the scripts' cell is opened to never carries the user's
// token, in any spelling npm (a WHATWG URL parser) accepts.
TEST(RegistryUrl, NormalizedWithoutUserInfoInEverySpellingNpmReads) {
  auto n = [](std::string_view url) {
    auto r = NormalizeRegistryUrl(url);
    return r.ok() ? *r : "refused: " + r.error().Message();
  };
  EXPECT_EQ(n("https://user:npm_tok@registry.example/npm/"), "https://registry.example/npm/");
  EXPECT_EQ(n("https://us@er:p@ss@registry.example:8443/"), "https://registry.example:8443/");
  EXPECT_EQ(n("https://registry.example/@scope%2fpkg"), "https://registry.example/@scope%2fpkg");
  EXPECT_EQ(n("http://127.0.0.1:4873"), "http://127.0.0.1:4873");
  EXPECT_EQ(n("http:/u:tok@127.0.0.1:4873/"), "http://127.0.0.1:4873/");
  EXPECT_EQ(n("http:u:tok@127.0.0.1:4873/"), "http://127.0.0.1:4873/");
  EXPECT_EQ(n("HTTPS:\\\\u:tok@Registry.Example\\npm\\"), "https://Registry.Example/npm/");
  for (const char* other : {"registry.example", "ftp://u:tok@registry.example/", "javascript:u:tok@x", ""}) {
    auto r = NormalizeRegistryUrl(other);
    ASSERT_FALSE(r.ok()) << other;
    EXPECT_EQ(r.error().Message().find("tok"), std::string::npos) << r.error().Message();
  }
  EXPECT_EQ(RegistryOrigin("https://npm-proxy.fury.io/TOKEN/user/"), "https://npm-proxy.fury.io");
  EXPECT_EQ(RegistryOrigin("http://127.0.0.1:4873"), "http://127.0.0.1:4873");
}

// npm 11 refuses `npm config get registry` for a URL with a password; the
// long listing names the effective value on its one uncommented line.
TEST(RegistryUrl, TheEffectiveValueOfNpmConfigListIsTheUncommentedLine) {
  std::string listing =
      "; \"default\" config\n"
      "; registry = \"https://registry.npmjs.org/\" ; overridden by env\n"
      "replace-registry-host = \"npmjs\"\n"
      "; registry = \"https://u:***@reg.example/npm/\" ; overridden by env\n"
      "registry = \"http://u:***@127.0.0.1:1/\"\n";
  auto r = RegistryFromConfigList(listing);
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_EQ(*r, "http://u:***@127.0.0.1:1/");
  EXPECT_EQ(*NormalizeRegistryUrl(*r), "http://127.0.0.1:1/");
  EXPECT_FALSE(RegistryFromConfigList("; registry = \"x\"\n").ok());
  EXPECT_FALSE(RegistryFromConfigList("registry = not-json\n").ok());
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// adv2: a bundled package's scripts run in its bundler's cell (npm's
// rebuild ran them there; mcpcell's plan keeps them there: the same
// tarball), named in its message, where their own directories are writable.
struct RecordingCell : ScriptCell {
  std::vector<ScriptRun> runs;
  Status Run(const ScriptRun& r) override {
    runs.push_back(r);
    return {};
  }
};

TEST_F(InstallScriptsTest, ABundledPackagesScriptsRunInItsBundlersCellWhichMayWriteItsDirectory) {
  RecordingCell cell;
  Pkg("dep", R"({"name":"dep","scripts":{"install":"d"}})");
  std::string parent = Pkg("parent", R"({"name":"parent","dependencies":{"nested":"1","dep":"1"},"bundleDependencies":["nested"],"scripts":{"install":"p"}})");
  std::string nested = Pkg("parent/node_modules/nested", R"({"name":"nested","dependencies":{"deeper":"1"},"scripts":{"install":"n"}})");
  std::string deeper = Pkg("parent/node_modules/nested/node_modules/deeper", R"({"name":"deeper","scripts":{"postinstall":"x"}})");
  // Placed by npm, not bundled: its own cell.
  std::string placed = Pkg("parent/node_modules/placed", R"({"name":"placed","scripts":{"install":"y"}})");
  std::ofstream(nm_ + "/.package-lock.json") << R"({"packages":{
    "node_modules/parent":{},
    "node_modules/parent/node_modules/nested":{"inBundle":true},
    "node_modules/parent/node_modules/nested/node_modules/deeper":{"inBundle":true},
    "node_modules/parent/node_modules/placed":{}}})";
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  std::vector<std::string> dirs;
  for (const auto& r : cell.runs) dirs.push_back(r.package_dir);
  EXPECT_EQ(dirs, (std::vector<std::string>{nm_ + "/dep", parent, placed}));
  const ScriptRun& p = cell.runs[1];
  EXPECT_EQ(p.bundled, (std::vector<std::string>{deeper, nested}));
  EXPECT_TRUE(cell.runs[0].bundled.empty());
  EXPECT_TRUE(cell.runs[2].bundled.empty());
}

TEST_F(InstallScriptsTest, ABundlerWithoutScriptsOfItsOwnStillRunsWhatItBundles) {
  RecordingCell cell;
  std::string parent = Pkg("@s/parent", R"({"name":"@s/parent","bundleDependencies":true})");
  std::string nested = Pkg("@s/parent/node_modules/@t/nested", R"({"name":"@t/nested","scripts":{"install":"n"}})");
  std::ofstream(nm_ + "/.package-lock.json")
      << R"({"packages":{"node_modules/@s/parent/node_modules/@t/nested":{"inBundle":true}}})";
  testing::internal::CaptureStderr();
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  std::string said = testing::internal::GetCapturedStderr();
  ASSERT_EQ(cell.runs.size(), 1u);
  EXPECT_EQ(cell.runs[0].package, "@s/parent");
  EXPECT_EQ(cell.runs[0].package_dir, parent);
  EXPECT_EQ(cell.runs[0].bundled, std::vector<std::string>{nested});
  EXPECT_NE(said.find("the packages @s/parent bundles: @t/nested (install)"), std::string::npos) << said;
  EXPECT_NE(said.find("and the bundled packages' directories only"), std::string::npos) << said;
}

TEST_F(InstallScriptsTest, TheBundlersCellWritesTheBundledDirectoriesAndNothingElseOfItsNodeModules) {
  std::string dir = Pkg("parent", R"({"name":"parent"})");
  std::string bundled = Pkg("parent/node_modules/nested", R"({"name":"nested"})");
  Pkg("parent/node_modules/placed", R"({"name":"placed"})");
  ScriptRun run{root_, "parent", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {bundled}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  std::vector<std::string> writable;
  bool nested_ro = false;
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.writable) writable.push_back(m.source);
    if (m.kind == MountSpec::Kind::kBind && m.source == dir + "/node_modules") nested_ro = !m.writable;
  }
  EXPECT_EQ(writable, (std::vector<std::string>{dir, bundled}));
  EXPECT_TRUE(nested_ro);
  // A "bundled" directory anywhere else, or behind a symlink, is refused.
  for (std::string other : {nm_ + "/placed-elsewhere", dir + "/node_modules/../../other", root_ + "/host"}) {
    fs::create_directories(other);
    ScriptRun bad{root_, "parent", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {other}};
    EXPECT_FALSE(ScriptCellSpec(bad).ok()) << other;
  }
  fs::create_directory_symlink(root_ + "/host", dir + "/node_modules/link");
  ScriptRun linked{root_, "parent", dir, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {dir + "/node_modules/link"}};
  EXPECT_FALSE(ScriptCellSpec(linked).ok());
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// adv4 (high): any package's bin named "node-gyp" or "node" in
// node_modules/.bin ran in another package's script cell. Each cell now
// shows only the bins of what the package declares.
TEST_F(InstallScriptsTest, AScriptCellSeesOnlyTheBinsOfWhatThePackageDependsOn) {
  std::string v = Pkg("v", R"({"name":"v","dependencies":{"tool":"1","@s/t2":"1"},"scripts":{"install":"tool"}})");
  Pkg("tool", R"({"name":"tool","bin":{"tool":"./cli.js","../escape":"./cli.js","up":"../v/index.js"}})");
  std::ofstream(nm_ + "/tool/cli.js") << "#!/usr/bin/env node\n";
  Pkg("v/node_modules/@s/t2", R"({"name":"@s/t2","bin":"bin/t2.js"})");
  fs::create_directories(nm_ + "/v/node_modules/@s/t2/bin");
  std::ofstream(nm_ + "/v/node_modules/@s/t2/bin/t2.js") << "x";
  Pkg("evil", R"({"name":"evil","bin":{"node-gyp":"shim.js","node":"shim.js"}})");
  std::ofstream(nm_ + "/evil/shim.js") << "x";
  fs::create_directories(nm_ + "/.bin");
  fs::create_directories(nm_ + "/v/node_modules/.bin");
  // The plan's (script_plan.h), from the manifests it read once.
  const auto planned = PlanScriptCells(root_, ReadNpmLockfile(root_));
  ASSERT_EQ(planned.size(), 1u);
  const auto& links = planned[0].bin_links;
  EXPECT_EQ(links, (std::map<std::string, std::string>{{"tool", nm_ + "/tool/cli.js"},
                                                       {"t2", nm_ + "/v/node_modules/@s/t2/bin/t2.js"}}));
  const auto bin_dirs = BinDirs(root_);
  EXPECT_EQ(bin_dirs, (std::vector<std::string>{nm_ + "/.bin", nm_ + "/v/node_modules/.bin"}));

  auto view = BinView::Make(root_, links);
  ASSERT_TRUE(view.ok()) << view.error().Message();
  EXPECT_EQ(fs::read_symlink(view->links_dir() + "/tool"), nm_ + "/tool/cli.js");
  ScriptRun run{root_, "v", v, std::vector<std::string>{"/bin/sh", "x"}, std::chrono::seconds(5), {}, {}, bin_dirs, view->dir()};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  std::map<std::string, std::string> over;  // target -> source
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.target.ends_with("/.bin")) {
      EXPECT_FALSE(m.writable);
      over[m.target] = m.source;
    }
  }
  // The nearest .bin npm puts on the PATH shows the links, the other nothing.
  EXPECT_EQ(over[nm_ + "/v/node_modules/.bin"], view->links_dir());
  EXPECT_EQ(over[nm_ + "/.bin"], view->empty_dir());
  std::string dir = view->dir();
  { BinView gone = std::move(*view); }
  EXPECT_FALSE(fs::exists(dir)) << "the view is removed with its object";
}

// The plan reads each package.json once (script_plan.h): the commands a
// cell sees come from that read, and a dependency is a name, never a path.
TEST_F(InstallScriptsTest, ACellsCommandsComeFromThePlansReadOfTheManifests) {
  Pkg("tool", R"({"name":"tool","bin":{"tool":"cli.js"}})");
  std::ofstream(nm_ + "/tool/cli.js") << "x";
  Pkg("other", R"({"name":"other","bin":{"other":"cli.js"}})");
  std::ofstream(nm_ + "/other/cli.js") << "x";
  Pkg("b..x", R"({"name":"b..x","bin":{"bx":"cli.js"}})");  // a name, not a path (adv4)
  std::ofstream(nm_ + "/b..x/cli.js") << "x";
  const std::string abs = nm_ + "/other";
  Pkg("v", R"({"name":"v","dependencies":{"tool":"1","b..x":"1",")" + abs +
               R"(":"1","../other":"1","./other":"1"},"scripts":{"install":"x"}})");
  const auto planned = PlanScriptCells(root_, ReadNpmLockfile(root_));
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0].bin_links,
            (std::map<std::string, std::string>{{"tool", nm_ + "/tool/cli.js"}, {"bx", nm_ + "/b..x/cli.js"}}));
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// The planner (source/script_plan.h): which scripts run in which cell, in
// which order, decided once on the host. adv4 found `npm rebuild` in each
// cell deciding otherwise than the plan (the e2e cases are
// tests/e2e/adv4_bundled_scripts.test.mjs).
std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ScriptPlanTest : public InstallScriptsTest {
 protected:
  void Lock(const std::string& packages) { std::ofstream(nm_ + "/.package-lock.json") << R"({"packages":)" << packages << "}"; }
  std::vector<ScriptCellPlan> Plan() { return PlanScriptCells(root_, ReadNpmLockfile(root_)); }
  /// The exit status of /bin/sh running LifecycleProgram(steps); -1 when it could not.
  int RunProgram(const std::vector<LifecycleStep>& steps) {
    auto program = LifecycleProgram(steps);
    if (!program.ok()) return -1;
    std::ofstream(root_ + "/prog.sh") << *program;
    int status = std::system(("/bin/sh " + root_ + "/prog.sh >/dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static std::vector<std::string> Dirs(const std::vector<ScriptPackage>& ps) {
    std::vector<std::string> out;
    for (const auto& p : ps) out.push_back(p.dir);
    return out;
  }
};

// What npm's rebuild sets from the package's node (arborist rebuild.js):
// resolved and integrity when recorded, the flags as "1" or "".
TEST(LifecycleNodeEnv, IsWhatNpmsRebuildSets) {
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(NodeEnv(PackageNode{}), (Env{{"npm_package_optional", ""}, {"npm_package_dev", ""},
                                          {"npm_package_peer", ""}, {"npm_package_dev_optional", ""}}));
  PackageNode n{"https://r.example/a/-/a-1.0.0.tgz", "sha512-abc", true, false, true, true};
  EXPECT_EQ(NodeEnv(n), (Env{{"npm_package_resolved", "https://r.example/a/-/a-1.0.0.tgz"},
                             {"npm_package_integrity", "sha512-abc"}, {"npm_package_optional", "1"},
                             {"npm_package_dev", ""}, {"npm_package_peer", "1"},
                             {"npm_package_dev_optional", ""}}));  // devOptional, but optional: npm says ""
  n.optional = false;
  EXPECT_EQ(NodeEnv(n).back(), (std::pair<std::string, std::string>{"npm_package_dev_optional", "1"}));
}

TEST_F(ScriptPlanTest, EachStepGetsWhatTheLockfileEntrySaysOfItsPackage) {
  Pkg("a", R"({"name":"a","version":"1.0.0","scripts":{"install":"a"}})");
  Pkg("b", R"({"name":"b","version":"1.0.0","scripts":{"postinstall":"b"}})");
  Lock(R"({"node_modules/a":{"resolved":"https://r.example/a/-/a-1.0.0.tgz","integrity":"sha512-x","optional":true},
           "node_modules/b":{"dev":true,"peer":true}})");
  auto planned = Plan();
  ASSERT_EQ(planned.size(), 2u);
  auto value = [](const LifecycleStep& step, const std::string& key) -> std::string {
    for (const auto& [k, v] : step.env) {
      if (k == key) return v;
    }
    return "<unset>";
  };
  const LifecycleStep& a = planned[0].steps.at(0);
  EXPECT_EQ(value(a, "npm_package_resolved"), "https://r.example/a/-/a-1.0.0.tgz");
  EXPECT_EQ(value(a, "npm_package_integrity"), "sha512-x");
  EXPECT_EQ(value(a, "npm_package_optional"), "1");
  EXPECT_EQ(value(a, "npm_package_dev"), "");
  EXPECT_EQ(value(a, "npm_package_name"), "a");  // the manifest's, as before
  const LifecycleStep& b = planned[1].steps.at(0);
  EXPECT_EQ(value(b, "npm_package_resolved"), "<unset>");
  EXPECT_EQ(value(b, "npm_package_dev"), "1");
  EXPECT_EQ(value(b, "npm_package_peer"), "1");
}

// A cell never gets a credential: a resolved URL with a token or a user is
// left out, where npm would set it.
TEST_F(ScriptPlanTest, AResolvedUrlWithACredentialIsLeftOut) {
  Pkg("a", R"({"name":"a","scripts":{"install":"a"}})");
  Pkg("b", R"({"name":"b","scripts":{"install":"b"}})");
  Pkg("c", R"({"name":"c","scripts":{"install":"c"}})");
  Lock(R"({"node_modules/a":{"resolved":"https://npm.fury.io/a1B2c3D4e5F6g7H8i9J0/me/a/-/a-1.0.0.tgz"},
           "node_modules/b":{"resolved":"https://u:pw@r.example/b/-/b-1.0.0.tgz"},
           "node_modules/c":{"resolved":"https://r.example/c/-/c-1.0.0.tgz"}})");
  struct ProgramCell : ScriptCell {
    std::string programs;
    Status Run(const ScriptRun& r) override {
      programs += ReadAll(r.argv.at(1));  // the program file lives as long as the run
      return {};
    }
  } cell;
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  const std::string& programs = cell.programs;
  EXPECT_EQ(programs.find("a1B2c3D4e5F6g7H8i9J0"), std::string::npos) << programs;
  EXPECT_EQ(programs.find("u:pw"), std::string::npos) << programs;
  EXPECT_NE(programs.find("npm_package_resolved=https://r.example/c/-/c-1.0.0.tgz"), std::string::npos) << programs;
}

TEST_F(ScriptPlanTest, WhatNpmDidNotPlaceIsTheTarballsOfTheNearestPackageItPlacedAbove) {
  // a's package.json declares no bundle (the registry's said none either:
  // finding 1); its tarball carried b, a versionless q inside b (3), and a
  // folder named "b..x" (4). npm placed x below a (another tarball).
  std::string a = Pkg("a", R"({"name":"a","dependencies":{"x":"2"}})");
  std::string b = Pkg("a/node_modules/b", R"({"name":"b","version":"1.0.0","scripts":{"install":"b"}})");
  std::string q = Pkg("a/node_modules/b/node_modules/q", R"({"name":"q","scripts":{"install":"q"}})");
  std::string dd = Pkg("a/node_modules/b..x", R"({"name":"dd","version":"1.0.0","scripts":{"install":"dd"}})");
  std::string x = Pkg("a/node_modules/x", R"({"name":"x","version":"2.0.0","scripts":{"install":"x"}})");
  Lock(R"({"":{},"node_modules/a":{"version":"1.0.0"},"node_modules/a/node_modules/x":{"version":"2.0.0"},
           "node_modules/a/node_modules/b..x":{"version":"1.0.0","inBundle":true}})");
  auto cells = Plan();
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].package.dir, x);  // placed by npm: a cell of its own, whatever a's manifest says; a depends on it
  EXPECT_TRUE(cells[0].bundled.empty());
  // a has no scripts of its own: the cell is its, for what it carries.
  EXPECT_EQ(cells[1].package.dir, a);
  EXPECT_TRUE(cells[1].package.events.empty());
  EXPECT_EQ(Dirs(cells[1].bundled), (std::vector<std::string>{b, q, dd}));
  EXPECT_TRUE(cells[1].placed_below.empty());
  // A manifest claiming x as bundled changes nothing.
  std::ofstream(a + "/package.json") << R"({"name":"a","bundleDependencies":["x"],"dependencies":{"x":"2"}})";
  auto again = Plan();
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].package.dir, x);
}

TEST_F(ScriptPlanTest, ABundlersCellRunsAfterTheCellsOfWhatAnyOfItsPackagesDependsOn) {
  // Finding 2: w (no scripts) bundles b1 and b2; b2 depends on zr, which
  // npm placed at the top and which builds. By path w comes first.
  Pkg("w", R"({"name":"w","bundleDependencies":["b1","b2"],"dependencies":{"b1":"1","b2":"1"}})");
  std::string b1 = Pkg("w/node_modules/b1", R"({"name":"b1","scripts":{"install":"b1"}})");
  std::string b2 = Pkg("w/node_modules/b2", R"({"name":"b2","dependencies":{"zr":"1"},"scripts":{"install":"b2"}})");
  std::string zr = Pkg("zr", R"({"name":"zr","scripts":{"install":"zr"}})");
  Lock(R"({"node_modules/w":{},"node_modules/w/node_modules/b1":{"inBundle":true},
           "node_modules/w/node_modules/b2":{"inBundle":true},"node_modules/zr":{}})");
  auto cells = Plan();
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].package.dir, zr);
  EXPECT_EQ(cells[1].package.dir, nm_ + "/w");
  EXPECT_EQ(Dirs(cells[1].bundled), (std::vector<std::string>{b1, b2}));
}

TEST_F(ScriptPlanTest, ThroughAPackageWithoutScriptsToo) {
  // app -> mid (no scripts) -> base: base builds first although app is first by path.
  Pkg("app", R"({"name":"app","dependencies":{"mid":"1"},"scripts":{"install":"a"}})");
  Pkg("mid", R"({"name":"mid","dependencies":{"zbase":"1"}})");
  Pkg("zbase", R"({"name":"zbase","scripts":{"install":"b"}})");
  auto cells = Plan();  // no lockfile: each directory its own
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].package.name, "zbase");
  EXPECT_EQ(cells[1].package.name, "app");
}

TEST_F(ScriptPlanTest, StepsAreEachPackagesEventsInNpmsOrderDependenciesFirst) {
  std::string p = Pkg("p", R"({"name":"p","version":"1.2.3","dependencies":{"n":"1"},"config":{"port":8080,"list":["a",null]},
      "scripts":{"postinstall":"post","preinstall":"pre","install":"","prepare":"no"}})");
  std::string n = Pkg("p/node_modules/n", R"({"name":"n","version":"0.1.0"})");
  std::ofstream(n + "/binding.gyp") << "{}";  // npm's implicit node-gyp rebuild
  std::string off = Pkg("off", R"({"name":"off","gypfile":false})");
  std::ofstream(off + "/binding.gyp") << "{}";  // turned off
  Lock(R"({"node_modules/p":{},"node_modules/p/node_modules/n":{"inBundle":true},"node_modules/off":{}})");
  auto cells = Plan();
  ASSERT_EQ(cells.size(), 1u);
  std::vector<std::string> steps;
  for (const auto& s : cells[0].steps) steps.push_back(s.dir.substr(nm_.size() + 1) + " " + s.event + ": " + s.script);
  EXPECT_EQ(steps, (std::vector<std::string>{"p/node_modules/n install: node-gyp rebuild", "p preinstall: pre",
                                             "p postinstall: post"}));
  EXPECT_EQ(cells[0].steps[1].id, "p@1.2.3");
  auto env = cells[0].steps[1].env;
  auto has = [&env](const std::string& k, const std::string& v) {
    return std::find(env.begin(), env.end(), std::make_pair(k, v)) != env.end();
  };
  EXPECT_TRUE(has("npm_package_name", "p"));
  EXPECT_TRUE(has("npm_package_version", "1.2.3"));
  EXPECT_TRUE(has("npm_package_config_port", "8080"));
  EXPECT_TRUE(has("npm_package_config_list_0", "a"));
  EXPECT_TRUE(has("npm_package_config_list_1", ""));
}

TEST_F(ScriptPlanTest, APackageNpmPlacedBelowABundledOneIsReadOnlyInTheBundlersCell) {
  std::string a = Pkg("a", R"({"name":"a","scripts":{"install":"a"}})");
  std::string b = Pkg("a/node_modules/b", R"({"name":"b","scripts":{"install":"b"}})");
  std::string x = Pkg("a/node_modules/b/node_modules/x", R"({"name":"x","scripts":{"install":"x"}})");
  Lock(R"({"node_modules/a":{},"node_modules/a/node_modules/b":{"inBundle":true},
           "node_modules/a/node_modules/b/node_modules/x":{}})");
  auto cells = Plan();
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].package.dir, a);
  EXPECT_EQ(Dirs(cells[0].bundled), std::vector<std::string>{b});
  EXPECT_EQ(cells[0].placed_below, std::vector<std::string>{x});
  EXPECT_EQ(cells[1].package.dir, x);
  // ...and so the cell is built.
  ScriptRun run{root_, "a", a, {"/bin/sh", "x"}, std::chrono::seconds(5), {}, {b}, {}, {}, {x}};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  std::vector<std::pair<std::string, bool>> binds;
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.source.rfind(nm_, 0) == 0) binds.emplace_back(m.source, m.writable);
  }
  EXPECT_EQ(binds, (std::vector<std::pair<std::string, bool>>{
                       {a, true}, {a + "/node_modules", false}, {b, true}, {x, false}}));
}

// Finding 5: npm in each cell re-read the package.json files, which an
// earlier cell could write. The program each cell runs is planned before
// the first runs: a manifest rewritten meanwhile changes nothing.
TEST_F(ScriptPlanTest, WhatAnEarlierCellWritesChangesNoLaterCellsSteps) {
  struct Rewriting : ScriptCell {
    std::string victim;
    std::vector<std::string> programs;
    Status Run(const ScriptRun& r) override {
      programs.push_back(ReadAll(r.argv.at(1)));
      std::ofstream(victim) << R"({"name":"z","scripts":{"install":"EVIL","postinstall":"EVIL"}})";
      return {};
    }
  } cell;
  Pkg("a", R"({"name":"a","scripts":{"install":"build-a"}})");
  cell.victim = Pkg("z", R"({"name":"z","scripts":{"install":"build-z"}})") + "/package.json";
  ASSERT_TRUE(RunPackageScripts(root_, cell, std::chrono::seconds(1), [] { return NpmConfig{}; }, NoSecret).ok());
  ASSERT_EQ(cell.programs.size(), 2u);
  EXPECT_NE(cell.programs[1].find("build-z"), std::string::npos) << cell.programs[1];
  EXPECT_EQ(cell.programs[1].find("EVIL"), std::string::npos) << cell.programs[1];
}

TEST_F(ScriptPlanTest, ALockfileKeyOutOfTheInstallPlacesNothing) {
  Pkg("a", R"({"name":"a"})");
  std::string b = Pkg("a/node_modules/b", R"({"name":"b","scripts":{"install":"b"}})");
  Lock(R"({"node_modules/a":{},"node_modules/a/node_modules/../node_modules/b":{},"node_modules/a/./node_modules/b":{}})");
  auto cells = Plan();
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].package.dir, nm_ + "/a");
  EXPECT_EQ(Dirs(cells[0].bundled), std::vector<std::string>{b});
}

// The program itself, run by the real /bin/sh.
TEST_F(ScriptPlanTest, TheProgramRunsEachStepInItsDirectoryWithNpmsVariablesAndStopsAtAFailure) {
  std::string p = Pkg("p", "{}");
  std::string q = Pkg("q", "{}");
  const std::string hostile = "it's \"x\" $(touch " + root_ + "/pwned) `touch " + root_ + "/pwned2`\n";
  std::vector<LifecycleStep> steps{
      {p, "p@1", "install", "pwd > cwd; env > env.txt", {{"npm_package_name", hostile}}},
      {q, "q@1", "postinstall", "touch ran; exit 3", {}},
      {p, "p@1", "postinstall", "touch never", {}},
  };
  EXPECT_EQ(RunProgram(steps), 3);
  std::ifstream cwd(p + "/cwd");
  std::string line;
  std::getline(cwd, line);
  EXPECT_EQ(line, p);
  std::string env = ReadAll(p + "/env.txt");
  EXPECT_NE(env.find("npm_lifecycle_event=install\n"), std::string::npos) << env;
  EXPECT_NE(env.find("npm_lifecycle_script=pwd > cwd; env > env.txt\n"), std::string::npos) << env;
  EXPECT_NE(env.find("npm_package_json=" + p + "/package.json\n"), std::string::npos) << env;
  EXPECT_NE(env.find("npm_package_name=" + hostile), std::string::npos) << env;
  EXPECT_FALSE(fs::exists(root_ + "/pwned"));
  EXPECT_FALSE(fs::exists(root_ + "/pwned2"));
  EXPECT_TRUE(fs::exists(q + "/ran"));
  EXPECT_FALSE(fs::exists(p + "/never"));
}

TEST_F(ScriptPlanTest, TheProgramRefusesADirectorySwappedForALink) {
  std::string p = Pkg("p", "{}");
  std::string q = Pkg("q", "{}");
  fs::create_directories(root_ + "/elsewhere");
  std::vector<LifecycleStep> steps{{p, "p@1", "preinstall", "mv ../q ../q-old && ln -s ../elsewhere ../q", {}},
                                   {q, "q@1", "install", "touch pwned", {}}};
  EXPECT_EQ(RunProgram(steps), 1);
  EXPECT_TRUE(fs::is_symlink(q)) << "the swap happened";
  EXPECT_FALSE(fs::exists(root_ + "/elsewhere/pwned"));
}

TEST(Lifecycle, ANulByteIsRefusedNotCut) {
  auto program = LifecycleProgram({{"/x", "p@1", "install", std::string("echo a\0; rm -rf /", 18), {}}});
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.error().Message().find("NUL"), std::string::npos) << program.error().Message();
  // A key no environment can hold is left out; values are kept.
  auto env = PackageEnv(nlohmann::json::parse(R"({"name":"n","config":{"a=b":"x","ok":true,"off":false}})"));
  EXPECT_EQ(env, (std::vector<std::pair<std::string, std::string>>{
                     {"npm_package_name", "n"}, {"npm_package_config_off", ""}, {"npm_package_config_ok", "true"}}));
}

}  // namespace
}  // namespace mcpcell

namespace mcpcell {
namespace {

// What npm's run-script gives every script, as the cell's environment:
// the command view first on PATH, then npm's node-gyp wrapper (found from
// the npm on the cell's PATH), never a node_modules/.bin of the chain.
TEST_F(InstallScriptsTest, TheCellsPathIsTheCommandViewThenNpmsNodeGypThenTheSystems) {
  std::string v = Pkg("v", R"({"name":"v"})");
  fs::create_directories(nm_ + "/.bin");
  auto view = BinView::Make(root_, {});
  ASSERT_TRUE(view.ok()) << view.error().Message();
  ScriptRun run{root_, "v", v, {"/bin/sh", "x"}, std::chrono::seconds(5), {}, {}, {nm_ + "/.bin"}, view->dir()};
  auto spec = ScriptCellSpec(run);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  const std::string path = spec->env.at("PATH");
  EXPECT_EQ(path.rfind(view->links_dir() + ":", 0), 0u) << path;
  EXPECT_EQ(path.find("node_modules/.bin"), std::string::npos) << path;
  EXPECT_EQ(spec->env.at("INIT_CWD"), root_);
  if (spec->env.count("npm_config_node_gyp") == 0) GTEST_SKIP() << "no npm with its node-gyp on this machine's PATH";
  EXPECT_NE(path.find("/@npmcli/run-script/lib/node-gyp-bin:"), std::string::npos) << path;
  EXPECT_TRUE(fs::is_regular_file(spec->env.at("npm_config_node_gyp")));
  EXPECT_TRUE(fs::is_regular_file(spec->env.at("npm_execpath")));
}

}  // namespace
}  // namespace mcpcell
