// npm's User-Agent as the script cells get it (source/npm_user_agent.h).
#include "source/npm_user_agent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "source/host_tool.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

TEST(NpmUserAgent, NodesArchNames) {
  EXPECT_EQ(NodeArch("x86_64"), "x64");
  EXPECT_EQ(NodeArch("aarch64"), "arm64");
  EXPECT_EQ(NodeArch("i686"), "ia32");
  EXPECT_EQ(NodeArch("s390x"), "s390x");
  EXPECT_EQ(NodeArch("riscv64"), "riscv64");
}

TEST(NpmUserAgent, NpmsTemplateFilledOrNothing) {
  testing::TempDir npm;
  std::ofstream(npm.File("package.json")) << R"({"name":"npm","version":"11.2.3"})";
  const std::string node = FindHostTool("node", "/usr/local/bin:/usr/bin:/bin");
  if (node.empty()) GTEST_SKIP() << "no node on this machine";
  // "npm/11.2.3 node/vX.Y.Z linux ARCH workspaces/false", checked by parts: std::regex
  // trips GCC 12's maybe-uninitialized under the sanitizer build (CMakeLists.txt).
  const std::string agent = NpmUserAgent(npm.path(), node);
  const std::string head = "npm/11.2.3 node/v", tail = " workspaces/false";
  ASSERT_GT(agent.size(), head.size() + tail.size()) << agent;
  EXPECT_EQ(agent.substr(0, head.size()), head) << agent;
  EXPECT_EQ(agent.substr(agent.size() - tail.size()), tail) << agent;
  std::string middle = agent.substr(head.size(), agent.size() - head.size() - tail.size());  // "X.Y.Z linux ARCH"
  EXPECT_EQ(std::count(middle.begin(), middle.end(), '.'), 2) << agent;
  EXPECT_NE(middle.find(" linux "), std::string::npos) << agent;
  EXPECT_EQ(middle.find_first_not_of("0123456789. linuxabcdefghijklmnopqrstuvwxyz"), std::string::npos) << agent;
  // No version to be read: no variable, rather than a made-up one.
  EXPECT_EQ(NpmUserAgent(npm.File("missing"), node), "");
  EXPECT_EQ(NpmUserAgent(npm.path(), ""), "");
}

}  // namespace
}  // namespace mcpcell
