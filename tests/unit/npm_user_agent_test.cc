// npm's User-Agent as the script cells get it (source/npm_user_agent.h).
#include "source/npm_user_agent.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

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
  EXPECT_TRUE(std::regex_match(NpmUserAgent(npm.path(), node),
                               std::regex(R"(npm/11\.2\.3 node/v[0-9]+\.[0-9]+\.[0-9]+ linux [a-z0-9]+ workspaces/false)")))
      << NpmUserAgent(npm.path(), node);
  // No version to be read: no variable, rather than a made-up one.
  EXPECT_EQ(NpmUserAgent(npm.File("missing"), node), "");
  EXPECT_EQ(NpmUserAgent(npm.path(), ""), "");
}

}  // namespace
}  // namespace mcpcell
