// The one "only root can change it" predicate (util/root_only_file.h) that
// both a CA bundle (source/public_sources.h) and a system interpreter
// (util/path_search.h) must pass: the place, the owner and the write bits of
// the file and its directory, judged on the file links end at.
#include "util/root_only_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

class RootOnlyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = fs::canonical(tmp_.path()).string() + "/";
    file_ = dir_ + "file";
    std::ofstream(file_) << "x\n";
    ::chmod(file_.c_str(), 0644);
  }
  testing::TempDir tmp_{"root-only-file"};
  std::string dir_;
  std::string file_;
};

TEST_F(RootOnlyFile, ASystemFileCountsInItsDirectoryOrNamedAsAFile) {
  constexpr const char* kDirs[] = {"/usr/", "/bin/"};
  constexpr const char* kFiles[] = {"/bin/sh"};
  EXPECT_TRUE(IsRootOnlyFile("/bin/sh", {.dirs = kDirs, .files = {}}));
  EXPECT_TRUE(IsRootOnlyFile("/bin/sh", {.dirs = {}, .files = kFiles}));
  EXPECT_FALSE(IsRootOnlyFile("/bin/sh", {.dirs = {}, .files = {}}));
}

TEST_F(RootOnlyFile, ANamedFileIsFollowedAndADirectoryPrefixIsNot) {
  std::string link = dir_ + "sh-link";
  fs::create_symlink("/bin/sh", link);
  const char* files[] = {link.c_str()};
  EXPECT_TRUE(IsRootOnlyFile("/bin/sh", {.dirs = {}, .files = files}));
  // A link among the directories is compared as written: the file's real
  // path does not start with it.
  std::string linked_dir = dir_ + "bin-link";
  fs::create_symlink(fs::canonical("/bin/sh").parent_path(), linked_dir);
  std::string linked_prefix = linked_dir + "/";
  const char* dirs[] = {linked_prefix.c_str()};
  EXPECT_FALSE(IsRootOnlyFile("/bin/sh", {.dirs = dirs, .files = {}}));
}

TEST_F(RootOnlyFile, MissingFilesAndDirectoriesDoNotCount) {
  constexpr const char* kDirs[] = {"/usr/", "/bin/", "/"};
  EXPECT_FALSE(IsRootOnlyFile("/nonexistent/file", {.dirs = kDirs, .files = {}}));
  EXPECT_FALSE(IsRootOnlyFile("/usr/bin", {.dirs = kDirs, .files = {}}));
  EXPECT_FALSE(IsRootOnlyFile("", {.dirs = kDirs, .files = {}}));
}

TEST_F(RootOnlyFile, AFileOthersMayWriteOrReplaceDoesNotCount) {
  const char* dirs[] = {dir_.c_str()};
  RootPlaces places{.dirs = dirs, .files = {}};
  if (::geteuid() != 0) {
    EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "not root's";
    GTEST_SKIP() << "the owner checks below need a file of root's (run as root)";
  }
  ::chmod(dir_.c_str(), 0755);
  EXPECT_TRUE(IsRootOnlyFile(file_, places));
  std::string link = dir_ + "link";
  fs::create_symlink(file_, link);
  EXPECT_TRUE(IsRootOnlyFile(link, places)) << "a link is judged by the file it ends at";
  ::chmod(file_.c_str(), 0664);
  EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "group-writable file";
  ::chmod(file_.c_str(), 0646);
  EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "other-writable file";
  ::chmod(file_.c_str(), 0644);
  ::chmod(dir_.c_str(), 0775);
  EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "group-writable directory";
  ::chmod(dir_.c_str(), 0757);
  EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "other-writable directory";
  ::chmod(dir_.c_str(), 0755);
  ASSERT_EQ(::chown(file_.c_str(), 1, 1), 0);
  EXPECT_FALSE(IsRootOnlyFile(file_, places)) << "another owner's";
}

// adv15: a root-only bin/ under a directory others may write is renamed away
// and replaced; every directory up to / counts, a sticky one (/tmp) too,
// since others cannot move an entry of root's out of it.
TEST_F(RootOnlyFile, EveryDirectoryAboveCountsAndAStickyOneHolds) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs files of root's (run as root)";
  std::string sub = dir_ + "bin/";
  fs::create_directory(sub);
  std::string file = sub + "tool";
  { std::ofstream(file) << "x"; }
  ::chmod(file.c_str(), 0755);
  ::chmod(sub.c_str(), 0755);
  const char* dirs[] = {dir_.c_str()};
  RootPlaces places{.dirs = dirs, .files = {}};
  ::chmod(dir_.c_str(), 0755);
  EXPECT_TRUE(IsRootOnlyFile(file, places));
  ::chmod(dir_.c_str(), 0777);
  EXPECT_FALSE(IsRootOnlyFile(file, places)) << "a directory two levels up others may write";
  ::chmod(dir_.c_str(), 01777);
  EXPECT_TRUE(IsRootOnlyFile(file, places)) << "a sticky directory";
  ::chmod(dir_.c_str(), 0755);
}

}  // namespace
}  // namespace mcpcell
