// source/lockfile_scrub.h: a registry's path token is gone from npm's
// lockfiles, in values and keys, however JSON escapes it (adv19).

#include "source/lockfile_scrub.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

const std::vector<std::string> kPieces = {"Fq8abcDEF123ghiJKL456mn"};

TEST(LockfileScrub, TheTokenIsReplacedInValuesAndKeysEscapedOrNot) {
  std::string text = R"({"packages":{"node_modules/a":{"resolved":"https://npm.fury.io/Fq8abcDEF123ghiJKL456mn/acme/a/-/a-1.0.0.tgz"},)"
                     R"("https://npm.fury.io/Fq8abc\u0044EF123ghiJKL456mn/":{"x":1}}})";
  auto out = ScrubJsonText(text, kPieces);
  ASSERT_TRUE(out.ok()) << out.error().Message();
  EXPECT_EQ(out->find("Fq8abc"), std::string::npos) << *out;
  EXPECT_NE(out->find(std::string("https://npm.fury.io/") + kScrubbedToken + "/acme/a/-/a-1.0.0.tgz"), std::string::npos);
}

TEST(LockfileScrub, ATextWithoutTheTokenStaysByteForByte) {
  std::string text = "{\"b\": 1,\n \"a\": \"x\"}\n";
  auto out = ScrubJsonText(text, kPieces);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, text);
  EXPECT_FALSE(ScrubJsonText("{not json", kPieces).ok());
}

TEST(LockfileScrub, BothLockfilesOfAPrefixAndNoOtherFile) {
  testing::TempDir tmp;
  namespace fs = std::filesystem;
  fs::create_directories(tmp.path() + "/node_modules");
  std::string line = R"({"resolved":"https://r.example/Fq8abcDEF123ghiJKL456mn/x.tgz"})";
  for (const char* name : {"/package-lock.json", "/node_modules/.package-lock.json", "/package.json"}) {
    std::ofstream(tmp.path() + name) << line;
  }
  ASSERT_TRUE(ScrubLockfiles(tmp.path(), kPieces).ok());
  auto read = [&](const char* name) {
    std::ifstream in(tmp.path() + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  EXPECT_EQ(read("/package-lock.json").find("Fq8abc"), std::string::npos);
  EXPECT_EQ(read("/node_modules/.package-lock.json").find("Fq8abc"), std::string::npos);
  EXPECT_EQ(read("/package.json"), line) << "only the lockfiles";
  // A lockfile that is a link is refused, not followed.
  fs::remove(tmp.path() + "/package-lock.json");
  fs::create_symlink(tmp.path() + "/package.json", tmp.path() + "/package-lock.json");
  EXPECT_FALSE(ScrubLockfiles(tmp.path(), kPieces).ok());
}

}  // namespace
}  // namespace mcpcell
