#include "source/host_tool.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
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

}  // namespace
}  // namespace mcpcell
