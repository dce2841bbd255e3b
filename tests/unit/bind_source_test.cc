#include "cell/bind_source.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::canonical(fs::temp_directory_path()) /
                  ("mcpcell-bindsrc-" + std::to_string(::getpid()) + "-" +
                   std::to_string(reinterpret_cast<std::uintptr_t>(this)));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

MountSpec Checked(const fs::path& p) {
  MountSpec m{MountSpec::Kind::kBind, p.string(), "/data", false, false, 0, "--read"};
  EXPECT_TRUE(RecordSourceIdentity(&m).ok());
  return m;
}

TEST(OpenCheckedBindSource, OpensTheCheckedObject) {
  TempDir d;
  fs::create_directories(d.path / "data");
  auto fd = OpenCheckedBindSource(Checked(d.path / "data"));
  ASSERT_TRUE(fd.ok()) << fd.error().Message();
  struct stat a{}, b{};
  ASSERT_EQ(::fstat(fd->get(), &a), 0);
  ASSERT_EQ(::stat((d.path / "data").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
}

TEST(OpenCheckedBindSource, RefusesASymlinkAnywhereInThePath) {
  TempDir d;
  fs::create_directories(d.path / "secret/.ssh");
  fs::create_directories(d.path / "data");
  MountSpec m = Checked(d.path / "data");
  fs::remove(d.path / "data");
  fs::create_directory_symlink(d.path / "secret/.ssh", d.path / "data");
  auto last = OpenCheckedBindSource(m);
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.error().detail.find("symbolic link"), std::string::npos) << last.error().Message();
  // A parent component swapped.
  fs::create_directories(d.path / "real/sub");
  MountSpec deep = Checked(d.path / "real/sub");
  fs::rename(d.path / "real", d.path / "moved");
  fs::create_directory_symlink(d.path / "moved", d.path / "real");
  EXPECT_FALSE(OpenCheckedBindSource(deep).ok());
}

TEST(OpenCheckedBindSource, RefusesAnotherDirectoryRenamedIntoPlace) {
  TempDir d;
  fs::create_directories(d.path / "data");
  fs::create_directories(d.path / "other/.ssh");
  MountSpec m = Checked(d.path / "data");
  fs::rename(d.path / "data", d.path / "old");
  fs::rename(d.path / "other", d.path / "data");
  auto fd = OpenCheckedBindSource(m);
  ASSERT_FALSE(fd.ok());
  EXPECT_NE(fd.error().detail.find("inode"), std::string::npos) << fd.error().Message();
}

TEST(OpenNoSymlinksByWalk, TheFallbackRefusesSymlinksToo) {
  TempDir d;
  fs::create_directories(d.path / "real/sub");
  fs::create_directory_symlink(d.path / "real", d.path / "link");
  EXPECT_TRUE(OpenNoSymlinksByWalk((d.path / "real/sub").string()).ok());
  EXPECT_FALSE(OpenNoSymlinksByWalk((d.path / "link/sub").string()).ok());
  EXPECT_FALSE(OpenNoSymlinksByWalk((d.path / "link").string()).ok());
}

// For engines that bind by path (run by root): a component whose parent
// another cell's uid can write is refused; a sticky directory only when that
// uid owns the entry.
TEST(CheckNotSwappableBy, RefusesSourcesAnotherUidCouldReplace) {
  TempDir d;
  const uid_t other = 12345;  // not us, not root
  fs::create_directories(d.path / "open/data");
  fs::permissions(d.path / "open", fs::perms::all);  // 0777, no sticky bit
  auto open = CheckNotSwappableBy((d.path / "open/data").string(), other);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().detail.find("writable by uid 12345"), std::string::npos) << open.error().Message();
  fs::create_directories(d.path / "sticky/data");
  fs::permissions(d.path / "sticky", fs::perms::all | fs::perms::sticky_bit);
  EXPECT_TRUE(CheckNotSwappableBy((d.path / "sticky/data").string(), other).ok());
  fs::create_directories(d.path / "closed/data");
  fs::permissions(d.path / "closed", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                         fs::perms::others_read | fs::perms::others_exec);
  EXPECT_TRUE(CheckNotSwappableBy((d.path / "closed/data").string(), other).ok());
}

// Issue 10 item 3 as a race: a writer flips DIR/data between the checked
// directory and a symlink to a directory holding a marker, 2000 times, while
// the source is opened again and again. No open may ever yield the target.
TEST(OpenCheckedBindSource, ARacingSwapNeverYieldsTheTarget) {
  TempDir d;
  fs::create_directories(d.path / "dir/data");
  fs::create_directories(d.path / "target");
  std::ofstream(d.path / "target/MARKER") << "x";
  MountSpec m = Checked(d.path / "dir/data");
  struct stat target{};
  ASSERT_EQ(::stat((d.path / "target").c_str(), &target), 0);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const std::string data = (d.path / "dir/data").string();
    const std::string real = (d.path / "dir/real").string();
    const std::string to = (d.path / "target").string();
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
