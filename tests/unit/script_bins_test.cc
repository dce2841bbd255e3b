// Which node_modules/.bin directories a script cell hides (source/script_bins.h):
// every one npm's PATH walk can name for any package of the install.
#include "source/script_bins.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// npm puts D/node_modules/.bin on the PATH for every D from the package's
// directory up: for <nm>/@s/v that names <nm>/@s/node_modules/.bin, where a
// package aliased as "@s/node_modules" keeps its bins (adv6, HIGH), and for
// <nm>/a it names <nm>/node_modules/.bin (a folder a tarball can ship).
TEST(ScriptBins, EveryBinDirectoryOnNpmsPathWalkIsHidden) {
  char tmpl[] = "/tmp/script-bins-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string root = fs::canonical(tmpl).string(), nm = root + "/node_modules";
  for (const char* rel : {"/@s/v", "/@s/node_modules/.bin", "/node_modules/.bin", "/a/node_modules/@t/node_modules/.bin",
                          "/.bin"}) {
    fs::create_directories(nm + rel);
  }
  std::ofstream(nm + "/@s/v/package.json") << R"({"name":"@s/v","scripts":{"install":"node build.js"}})";
  std::vector<std::string> dirs = BinDirs(root);
  std::sort(dirs.begin(), dirs.end());
  EXPECT_EQ(dirs, (std::vector<std::string>{nm + "/.bin", nm + "/@s/node_modules/.bin",
                                                     nm + "/a/node_modules/@t/node_modules/.bin",
                                                     nm + "/node_modules/.bin"}));
  fs::remove_all(root);
}

}  // namespace
}  // namespace mcpcell
