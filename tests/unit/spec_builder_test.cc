#include "cell/spec_builder.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cell/mount_plan.h"
#include "forked_child.h"
#include "util/home_path.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// temp_dir.h's directory as a canonical fs::path (a bind source is
// recorded by its real path), for `d.Path() / "x"`.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("mcpcell-spec") {}
  fs::path Path() const { return fs::canonical(path()); }
};

const MountSpec* Find(const CellSpec& s, const std::string& target) {
  for (const auto& m : s.mounts) {
    if (m.target == target) return &m;
  }
  return nullptr;
}

TEST(BuildCellSpec, FlagsLowerIntoLimitsEnvAndMounts) {
  TempDir d;
  fs::create_directories(d.Path() / "ro");
  fs::create_directories(d.Path() / "rw");
  RunRequest req;
  req.memory = "512m";
  req.pids = "128";
  req.cpus = "1.5";
  req.tmp_size = "32m";
  req.timeout = "30s";
  req.read = {(d.Path() / "ro").string()};
  req.write = {(d.Path() / "rw").string() + ":/data"};
  req.env = {"FOO=bar"};
  ::setenv("MCPCELL_TEST_TOKEN", "secret-value", 1);
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/sh", "-c", "true"}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(*spec->limits.memory_bytes.value, 512ULL << 20);
  EXPECT_TRUE(spec->limits.memory_bytes.requested);
  EXPECT_EQ(*spec->limits.pids.value, 128u);
  EXPECT_DOUBLE_EQ(*spec->limits.cpus.value, 1.5);
  EXPECT_EQ(spec->limits.tmp_bytes, 32ULL << 20);
  EXPECT_EQ(spec->limits.timeout->count(), 30000);
  const MountSpec* ro = Find(*spec, (d.Path() / "ro").string());
  ASSERT_NE(ro, nullptr);
  EXPECT_FALSE(ro->writable);
  const MountSpec* rw = Find(*spec, "/data");
  ASSERT_NE(rw, nullptr);
  EXPECT_TRUE(rw->writable);
  EXPECT_EQ(rw->source, fs::canonical(d.Path() / "rw").string());
  EXPECT_EQ(spec->env.at("FOO"), "bar");
  EXPECT_EQ(spec->env.count("MCPCELL_TEST_TOKEN"), 0u) << "host environment must not leak";
  EXPECT_EQ(spec->env.at("HOME"), spec->home);
  EXPECT_EQ(spec->env.at("TMPDIR"), "/tmp");
  ASSERT_NE(Find(*spec, "/tmp"), nullptr);
  EXPECT_EQ(Find(*spec, "/tmp")->kind, MountSpec::Kind::kTmpfs);
  EXPECT_TRUE(PlanMounts(spec->mounts).ok());
}

TEST(BuildCellSpec, DefaultsAreNotMarkedRequested) {
  RunRequest req;
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->limits.memory_bytes.requested);
  EXPECT_EQ(*spec->limits.memory_bytes.value, kDefaultMemoryBytes);
  EXPECT_FALSE(spec->limits.pids.requested);
  EXPECT_FALSE(spec->limits.cpus.value.has_value());
  EXPECT_EQ(spec->network.mode, NetworkSpec::Mode::kNone);
  EXPECT_EQ(Find(*spec, "/etc/resolv.conf"), nullptr) << "no resolver config without network";
}

TEST(BuildCellSpec, BadFlagValuesNameTheFlag) {
  struct Case {
    RunRequest req;
    std::string flag;
  };
  std::vector<Case> cases(6);
  cases[0].req.memory = "lots";
  cases[0].flag = "--memory";
  cases[1].req.memory = "1k";
  cases[1].flag = "--memory";
  cases[2].req.cpus = "-1";
  cases[2].flag = "--cpus";
  cases[3].req.timeout = "5 parsecs";
  cases[3].flag = "--timeout";
  cases[4].req.read = {"/nonexistent/mcpcell"};
  cases[4].flag = "--read";
  cases[5].req.write = {"/usr:/proc/x"};
  cases[5].flag = "--write";
  for (auto& c : cases) {
    std::vector<std::string> notes;
    auto spec = BuildCellSpec(c.req, {"/bin/true"}, &notes);
    ASSERT_FALSE(spec.ok()) << c.flag;
    EXPECT_EQ(spec.error().what, c.flag) << spec.error().Message();
  }
}

