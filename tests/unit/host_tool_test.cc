#include "source/host_tool.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <limits.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

class HostToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/host-tool-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    for (const char* d : {"sys", "write", "write/sub", "other"}) fs::create_directories(root_ + "/" + d);
    fs::create_directory_symlink(root_ + "/write/sub", root_ + "/link-to-write");
    for (const char* d : {"sys", "write", "write/sub", "other"}) Tool(root_ + "/" + d + "/npm");
  }
  void TearDown() override { fs::remove_all(root_); }
  static void Tool(const std::string& p) {
    std::ofstream(p) << "#!/bin/sh\n";
    ::chmod(p.c_str(), 0755);
  }
  std::string root_;
};

TEST_F(HostToolTest, KeepsAbsoluteEntriesOutsideWritableDirs) {
  std::string path = root_ + "/sys:" + root_ + "/other";
  EXPECT_EQ(HostToolPath(path, {root_ + "/write"}), path);
}

TEST_F(HostToolTest, DropsWritableDirsTheirSubdirsAndLinksIntoThem) {
  std::string path = root_ + "/write:" + root_ + "/write/sub:" + root_ + "/link-to-write:" + root_ + "/sys";
  EXPECT_EQ(HostToolPath(path, {root_ + "/write"}), root_ + "/sys");
  EXPECT_EQ(FindHostTool("npm", HostToolPath(path, {root_ + "/write"})), root_ + "/sys/npm");
}

TEST_F(HostToolTest, DropsRelativeEmptyAndMissingEntries) {
  std::string path = ":.:bin:node_modules/.bin:" + root_ + "/missing:" + root_ + "/sys:";
  EXPECT_EQ(HostToolPath(path, {}), root_ + "/sys");
}

TEST_F(HostToolTest, DropsEntriesInsideNodeModulesAsWrittenOrResolved) {
  fs::create_directories(root_ + "/repo/node_modules/.bin");
  Tool(root_ + "/repo/node_modules/.bin/npm");
  fs::create_directory_symlink(root_ + "/repo/node_modules/.bin", root_ + "/repo-bin");
  std::string path = root_ + "/repo/node_modules/.bin:" + root_ + "/repo-bin:" + root_ + "/sys";
  EXPECT_EQ(FindHostTool("npm", HostToolPath(path, {})), root_ + "/sys/npm");
}

// adv24: a venv's bin (a dependency's console script named npm) and a
// workspace's own bin directory chose the host npm.
TEST_F(HostToolTest, DropsVenvEntriesAndTheWorkspacesOwnButNotOutsideAHomeOrRootCwd) {
  fs::create_directories(root_ + "/ws/.venv/bin");
  std::ofstream(root_ + "/ws/.venv/pyvenv.cfg") << "home = /usr/bin\n";
  fs::create_directories(root_ + "/ws/bin");
  fs::create_directories(root_ + "/home/.nvm/bin");
  std::string path = root_ + "/ws/.venv/bin:" + root_ + "/ws/bin:" + root_ + "/home/.nvm/bin:" + root_ + "/sys";
  EXPECT_EQ(WithoutProjectEntries(path, root_ + "/ws", root_ + "/home"), root_ + "/home/.nvm/bin:" + root_ + "/sys");
  EXPECT_EQ(WithoutProjectEntries(path, "/", root_ + "/home"),
            root_ + "/ws/bin:" + root_ + "/home/.nvm/bin:" + root_ + "/sys") << "cwd /: no workspace; a venv still is one";
  EXPECT_EQ(WithoutProjectEntries(path, root_ + "/home", root_ + "/home"),
            root_ + "/ws/bin:" + root_ + "/home/.nvm/bin:" + root_ + "/sys") << "cwd = home: no workspace";
  EXPECT_EQ(WithoutProjectEntries(path, root_, root_ + "/home"),
            root_ + "/ws/bin:" + root_ + "/home/.nvm/bin:" + root_ + "/sys") << "cwd above home: no workspace";
}

// adv26: a client started in $REPO/packages/server: the workspace is the repository.
TEST_F(HostToolTest, TheWorkspaceIsTheRepositoryTheCwdLiesIn) {
  fs::create_directories(root_ + "/repo/.git");
  fs::create_directories(root_ + "/repo/bin");
  fs::create_directories(root_ + "/repo/packages/server");
  std::string path = root_ + "/repo/bin:" + root_ + "/sys";
  EXPECT_EQ(WithoutProjectEntries(path, root_ + "/repo/packages/server", root_ + "/home"), root_ + "/sys");
}

TEST_F(HostToolTest, FindsNothingWhenOnlyWritableDirsHoldTheTool) {
  EXPECT_EQ(FindHostTool("npm", HostToolPath(root_ + "/write", {root_ + "/write"})), "");
}

TEST_F(HostToolTest, EnvironmentKeepsEverythingButPath) {
  char a[] = "HOME=/h";
  char b[] = "PATH=/evil";
  char c[] = "PATHX=1";
  char* env[] = {a, b, c, nullptr};
  EXPECT_EQ(HostToolEnvironment(env, "/usr/bin"), (std::vector<std::string>{"HOME=/h", "PATHX=1", "PATH=/usr/bin"}));
}

bool HasInput(const std::vector<HostToolInput>& in, const std::string& path) {
  for (const auto& i : in) {
    if (i.path == path) return !i.what.empty();
  }
  return false;
}

// What the host's pip and npm read at install must stay out of every cell's
// reach; the default cache is listed whatever XDG_CACHE_HOME says
// (adv_uvx.test.mjs). Environment set and put back here, one test at a time.
TEST_F(HostToolTest, InputsNameConfigsUserSiteAndTheDefaultCacheOfThisHome) {
  std::string old_home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  ::setenv("HOME", root_.c_str(), 1);
  ::setenv("XDG_CACHE_HOME", (root_ + "/other").c_str(), 1);
  ::setenv("PIP_CONFIG_FILE", (root_ + "/mine.conf").c_str(), 1);
  std::ofstream(root_ + "/.npmrc") << "registry=https://r\n prefix = ~/.npm-global\n";
  // Relative: pip runs in "/", so it reads /tmp/... (the cwd is part of the path).
  ::setenv("XDG_CONFIG_HOME", (root_.substr(1) + "/xdg").c_str(), 1);
  auto in = HostToolInputs();
  ::setenv("HOME", old_home.c_str(), 1);
  ::unsetenv("XDG_CONFIG_HOME");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("PIP_CONFIG_FILE");
  for (const char* rel : {"/.cache/mcpcell", "/.config/pip/pip.conf", "/.pip/pip.conf", "/.npmrc", "/mine.conf",
                          "/.npm-global/etc/npmrc", "/xdg/pip/pip.conf"}) {
    EXPECT_TRUE(HasInput(in, root_ + rel)) << rel;
  }
  char real[PATH_MAX];
  if (::realpath("/usr/bin/python3", real) != nullptr) {
    std::string py = fs::path(real).filename().string();
    EXPECT_TRUE(HasInput(in, root_ + "/.local/lib/" + py + "/site-packages")) << py;
  }
}

}  // namespace
}  // namespace mcpcell
