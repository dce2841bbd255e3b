// CheckOwnedBelow (source/cache_entry_owner.h): the path from the cache root
// to what runs is the user's own and writable by no one else (adv11).
#include "source/cache_entry_owner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

struct Tree {
  testing::TempDir dir{"cache-owner"};
  std::string root = dir.path();
  std::string entry = root + "/pkg@1.0.0";
  std::string pkg = entry + "/node_modules/pkg";
  std::string bin = pkg + "/index.js";
  Tree() {
    std::filesystem::create_directories(pkg);
    for (const std::string& d : {entry, entry + "/node_modules", pkg}) ::chmod(d.c_str(), 0755);
    std::ofstream(bin) << "console.log(1)\n";
    ::chmod(bin.c_str(), 0644);
  }
};

TEST(CacheEntryOwnerTest, TheUsersOwnTreePasses) {
  Tree t;
  EXPECT_TRUE(CheckOwnedBelow(t.root, t.bin, "fix").ok());
  EXPECT_TRUE(CheckOwnedBelow(t.root + "/", t.pkg + "/./index.js", "fix").ok());
}

TEST(CacheEntryOwnerTest, AGroupOrOtherWritableComponentIsRefusedByName) {
  for (mode_t bad : {mode_t{0775}, mode_t{0757}}) {
    Tree t;
    ::chmod((t.entry + "/node_modules").c_str(), bad);
    auto r = CheckOwnedBelow(t.root, t.bin, "remove it");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().Message().find(t.entry + "/node_modules"), std::string::npos) << r.error().Message();
    EXPECT_NE(r.error().Message().find("writable by its group or by others"), std::string::npos);
    EXPECT_NE(r.error().Message().find("remove it"), std::string::npos);
  }
  Tree t;
  ::chmod(t.bin.c_str(), 0666);
  EXPECT_FALSE(CheckOwnedBelow(t.root, t.bin, "fix").ok());
}

TEST(CacheEntryOwnerTest, ASymlinkOnThePathIsRefused) {
  Tree t;
  std::filesystem::rename(t.pkg, t.entry + "/real");
  ASSERT_EQ(::symlink((t.entry + "/real").c_str(), t.pkg.c_str()), 0);
  auto r = CheckOwnedBelow(t.root, t.bin, "fix");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Message().find("symbolic link"), std::string::npos) << r.error().Message();
}

TEST(CacheEntryOwnerTest, APathNotBelowTheRootIsRefused) {
  Tree t;
  EXPECT_FALSE(CheckOwnedBelow(t.root, t.root, "fix").ok());
  EXPECT_FALSE(CheckOwnedBelow(t.pkg, t.entry + "/x", "fix").ok());
  EXPECT_FALSE(CheckOwnedBelow(t.pkg, t.pkg + "/../../x", "fix").ok());
  EXPECT_FALSE(CheckOwnedBelow(t.root, t.entry + "/missing", "fix").ok());
}

TEST(CacheEntryOwnerTest, AnotherUsersComponentIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a file of another uid needs root";
  Tree t;
  ASSERT_EQ(::chown(t.bin.c_str(), 65534, 65534), 0);
  auto r = CheckOwnedBelow(t.root, t.bin, "fix");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Message().find("owned by uid 65534"), std::string::npos) << r.error().Message();
  ASSERT_EQ(::chown(t.bin.c_str(), 0, 0), 0);  // root's own files are trusted as the user's
  EXPECT_TRUE(CheckOwnedBelow(t.root, t.bin, "fix").ok());
}

}  // namespace
}  // namespace mcpcell