TEST(BuildCellSpec, CredentialLocationsRefusedOrMasked) {
  TempDir d;
  fs::create_directories(d.Path() / "home/.ssh");
  fs::create_directories(d.Path() / "home/notes");
  std::ofstream(d.Path() / "home/.ssh/id_ed25519") << "PRIVATE";
  RunRequest req;
  req.read = {(d.Path() / "home/.ssh").string()};
  std::vector<std::string> notes;
  auto refused = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Message().find("SSH keys"), std::string::npos);

  req.force_credentials = true;
  EXPECT_TRUE(BuildCellSpec(req, {"/bin/true"}, &notes).ok());

  RunRequest whole;
  whole.read = {(d.Path() / "home").string()};
  auto masked = BuildCellSpec(whole, {"/bin/true"}, &notes);
  ASSERT_TRUE(masked.ok()) << masked.error().Message();
  const MountSpec* mask = Find(*masked, (d.Path() / "home/.ssh").string());
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->kind, MountSpec::Kind::kTmpfs);
  EXPECT_EQ(mask->why, "masked");
  EXPECT_TRUE(PlanMounts(masked->mounts).ok());
}

TEST(BuildCellSpec, ServerCodeDirectoryIsAutoMountedReadOnly) {
  TempDir d;
  fs::create_directories(d.Path() / "proj/node_modules/dep");
  std::ofstream(d.Path() / "proj/package.json") << "{}";
  std::ofstream(d.Path() / "proj/server.js") << "";
  RunRequest req;
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"node", (d.Path() / "proj/server.js").string()}, &notes);
  ASSERT_TRUE(spec.ok());
  const MountSpec* m = Find(*spec, fs::canonical(d.Path() / "proj").string());
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->writable);
  EXPECT_EQ(m->why, "server code");

  // An installed package: the whole node_modules tree, where Node resolves its deps.
  fs::create_directories(d.Path() / "inst/node_modules/@s/srv/dist");
  std::ofstream(d.Path() / "inst/node_modules/@s/srv/dist/index.js") << "";
  auto inst = BuildCellSpec(req, {"node", (d.Path() / "inst/node_modules/@s/srv/dist/index.js").string()}, &notes);
  ASSERT_TRUE(inst.ok());
  EXPECT_NE(Find(*inst, fs::canonical(d.Path() / "inst").string() + "/node_modules"), nullptr);

  req.no_auto_mount = true;
  auto none = BuildCellSpec(req, {"node", (d.Path() / "proj/server.js").string()}, &notes);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(Find(*none, fs::canonical(d.Path() / "proj").string()), nullptr);
}

