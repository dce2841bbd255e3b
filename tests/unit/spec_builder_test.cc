#include "cell/spec_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cell/mount_plan.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("mcpcell-spec-" + std::to_string(::getpid()) + "-" +
                                               std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

const MountSpec* Find(const CellSpec& s, const std::string& target) {
  for (const auto& m : s.mounts) {
    if (m.target == target) return &m;
  }
  return nullptr;
}

TEST(BuildCellSpec, FlagsLowerIntoLimitsEnvAndMounts) {
  TempDir d;
  fs::create_directories(d.path / "ro");
  fs::create_directories(d.path / "rw");
  RunRequest req;
  req.memory = "512m";
  req.pids = "128";
  req.cpus = "1.5";
  req.tmp_size = "32m";
  req.timeout = "30s";
  req.read = {(d.path / "ro").string()};
  req.write = {(d.path / "rw").string() + ":/data"};
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
  const MountSpec* ro = Find(*spec, (d.path / "ro").string());
  ASSERT_NE(ro, nullptr);
  EXPECT_FALSE(ro->writable);
  const MountSpec* rw = Find(*spec, "/data");
  ASSERT_NE(rw, nullptr);
  EXPECT_TRUE(rw->writable);
  EXPECT_EQ(rw->source, fs::canonical(d.path / "rw").string());
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
  fs::create_directories(d.path / "home/.ssh");
  fs::create_directories(d.path / "home/notes");
  std::ofstream(d.path / "home/.ssh/id_ed25519") << "PRIVATE";
  RunRequest req;
  req.read = {(d.path / "home/.ssh").string()};
  std::vector<std::string> notes;
  auto refused = BuildCellSpec(req, {"/bin/true"}, &notes);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().Message().find("SSH keys"), std::string::npos);

  req.force_credentials = true;
  EXPECT_TRUE(BuildCellSpec(req, {"/bin/true"}, &notes).ok());

  RunRequest whole;
  whole.read = {(d.path / "home").string()};
  auto masked = BuildCellSpec(whole, {"/bin/true"}, &notes);
  ASSERT_TRUE(masked.ok()) << masked.error().Message();
  const MountSpec* mask = Find(*masked, (d.path / "home/.ssh").string());
  ASSERT_NE(mask, nullptr);
  EXPECT_EQ(mask->kind, MountSpec::Kind::kTmpfs);
  EXPECT_EQ(mask->why, "masked");
  EXPECT_TRUE(PlanMounts(masked->mounts).ok());
}

TEST(BuildCellSpec, ServerCodeDirectoryIsAutoMountedReadOnly) {
  TempDir d;
  fs::create_directories(d.path / "proj/node_modules/dep");
  std::ofstream(d.path / "proj/package.json") << "{}";
  std::ofstream(d.path / "proj/server.js") << "";
  RunRequest req;
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, {"node", (d.path / "proj/server.js").string()}, &notes);
  ASSERT_TRUE(spec.ok());
  const MountSpec* m = Find(*spec, fs::canonical(d.path / "proj").string());
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->writable);
  EXPECT_EQ(m->why, "server code");

  // An installed package: the whole node_modules tree, where Node resolves its deps.
  fs::create_directories(d.path / "inst/node_modules/@s/srv/dist");
  std::ofstream(d.path / "inst/node_modules/@s/srv/dist/index.js") << "";
  auto inst = BuildCellSpec(req, {"node", (d.path / "inst/node_modules/@s/srv/dist/index.js").string()}, &notes);
  ASSERT_TRUE(inst.ok());
  EXPECT_NE(Find(*inst, fs::canonical(d.path / "inst").string() + "/node_modules"), nullptr);

  req.no_auto_mount = true;
  auto none = BuildCellSpec(req, {"node", (d.path / "proj/server.js").string()}, &notes);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(Find(*none, fs::canonical(d.path / "proj").string()), nullptr);
}

}  // namespace
}  // namespace mcpcell
