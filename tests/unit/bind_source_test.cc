#include "cell/bind_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// temp_dir.h's directory as a canonical fs::path (a bind source is
// recorded by its real path), for `d.Path() / "x"`.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("mcpcell-bindsrc") {}
  fs::path Path() const { return fs::canonical(path()); }
};

MountSpec Checked(const fs::path& p) {
  MountSpec m{MountSpec::Kind::kBind, p.string(), "/data", false, false, 0, "--read"};
  EXPECT_TRUE(RecordSourceIdentity(&m).ok());
  return m;
}

TEST(OpenCheckedBindSource, OpensTheCheckedObject) {
  TempDir d;
  fs::create_directories(d.Path() / "data");
  auto fd = OpenCheckedBindSource(Checked(d.Path() / "data"));
  ASSERT_TRUE(fd.ok()) << fd.error().Message();
  struct stat a{}, b{};
  ASSERT_EQ(::fstat(fd->get(), &a), 0);
  ASSERT_EQ(::stat((d.Path() / "data").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
}

TEST(OpenCheckedBindSource, RefusesASymlinkAnywhereInThePath) {
  TempDir d;
  fs::create_directories(d.Path() / "secret/.ssh");
  fs::create_directories(d.Path() / "data");
  MountSpec m = Checked(d.Path() / "data");
  fs::remove(d.Path() / "data");
  fs::create_directory_symlink(d.Path() / "secret/.ssh", d.Path() / "data");
  auto last = OpenCheckedBindSource(m);
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.error().detail.find("symbolic link"), std::string::npos) << last.error().Message();
  // A parent component swapped.
  fs::create_directories(d.Path() / "real/sub");
  MountSpec deep = Checked(d.Path() / "real/sub");
  fs::rename(d.Path() / "real", d.Path() / "moved");
  fs::create_directory_symlink(d.Path() / "moved", d.Path() / "real");
  EXPECT_FALSE(OpenCheckedBindSource(deep).ok());
}

TEST(OpenCheckedBindSource, RefusesAnotherDirectoryRenamedIntoPlace) {
  TempDir d;
  fs::create_directories(d.Path() / "data");
  fs::create_directories(d.Path() / "other/.ssh");
  MountSpec m = Checked(d.Path() / "data");
  fs::rename(d.Path() / "data", d.Path() / "old");
  fs::rename(d.Path() / "other", d.Path() / "data");
  auto fd = OpenCheckedBindSource(m);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.error().detail.find("inode"), std::string::npos) << fd.error().Message();
}

TEST(OpenNoSymlinksByWalk, TheFallbackRefusesSymlinksToo) {
  TempDir d;
  fs::create_directories(d.Path() / "real/sub");
  fs::create_directory_symlink(d.Path() / "real", d.Path() / "link");
  EXPECT_TRUE(OpenNoSymlinksByWalk((d.Path() / "real/sub").string()).ok());
  EXPECT_FALSE(OpenNoSymlinksByWalk((d.Path() / "link/sub").string()).ok());
  EXPECT_FALSE(OpenNoSymlinksByWalk((d.Path() / "link").string()).ok());
}

// For engines that bind by path (run by root): a component whose parent
// another cell's uid can write is refused; a sticky directory only when that
// uid owns the entry.
TEST(CheckNotSwappableBy, RefusesSourcesAnotherUidCouldReplace) {
  TempDir d;
  const uid_t other = 12345;  // not us, not root
  fs::create_directories(d.Path() / "open/data");
  fs::permissions(d.Path() / "open", fs::perms::all);  // 0777, no sticky bit
  auto open = CheckNotSwappableBy((d.Path() / "open/data").string(), other);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().detail.find("writable by uid 12345"), std::string::npos) << open.error().Message();
  fs::create_directories(d.Path() / "sticky/data");
  fs::permissions(d.Path() / "sticky", fs::perms::all | fs::perms::sticky_bit);
  EXPECT_TRUE(CheckNotSwappableBy((d.Path() / "sticky/data").string(), other).ok());
  fs::create_directories(d.Path() / "closed/data");
  fs::permissions(d.Path() / "closed", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                         fs::perms::others_read | fs::perms::others_exec);
  EXPECT_TRUE(CheckNotSwappableBy((d.Path() / "closed/data").string(), other).ok());
}

// Issue 10 item 3 as a race: a writer flips DIR/data between the checked
// directory and a symlink to a directory holding a marker, 2000 times, while
// the source is opened again and again. No open may ever yield the target.
TEST(OpenCheckedBindSource, ARacingSwapNeverYieldsTheTarget) {
  TempDir d;
  fs::create_directories(d.Path() / "dir/data");
  fs::create_directories(d.Path() / "target");
  std::ofstream(d.Path() / "target/MARKER") << "x";
  MountSpec m = Checked(d.Path() / "dir/data");
  struct stat target{};
  ASSERT_EQ(::stat((d.Path() / "target").c_str(), &target), 0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const std::string data = (d.Path() / "dir/data").string();
    const std::string real = (d.Path() / "dir/real").string();
    const std::string to = (d.Path() / "target").string();
    for (int i = 0; i < 2000 && !stop; ++i) {
      // data: the checked directory -> a symlink to the target -> back.
      if (::rename(data.c_str(), real.c_str()) != 0 || ::symlink(to.c_str(), data.c_str()) != 0) break;
      if (::unlink(data.c_str()) != 0 || ::rename(real.c_str(), data.c_str()) != 0) break;
    }
  });
  int opened = 0, refused = 0;
  for (int i = 0; i < 20000 && opened + refused < 4000; ++i) {
    auto fd = OpenCheckedBindSource(m);
    if (!fd) {
      ++refused;
      continue;
    }
    ++opened;
    struct stat st{};
    ASSERT_EQ(::fstat(fd->get(), &st), 0);
    ASSERT_FALSE(st.st_ino == target.st_ino && st.st_dev == target.st_dev) << "bound the swapped-in target";
    ASSERT_EQ(st.st_ino, m.source_ino);
  }
  stop = true;
  writer.join();
  std::printf("race: %d opens of the checked directory, %d refusals, 0 of the target\n", opened, refused);
}

}  // namespace
}  // namespace mcpcell