void Write(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

bool AnyMountAtOrBelow(const CellSpec& s, const std::string& dir, const std::string& why) {
  for (const auto& m : s.mounts) {
    if (m.why == why && (m.source == dir || m.source.rfind(dir + "/", 0) == 0)) return true;
  }
  return false;
}

// Sets $HOME for one test and puts it back.
struct HomeAs {
  std::string old;
  explicit HomeAs(const fs::path& home) : old(std::getenv("HOME") ? std::getenv("HOME") : "") {
    ::setenv("HOME", home.c_str(), 1);
  }
  ~HomeAs() { ::setenv("HOME", old.c_str(), 1); }
};

// Issue 10 item 5: a pipx/uv layout under ~/.local/bin must not bind ~/.local
// (keyrings); the link is kept, the venv it points to is bound.
TEST(BuildCellSpec, AutoMountOfALocalBinServerIsItsVenvNotDotLocal) {
  TempDir d;
  fs::path home = fs::canonical(d.Path());
  HomeAs as(home);
  Write(home / ".local/share/keyrings/login.keyring", "KEYRING");
  Write(home / ".local/share/pipx/venvs/tool/pyvenv.cfg", "home = /usr/bin\n");
  Write(home / ".local/share/pipx/venvs/tool/bin/tool", "#!/usr/bin/python3\n");
  fs::permissions(home / ".local/share/pipx/venvs/tool/bin/tool", fs::perms::owner_all);
  fs::create_directories(home / ".local/bin");
  fs::create_symlink("../share/pipx/venvs/tool/bin/tool", home / ".local/bin/tool");
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {(home / ".local/bin/tool").string()}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_EQ(Find(*spec, (home / ".local").string()), nullptr);
  EXPECT_FALSE(AnyMountAtOrBelow(*spec, (home / ".local/share/keyrings").string(), "server executable"));
  const MountSpec* venv = Find(*spec, (home / ".local/share/pipx/venvs/tool").string());
  ASSERT_NE(venv, nullptr);
  EXPECT_FALSE(venv->writable);
  const MountSpec* link = Find(*spec, (home / ".local/bin/tool").string());
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->why, "server executable link");
}

// `uv tool install`: the venv runs on uv's own Python under ~/.local/share/uv;
// that interpreter's prefix is bound too, still not ~/.local.
TEST(BuildCellSpec, AutoMountOfAUvToolAddsItsBasePython) {
  TempDir d;
  fs::path home = fs::canonical(d.Path());
  HomeAs as(home);
  fs::path py = home / ".local/share/uv/python/cpython-3.12-linux";
  Write(py / "bin/python3.12", "");
  Write(home / ".local/share/uv/tools/srv/pyvenv.cfg", "home = " + (py / "bin").string() + "\nversion = 3.12\n");
  Write(home / ".local/share/uv/tools/srv/bin/srv", "#!" + (home / ".local/share/uv/tools/srv/bin/python").string() + "\n");
  fs::permissions(home / ".local/share/uv/tools/srv/bin/srv", fs::perms::owner_all);
  Write(home / ".local/share/keyrings/login.keyring", "KEYRING");
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {(home / ".local/share/uv/tools/srv/bin/srv").string()}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_NE(Find(*spec, (home / ".local/share/uv/tools/srv").string()), nullptr);
  const MountSpec* base = Find(*spec, py.string());
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->why, "server's Python");
  EXPECT_EQ(Find(*spec, (home / ".local").string()), nullptr);
  EXPECT_EQ(Find(*spec, (home / ".local/share").string()), nullptr);
}

// A compiled server in a project: the binary, not the project and its .npmrc.
TEST(BuildCellSpec, AutoMountOfABinaryInAProjectIsTheFileAlone) {
  TempDir d;
  fs::path proj = fs::canonical(d.Path());
  Write(proj / ".npmrc", "//registry.npmjs.org/:_authToken=npm_SECRET\n");
  fs::copy_file("/bin/true", proj / "server");
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {(proj / "server").string()}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  EXPECT_NE(Find(*spec, (proj / "server").string()), nullptr);
  EXPECT_EQ(Find(*spec, proj.string()), nullptr);
}

