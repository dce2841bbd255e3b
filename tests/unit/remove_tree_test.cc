// util/remove_tree.h and util/fs_usage.h: what an install-script cell left
// is removed, and what it wrote is counted, however it hid it (adv18).

#include "util/remove_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "util/fs_usage.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

bool Exists(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

void WriteAt(int dir, const char* name, std::size_t bytes) {
  UniqueFd fd(::openat(dir, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  std::string data(bytes, 'x');
  ASSERT_EQ(::write(fd.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
}

// A chain of directories whose full path is longer than PATH_MAX, made by
// handle as a script makes it with relative chdir.
TEST(RemoveTree, RemovesAChainPastPathMax) {
  testing::TempDir tmp;
  std::string top = tmp.path() + "/deep";
  ASSERT_EQ(::mkdir(top.c_str(), 0755), 0);
  UniqueFd cur(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string name(250, 'd');
  for (int i = 0; i < 2 * PATH_MAX / 250; ++i) {
    ASSERT_EQ(::mkdirat(cur.get(), name.c_str(), 0755), 0);
    cur.reset(::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(cur);
  }
  WriteAt(cur.get(), "payload", 4096);
  cur.reset();
  EXPECT_TRUE(RemoveTree(top));
  EXPECT_FALSE(Exists(top));
}

// Modes that keep the owner out of listing (0300) or unlinking (0500).
TEST(RemoveTree, RemovesDirectoriesWhoseModeKeepsTheOwnerOut) {
  testing::TempDir tmp;
  std::string top = tmp.path() + "/pkg";
  ASSERT_EQ(::mkdir(top.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((top + "/h").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((top + "/h/inner").c_str(), 0700), 0);
  UniqueFd inner(::open((top + "/h/inner").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  WriteAt(inner.get(), "f", 10);
  ASSERT_EQ(::symlink("/etc/passwd", (top + "/h/inner/link").c_str()), 0);
  ASSERT_EQ(::chmod((top + "/h/inner").c_str(), 0500), 0);
  ASSERT_EQ(::chmod((top + "/h").c_str(), 0300), 0);
  EXPECT_TRUE(RemoveTree(top));
  EXPECT_FALSE(Exists(top));
  EXPECT_TRUE(Exists("/etc/passwd")) << "a link is removed, not followed";
}

TEST(RemoveTree, AFileOrNothingAtAll) {
  testing::TempDir tmp;
  std::string f = tmp.path() + "/file";
  UniqueFd dir(::open(tmp.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  WriteAt(dir.get(), "file", 1);
  EXPECT_TRUE(RemoveTree(f));
  EXPECT_FALSE(Exists(f));
  EXPECT_TRUE(RemoveTree(tmp.path() + "/none"));
}

// The filesystem's count sees a file unlinked while held open: no walk does.
TEST(FsUsage, CountsAFileUnlinkedWhileHeldOpen) {
  testing::TempDir tmp;
  auto before = FsUsageOf(tmp.path());
  ASSERT_TRUE(before.ok()) << before.error().Message();
  std::string f = tmp.path() + "/held";
  UniqueFd fd(::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  ASSERT_TRUE(fd);
  ASSERT_EQ(::unlink(f.c_str()), 0);
  std::string chunk(1 << 20, 'x');
  for (int i = 0; i < 64; ++i) ASSERT_EQ(::write(fd.get(), chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  ASSERT_EQ(::fsync(fd.get()), 0);
  auto after = FsUsageOf(tmp.path());
  ASSERT_TRUE(after.ok());
  // Other writers to the same disk may add to it, never take 64 MiB off it.
  EXPECT_GE(after->bytes + (8u << 20), before->bytes + (64u << 20));
  EXPECT_FALSE(FsUsageOf(tmp.path() + "/none").ok());
}

}  // namespace
}  // namespace mcpcell
