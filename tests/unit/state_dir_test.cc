#include "util/state_dir.h"

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "temp_dir.h"

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

}  // namespace
}  // namespace mcpcell