// A script's package root is found by its manifest; what the package holds
// is masked as under --read: a token file, a nested .ssh, a unix socket.
TEST(BuildCellSpec, AutoMountedPackageIsMaskedLikeARead) {
  TempDir d;
  fs::path pkg = fs::canonical(d.Path()) / "pkg";
  Write(pkg / "package.json", "{}");
  Write(pkg / "src/server.js", "");
  Write(pkg / ".npmrc", "token");
  Write(pkg / "sub/deep/.ssh/id_ed25519", "KEY");
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock = (pkg / "agent.sock").string();
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {"node", (pkg / "src/server.js").string()}, &notes);
  ::close(s);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  ASSERT_NE(Find(*spec, pkg.string()), nullptr);
  // A socket inside a masked credential directory is covered by that mask, not masked twice.
  int s2 = ::socket(AF_UNIX, SOCK_STREAM, 0);
  std::string inner = (pkg / "sub/deep/.ssh/agent.sock").string();
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", inner.c_str());
  ASSERT_EQ(::bind(s2, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto again = BuildCellSpec(RunRequest{}, {"node", (pkg / "src/server.js").string()}, &notes);
  ::close(s2);
  ASSERT_TRUE(again.ok()) << again.error().Message();
  EXPECT_EQ(Find(*again, inner), nullptr);
  EXPECT_TRUE(PlanMounts(again->mounts).ok());
  for (const auto& rel : {".npmrc", "sub/deep/.ssh", "agent.sock"}) {
    const MountSpec* mask = Find(*spec, (pkg / rel).string());
    ASSERT_NE(mask, nullptr) << rel;
    EXPECT_EQ(mask->why, "masked") << rel;
  }
  EXPECT_TRUE(PlanMounts(spec->mounts).ok());
}

// No manifest: the script alone, not the directory it sits in; never a home.
TEST(BuildCellSpec, AutoMountNeverBindsAHomeOrABareDirectory) {
  TempDir d;
  fs::path home = fs::canonical(d.Path());
  HomeAs as(home);
  Write(home / "server.py", "print()");
  Write(home / ".aws/credentials", "AKIA");
  Write(home / "scripts/other.py", "print()");
  Write(home / "scripts/.env", "KEY=1");
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(RunRequest{}, {"python3", (home / "server.py").string()}, &notes);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(Find(*spec, home.string()), nullptr);
  EXPECT_NE(Find(*spec, (home / "server.py").string()), nullptr);
  auto other = BuildCellSpec(RunRequest{}, {"python3", (home / "scripts/other.py").string()}, &notes);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Find(*other, (home / "scripts").string()), nullptr);
  EXPECT_NE(Find(*other, (home / "scripts/other.py").string()), nullptr);
}

// Issue 10 item 6 through the whole lowering: a nested credential below a
// --read directory becomes a mask the planner accepts.
TEST(BuildCellSpec, NestedCredentialsBelowAReadAreMasked) {
  TempDir d;
  fs::path work = fs::canonical(d.Path()) / "work";
  Write(work / "sub/proj/.git-credentials", "https://u:t@host\n");
  Write(work / "sub/proj/.config/gh/hosts.yml", "oauth_token: x\n");
  Write(work / "a/b/c/.bash_history", "export TOKEN=x\n");
  RunRequest req;
  req.read = {work.string()};
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  for (const auto& rel : {"sub/proj/.git-credentials", "sub/proj/.config/gh", "a/b/c/.bash_history"}) {
    const MountSpec* mask = Find(*spec, (work / rel).string());
    ASSERT_NE(mask, nullptr) << rel;
    EXPECT_EQ(mask->why, "masked");
  }
  EXPECT_TRUE(PlanMounts(spec->mounts).ok());
}

TEST(BuildCellSpec, SystemMountIsMaskedLikeARead) {
  TempDir d;
  fs::path dir = fs::canonical(d.Path()) / "opt-tools";
  Write(dir / "lib/x.so", "");
  Write(dir / "share/keyrings/.ssh/id_rsa", "KEY");
  RunRequest req;
  req.system_mounts = {dir.string()};
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok()) << spec.error().Message();
  const MountSpec* mask = Find(*spec, (dir / "share/keyrings/.ssh").string());
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->why, "masked");
}

TEST(BuildCellSpec, BindSourcesCarryTheIdentityThatWasChecked) {
  TempDir d;
  RunRequest req;
  req.read = {d.Path().string()};
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok());
  const MountSpec* m = Find(*spec, d.Path().string());
  ASSERT_NE(m, nullptr);
  struct stat st{};
  ASSERT_EQ(::stat(d.Path().c_str(), &st), 0);
  EXPECT_EQ(m->source_ino, st.st_ino);
  EXPECT_EQ(m->source_dev, st.st_dev);
}

