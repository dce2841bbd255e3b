#include "util/state_dir.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "util/resolved_path.h"

namespace mcpcell {
namespace {

bool Lists(const std::vector<std::string>& dirs, const std::string& dir) {
  return std::find(dirs.begin(), dirs.end(), dir) != dirs.end();
}

bool HiddenOwnDir(const std::string& dir) {
  auto own = McpcellOwnDirs();
  return std::any_of(own.begin(), own.end(), [&](const OwnDir& d) { return d.path == dir && d.hidden; });
}

// The account keeps the list in its real state directory (the one a launch
// in the usual environment uses): this test adds two entries there and
// leaves none (a gone directory is dropped at the next rewrite, which the
// test makes).
TEST(StateDir, AStateDirectoryUsedUnderAnotherXdgStateHomeIsHiddenByEveryLaunch) {
  ASSERT_FALSE(AccountStateDir().empty());
  testing::TempDir tmp("state-dir");
  std::string first = tmp.File("xdg-a/mcpcell");
  std::string second = tmp.File("xdg-b/mcpcell");
  std::filesystem::create_directories(first);
  std::filesystem::create_directories(second);
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(first + "/"))) << "normalized, like the paths it is compared with";
  EXPECT_TRUE(Lists(KnownStateDirs(), first));
  EXPECT_TRUE(HiddenOwnDir(first)) << "McpcellOwnDirs hides it though this environment does not name it";
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(first)));
  auto again = KnownStateDirs();
  EXPECT_EQ(std::count(again.begin(), again.end(), first), 1) << "listed once";

  std::filesystem::remove_all(tmp.File("xdg-a"));
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(second)));
  EXPECT_FALSE(Lists(KnownStateDirs(), first)) << "a removed directory is dropped from the list";
  EXPECT_TRUE(Lists(KnownStateDirs(), second));
  std::filesystem::remove_all(tmp.File("xdg-b"));
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(AccountStateDir()))) << "the account's own is never listed";
  EXPECT_FALSE(Lists(KnownStateDirs(), AccountStateDir()));
}

// adv24: a newline in XDG_STATE_HOME wrote lines of its choosing (a
// directory to refuse, the real one unlisted).
TEST(StateDir, ANewlineNeitherReachesTheListNorNamesTheStateHome) {
  testing::TempDir tmp("state-dir-nl");
  EXPECT_FALSE(static_cast<bool>(RememberStateDir(tmp.File("a\n" + tmp.path() + "/work\n/b/mcpcell"))));
  std::string work = tmp.File("work");
  std::filesystem::create_directories(work);
  EXPECT_FALSE(static_cast<bool>(RememberStateDir(work))) << "only a directory named mcpcell is a state directory";
  auto known = KnownStateDirs();
  EXPECT_EQ(std::find(known.begin(), known.end(), work), known.end());
  ::setenv("XDG_STATE_HOME", (tmp.path() + "/s\n/x").c_str(), 1);
  EXPECT_EQ(StateHomeFromEnvironment(), "") << "an XDG_STATE_HOME with a control byte is invalid, like a relative one";
  ::unsetenv("XDG_STATE_HOME");
}

// adv24: "$H/link/../s" is below link's target, where the kernel (and
// mkdir) puts it, not at "$H/s" as text would have it.
TEST(StateDir, APathThroughALinkAndDotDotIsListedWhereItLies) {
  testing::TempDir tmp("state-dir-dotdot");
  std::filesystem::create_directories(tmp.File("deep/dir"));
  std::filesystem::create_directory_symlink(tmp.File("deep/dir"), tmp.File("link"));
  EXPECT_EQ(ResolvedAsFarAsExists(tmp.File("link/../s/mcpcell")), tmp.File("deep/s/mcpcell"));
  EXPECT_EQ(ResolvedAsFarAsExists(tmp.File("link/x/")), tmp.File("deep/dir/x"));
  EXPECT_EQ(ResolvedAsFarAsExists(tmp.File("none/../y")), tmp.File("y"));
  std::filesystem::create_directories(tmp.File("deep/s/mcpcell"));
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(tmp.File("link/../s/mcpcell"))));
  auto known = KnownStateDirs();
  EXPECT_NE(std::find(known.begin(), known.end(), tmp.File("deep/s/mcpcell")), known.end());
  std::filesystem::remove_all(tmp.File("deep"));
  ASSERT_TRUE(static_cast<bool>(RememberStateDir(tmp.File("gone/mcpcell"))));  // drops the removed one
}

}  // namespace
}  // namespace mcpcell
