// A registry entry's directory arguments (profile/path_args.h): resolved on the
// host as the server would resolve them in its cwd and $HOME, narrowed by --read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "profile/path_args.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

class PathArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/path-args-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/site");
    old_cwd_ = fs::current_path();
    fs::current_path(dir_);
    const char* home = std::getenv("HOME");
    old_home_ = home != nullptr ? std::optional<std::string>(home) : std::nullopt;
  }
  // HOME back too: a later test that writes under $HOME (the secret rule
  // cache in ~/.cache) would otherwise recreate files in the removed dir.
  void TearDown() override {
    fs::current_path(old_cwd_);
    if (old_home_) ::setenv("HOME", old_home_->c_str(), 1);
    else ::unsetenv("HOME");
    fs::remove_all(dir_);
  }
  std::string dir_;
  fs::path old_cwd_;
  std::optional<std::string> old_home_;
};

TEST_F(PathArgs, RelativeAndHomeResolveOnTheHost) {
  EXPECT_EQ(ResolvePathArg("."), dir_);
  EXPECT_EQ(ResolvePathArg("site"), dir_ + "/site");
  EXPECT_EQ(ResolvePathArg("./site/../site/"), dir_ + "/site");
  ::setenv("HOME", dir_.c_str(), 1);
  EXPECT_EQ(ResolvePathArg("~"), dir_);
  EXPECT_EQ(ResolvePathArg("~/site"), dir_ + "/site");
  EXPECT_EQ(ResolvePathArg("/abs/x"), "/abs/x");
}

TEST_F(PathArgs, FlagsAreNotDirectories) {
  EXPECT_FALSE(IsPathArg("--verbose"));
  EXPECT_FALSE(IsPathArg(""));
  EXPECT_TRUE(IsPathArg("."));
}

TEST_F(PathArgs, ReadNarrowsTheSameDirectoryHoweverSpelled) {
  EXPECT_TRUE(NarrowedByRead(dir_ + "/site", {"site"}));
  EXPECT_TRUE(NarrowedByRead(dir_ + "/site", {dir_ + "/site/"}));
  EXPECT_TRUE(NarrowedByRead(dir_ + "/site", {dir_ + "/site:/data"}));  // HOST:CELL names HOST
  EXPECT_FALSE(NarrowedByRead(dir_ + "/site", {dir_}));
  EXPECT_FALSE(NarrowedByRead(dir_ + "/missing", {dir_ + "/missing"}));
  EXPECT_TRUE(HasWritablePathArg({"site", "."}, {"site"}));
  EXPECT_FALSE(HasWritablePathArg({"site", "--flag"}, {"site"}));
}

}  // namespace
}  // namespace mcpcell