// Issue 10 item 10: files mcpcell itself reads or writes may not lie where the cell can write.
TEST(CheckNotWritableByCell, RefusesRecordsInsideAWritableGrant) {
  TempDir d;
  fs::path base = fs::canonical(d.Path());
  fs::create_directories(base / "rw/logs");
  fs::create_directories(base / "safe");
  RunRequest req;
  req.write = {(base / "rw").string()};
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_TRUE(spec.ok());
  auto inside = CheckNotWritableByCell(*spec, "--audit-log", (base / "rw/logs/audit.jsonl").string());
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().what, "--audit-log");
  EXPECT_NE(inside.error().detail.find((base / "rw").string()), std::string::npos) << inside.error().Message();
  EXPECT_TRUE(CheckNotWritableByCell(*spec, "--audit-log", (base / "safe/audit.jsonl").string()).ok());
  // A link outside pointing in, and a link inside pointing out (the cell can re-point it).
  fs::create_directory_symlink(base / "rw/logs", base / "safe/in");
  EXPECT_FALSE(CheckNotWritableByCell(*spec, "--policy", (base / "safe/in/policy.json").string()).ok());
  fs::create_directory_symlink(base / "safe", base / "rw/out");
  EXPECT_FALSE(CheckNotWritableByCell(*spec, "--permission-profile", (base / "rw/out/p.json").string()).ok());
  // A hard link: the same file inside the grant under another name.
  Write(base / "rw/logs/x", "");
  fs::create_hard_link(base / "rw/logs/x", base / "safe/linked.jsonl");
  auto linked = CheckNotWritableByCell(*spec, "--audit-log", (base / "safe/linked.jsonl").string());
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.error().detail.find("hard links"), std::string::npos) << linked.error().Message();
}

// The writable directory under another name: a bind mount on the host.
// Runs in a child with its own user and mount namespace, so it needs no root.
TEST(CheckNotWritableByCell, RefusesTheSameDirectoryUnderAnotherName) {
  TempDir d;
  fs::path base = fs::canonical(d.Path());
  fs::create_directories(base / "rw");
  fs::create_directories(base / "alias");
  auto out = testing::RunInChild([&]() -> std::string {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return "SKIP unshare(CLONE_NEWUSER|CLONE_NEWNS) refused";
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "SKIP make / private";
    if (::mount((base / "rw").c_str(), (base / "alias").c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return "SKIP bind mount refused";
    }
    RunRequest req;
    req.write = {(base / "rw").string()};
    std::vector<std::string> notes;
    auto spec = BuildCellSpec(req, {"/bin/true"}, &notes);
    if (!spec.ok()) return "spec: " + spec.error().Message();
    auto st = CheckNotWritableByCell(*spec, "--audit-log", (base / "alias/audit.jsonl").string());
    if (st.ok()) return "an audit log in a bind-mount alias of the --write dir was accepted";
    if (st.error().detail.find("same directory") == std::string::npos) return "message: " + st.error().Message();
    return "";
  });
  if (out.report.rfind("SKIP", 0) == 0) GTEST_SKIP() << out.report;
  EXPECT_EQ(out.report, "");
  EXPECT_TRUE(out.exited_ok());
}

TEST(ExpandHome, ExpandsALeadingTildeOnly) {
  TempDir d;
  HomeAs as(d.Path());
  EXPECT_EQ(ExpandHome("~"), d.Path().string());
  EXPECT_EQ(ExpandHome("~/audit.jsonl"), (d.Path() / "audit.jsonl").string());
  EXPECT_EQ(ExpandHome("/x/~/y"), "/x/~/y");
  EXPECT_EQ(ExpandHome("~other/y"), "~other/y");
}

}  // namespace
}  // namespace mcpcell
