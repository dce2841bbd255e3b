// util/dir_names.h: the directory listing the state and cache sweeps share.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "util/dir_names.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(DirNames, EveryNameButDotsAndTheSameOnTheSecondListing) {
  testing::TempDir t("dir-names-test");
  ASSERT_FALSE(t.path().empty());
  std::ofstream(t.File("a.json")) << "{}";
  std::ofstream(t.File(".b.tmp")) << "";
  ASSERT_EQ(::mkdir(t.File("sub").c_str(), 0700), 0);
  ASSERT_EQ(::symlink("/nonexistent", t.File("link").c_str()), 0);
  UniqueFd dir(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  const std::vector<std::string> want{".b.tmp", "a.json", "link", "sub"};
  auto first = DirNames(dir.get());
  ASSERT_TRUE(first.ok()) << first.error().Message();
  EXPECT_EQ(Sorted(*first), want);
  // The duplicate shares the offset: without the rewind this one would be empty.
  auto second = DirNames(dir.get());
  ASSERT_TRUE(second.ok()) << second.error().Message();
  EXPECT_EQ(Sorted(*second), want);
  // The fd is still the caller's, open and usable.
  EXPECT_EQ(::unlinkat(dir.get(), "a.json", 0), 0);
  EXPECT_EQ(Sorted(*DirNames(dir.get())), (std::vector<std::string>{".b.tmp", "link", "sub"}));
}

TEST(DirNames, ABadFdOrAFileIsAnError) {
  testing::TempDir t("dir-names-test");
  ASSERT_FALSE(t.path().empty());
  std::ofstream(t.File("f")) << "x";
  UniqueFd file(::open(t.File("f").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file);
  auto not_dir = DirNames(file.get());
  ASSERT_FALSE(not_dir.ok());
  EXPECT_EQ(not_dir.error().err, ENOTDIR);
  auto bad = DirNames(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().err, EBADF);
}

TEST(TempDir, RemovesEverythingEvenUnreadableDirectories) {
  std::string kept;
  {
    testing::TempDir t("dir-names-test");
    ASSERT_FALSE(t.path().empty());
    kept = t.path();
    ASSERT_EQ(::mkdir(t.File("locked").c_str(), 0700), 0);
    std::ofstream(t.File("locked/f")) << "x";
    ASSERT_EQ(::chmod(t.File("locked").c_str(), 0), 0);
  }
  EXPECT_NE(::access(kept.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace mcpcell
