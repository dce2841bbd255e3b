// ServerRef parsing, TrustFacts and the npx install cache (with a fake npm).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <csignal>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "registry/catalog.h"
#include "source/npx_install.h"
#include "util/work_dir_lock.h"
#include "source/server_ref.h"
#include "policy/trust_facts.h"
#include "util/json_text.h"

namespace mcpcell {
namespace {

TEST(ServerRef, NpxSchemeAndSlashSpellingAreTheSame) {
  auto a = ParseServerRef(std::string("npx://@modelcontextprotocol/server-filesystem"), {"/data"});
  auto b = ParseServerRef(std::string("npx/@modelcontextprotocol/server-filesystem"), {"/data"});
  ASSERT_TRUE(a.ok()) << a.error().Message();
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ(a->kind, ServerRef::Kind::kNpx);
  EXPECT_EQ(a->package, "@modelcontextprotocol/server-filesystem");
  EXPECT_EQ(a->version, "");
  EXPECT_EQ(b->package, a->package);
  EXPECT_EQ(a->args, std::vector<std::string>{"/data"});
  EXPECT_EQ(CanonicalSource(*a), "npx://@modelcontextprotocol/server-filesystem");
}

TEST(ServerRef, ScopedPackageWithVersion) {
  auto r = ParseServerRef(std::string("npx://@scope/pkg@1.2.3"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->package, "@scope/pkg");
  EXPECT_EQ(r->version, "1.2.3");
  auto u = ParseServerRef(std::string("uvx://mcp-server-fetch@2025.4.7"), {});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kind, ServerRef::Kind::kUvx);
  EXPECT_EQ(u->package, "mcp-server-fetch");
}

TEST(ServerRef, DockerTagAndDigest) {
  std::string digest = "sha256:" + std::string(64, 'a');
  auto r = ParseServerRef("docker://ghcr.io:443/org/img:v1@" + digest, {});
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_EQ(r->package, "ghcr.io:443/org/img");
  EXPECT_EQ(r->version, "v1");
  EXPECT_EQ(r->digest, digest);
  EXPECT_FALSE(ParseServerRef(std::string("docker://img@sha256:abc"), {}).ok());
}

TEST(ServerRef, RegistryNameAndCommand) {
  auto r = ParseServerRef(std::string("filesystem"), {"/data"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kind, ServerRef::Kind::kRegistry);
  auto c = ParseServerRef(std::nullopt, {"node", "server.js"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, ServerRef::Kind::kCommand);
  EXPECT_EQ(c->package, "node");
  EXPECT_FALSE(ParseServerRef(std::nullopt, {}).ok());
}

TEST(ServerRef, RefusesNamesThatNpmWouldReadAsFlags) {
  for (std::string bad : {"npx://--registry=http://evil", "npx://-g", "npx://Upper", "npx://a b",
                          "npx://@scope", "npx://pkg@", "npx://pkg@--tag", "ftp://x", "npx://",
                          // what npm reads as a file, in any case (adv13)
                          "npx://pkg@x.tgz", "npx://pkg@x.TGZ", "npx://pkg@x.Tar", "npx://pkg@x.TAR.GZ"}) {
    auto r = ParseServerRef(bad, {});
    EXPECT_FALSE(r.ok()) << bad;
  }
}

// argv words are bytes: a command that is not UTF-8 still parses, and its
// JSON (--dry-run, explain --json) is written with U+FFFD instead of throwing
// json type_error 316 (found by fuzz/server_ref_fuzz.cc).
TEST(ServerRef, CommandThatIsNotUtf8RendersAsJson) {
  auto ref = ParseServerRef(std::nullopt, {"/bin/tr\xae", "x\xff"});
  ASSERT_TRUE(ref.ok()) << ref.error().Message();
  std::string text = JsonText(ToJson(*ref));
  EXPECT_NE(text.find("/bin/tr\xEF\xBF\xBD"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text)["package"], "/bin/tr\xEF\xBF\xBD");
}

TEST(ServerRef, ExactVersions) {
  EXPECT_TRUE(IsExactVersion("1.2.3"));
  EXPECT_TRUE(IsExactVersion("2026.8.31"));
  EXPECT_TRUE(IsExactVersion("1.0.0-rc.1"));
  EXPECT_FALSE(IsExactVersion(""));
  EXPECT_FALSE(IsExactVersion("latest"));
  EXPECT_FALSE(IsExactVersion("^1.2.3"));
  EXPECT_FALSE(IsExactVersion("1.2"));
}

TEST(TrustFacts, RegistryPinnedOnlyAtTheRegistryVersion) {
  auto cat = BundledCatalog();
  ASSERT_TRUE(cat.ok());
  const RegistryEntry* e = cat->Find("filesystem");
  ASSERT_NE(e, nullptr);
  TrustFacts pinned = GatherTrustFacts(e->source, e);
  EXPECT_TRUE(pinned.pinned);
  EXPECT_TRUE(pinned.registry_pinned);
  EXPECT_EQ(pinned.registry_tier, "official");
  EXPECT_EQ(pinned.publisher_scope, "@modelcontextprotocol");
  auto loose = ParseServerRef(std::string("npx://@modelcontextprotocol/server-filesystem"), {});
  TrustFacts f = GatherTrustFacts(*loose, cat->FindBySource(*loose));
  EXPECT_TRUE(f.in_registry);
  EXPECT_FALSE(f.pinned);
  EXPECT_FALSE(f.registry_pinned);
}

class FakeNpm : public PackageTool {
 public:
  int installs = 0;
  std::string bin = "\"dist/index.js\"";
  Result<std::string> ResolveVersion(const std::string&, const std::string&) override { return std::string("4.5.6"); }
  Status Install(const std::string& package, const std::string&, const std::string& prefix) override {
    ++installs;
    std::filesystem::create_directories(prefix + "/node_modules/" + package);
    std::ofstream(prefix + "/node_modules/" + package + "/package.json") << "{\"bin\": " << bin << "}";
    std::filesystem::create_directories(prefix + "/node_modules/" + package + "/dist");
    std::ofstream(prefix + "/node_modules/" + package + "/dist/index.js") << "";
    return {};
  }
};

TEST(NpxInstall, InstallsOnceIntoAPerVersionCacheAndFindsTheBin) {
  std::string root = std::filesystem::path(::testing::TempDir() + "/npx-cache-" + std::to_string(::getpid())).lexically_normal().string();
  std::filesystem::remove_all(root);
  FakeNpm npm;
  auto ref = ParseServerRef(std::string("npx://@acme/srv"), {});
  auto a = EnsureNpxPackage(*ref, npm, root, true);
  ASSERT_TRUE(a.ok()) << a.error().Message();
  EXPECT_EQ(a->version, "4.5.6");
  EXPECT_EQ(a->cache_dir, root + "/@acme+srv@4.5.6");
  EXPECT_EQ(a->bin_path, root + "/@acme+srv@4.5.6/node_modules/@acme/srv/dist/index.js");
  EXPECT_TRUE(a->installed_now);
  auto b = EnsureNpxPackage(*ref, npm, root, true);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->installed_now);
  EXPECT_EQ(npm.installs, 1);
  std::filesystem::remove_all(root);
}

TEST(NpxInstall, DryRunDoesNotInstall) {
  std::string root = ::testing::TempDir() + "/npx-dry-" + std::to_string(::getpid());
  FakeNpm npm;
  auto ref = ParseServerRef(std::string("npx://pkg@1.0.0"), {});
  auto a = EnsureNpxPackage(*ref, npm, root, false);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->present);
  EXPECT_EQ(npm.installs, 0);
}

TEST(NpxInstall, RefusesABinOutsideThePackage) {
  std::string root = ::testing::TempDir() + "/npx-escape-" + std::to_string(::getpid());
  std::filesystem::remove_all(root);
  FakeNpm npm;
  npm.bin = "\"../../../../etc/passwd\"";
  auto ref = ParseServerRef(std::string("npx://evil@1.0.0"), {});
  auto a = EnsureNpxPackage(*ref, npm, root, true);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().Message().find("outside the package"), std::string::npos);
  std::filesystem::remove_all(root);
}

TEST(NpxInstall, RemovesUnfinishedInstallsOfDeadRunsOnly) {
  namespace fs = std::filesystem;
  std::string root = ::testing::TempDir() + "/npx-abandoned-" + std::to_string(::getpid());
  fs::remove_all(root);
  // A pid that surely runs (ours) and one that surely does not (a reaped child's).
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  // A live mcpcell holds its own (util/work_dir_lock.h), whatever its pid
  // says here; one not held whose pid is the sweeper's is a killed earlier
  // run's (a container's PID 1, adv20).
  std::string live_dir = root + "/.install-1-aaaaaa";
  std::string own_pid_dir = root + "/.install-" + std::to_string(::getpid()) + "-dddddd";
  std::string dead_dir = root + "/.install-" + std::to_string(dead) + "-bbbbbb";
  std::string old_style = root + "/.install-cccccc";  // no pid: kept until it is ten minutes old
  for (const auto& d : {live_dir, own_pid_dir, dead_dir, old_style}) fs::create_directories(d + "/node_modules");
  fs::create_directories(root + "/pkg@1.0.0");
  UniqueFd held = HoldWorkDir(live_dir);
  ASSERT_TRUE(held);
  fs::last_write_time(live_dir, fs::file_time_type::clock::now() - std::chrono::hours(2));
  EXPECT_EQ(RemoveAbandonedInstalls(root), 2);
  EXPECT_TRUE(fs::exists(live_dir)) << "held: however old, whatever its pid";
  EXPECT_FALSE(fs::exists(own_pid_dir));
  EXPECT_FALSE(fs::exists(dead_dir));
  EXPECT_TRUE(fs::exists(old_style));
  EXPECT_TRUE(fs::exists(root + "/pkg@1.0.0"));
  fs::last_write_time(old_style, fs::file_time_type::clock::now() - std::chrono::minutes(11));
  EXPECT_EQ(RemoveAbandonedInstalls(root), 1);
  EXPECT_FALSE(fs::exists(old_style));
  held.reset();
  EXPECT_EQ(RemoveAbandonedInstalls(root), 1) << "no longer held, and old";
  EXPECT_FALSE(fs::exists(live_dir));
  fs::remove_all(root);
}

/// Whether `pid` is gone (or only a zombie waiting for its new parent to reap it).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

TEST(NpxInstall, AHangingNpmIsStoppedAfterTheLimitWithEverythingItStarted) {
  namespace fs = std::filesystem;
  std::string dir = ::testing::TempDir() + "/fake-npm-" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A stand-in npm that starts a child of its own and never finishes.
  std::ofstream(dir + "/npm") << "#!/bin/sh\nsleep 600 &\necho $! > " << dir << "/child.pid\nwait\n";
  fs::permissions(dir + "/npm", fs::perms::owner_all);
  std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  ::setenv("PATH", (dir + ":" + old_path).c_str(), 1);
  auto npm = MakeNpmTool({}, std::chrono::milliseconds(500));
  Status st = npm->Install("pkg", "1.0.0", dir + "/prefix");
  ::setenv("PATH", old_path.c_str(), 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Message().find("did not finish within 500ms"), std::string::npos) << st.error().Message();
  EXPECT_NE(st.error().Message().find("--install-timeout"), std::string::npos) << st.error().Message();
  pid_t child = 0;
  std::ifstream(dir + "/child.pid") >> child;
  ASSERT_GT(child, 0);
  for (int i = 0; i < 100 && !Gone(child); ++i) ::usleep(20000);  // reaping by init is not ours to wait on
  EXPECT_TRUE(Gone(child)) << "npm's own child survived the timeout";
  if (!Gone(child)) ::kill(child, SIGKILL);  // a failed run must not leave it holding our stderr
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mcpcell
