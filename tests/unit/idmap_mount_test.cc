// The pure parts of mounting grants as their owner's (issue 14 item 5): the
// id map text, the shared-directory rule, and the search for a setuid file
// of the owner that would make a mapped writable grant dangerous.

#include "cell/native/idmap_mount.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

TEST(IdmapLines, OwnerIsTheCellEveryoneElseIsThemselves) {
  // Root's directory, a cell id above it: 0 -> cell, 1..cell-1 themselves,
  // the cell's own id on disk unmapped, the rest themselves.
  EXPECT_EQ(IdmapLines(0, 1879048200),
            "0 1879048200 1\n1 1 1879048199\n1879048201 1879048201 2415919094\n");
  // A user's directory (1001): below, between, above.
  EXPECT_EQ(IdmapLines(1001, 1879048200),
            "1001 1879048200 1\n0 0 1001\n1002 1002 1879047198\n1879048201 1879048201 2415919094\n");
  // Never (uid_t)-1: the last range ends at 4294967294.
  EXPECT_EQ(IdmapLines(5, 4294967294U), "5 4294967294 1\n0 0 5\n6 6 4294967288\n");
}

TEST(IdmapLines, NoIdIsMappedTwiceEitherWay) {
  for (auto [from, to] : {std::pair<std::uint32_t, std::uint32_t>{0, 1879048200}, {1879048300, 1879048200},
                          {65534, 1000}, {1000, 65534}}) {
    std::string text = IdmapLines(from, to);
    std::uint64_t inside_total = 0;
    std::istringstream in(text);
    std::uint64_t a = 0, b = 0, n = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> inside, outside;
    while (in >> a >> b >> n) {
      inside.emplace_back(a, a + n);
      outside.emplace_back(b, b + n);
      inside_total += n;
    }
    auto disjoint = [](auto v) {
      std::sort(v.begin(), v.end());
      for (std::size_t i = 1; i < v.size(); ++i) {
        if (v[i].first < v[i - 1].second) return false;
      }
      return true;
    };
    EXPECT_TRUE(disjoint(inside)) << text;
    EXPECT_TRUE(disjoint(outside)) << text;
    EXPECT_EQ(inside_total, 4294967295ULL - 1) << "all ids but `to` on disk: " << text;
    EXPECT_LE(inside.size(), 4u);  // well below the kernel's 340 lines
  }
}

TEST(SharedDirectory, StickyOrWorldWritableIsNotMapped) {
  EXPECT_EQ(SharedDirectoryReason(S_IFDIR | 0755), "");
  EXPECT_EQ(SharedDirectoryReason(S_IFDIR | 0775), "");
  EXPECT_NE(SharedDirectoryReason(S_IFDIR | 01777), "");
  EXPECT_NE(SharedDirectoryReason(S_IFDIR | 0777), "");
  EXPECT_NE(SharedDirectoryReason(S_IFDIR | 01755), "");
}

struct Tree {
  std::filesystem::path root;
  Tree() {
    char tmpl[] = "/tmp/idmap-test-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~Tree() { std::filesystem::remove_all(root); }
  std::string File(const std::string& rel, mode_t mode) const {
    auto p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    UniqueFd fd(::open(p.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ::fchmod(fd.get(), mode);  // after creation: the umask would drop the bits
    return p;
  }
  Result<std::string> Search(std::size_t budget = 1000) const {
    UniqueFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    return FindOwnersSetIdFile(dir.get(), ::getuid(), ::getgid(), budget);
  }
};

TEST(FindOwnersSetIdFile, FindsTheOwnersSetuidAndSetgidFilesAtAnyDepth) {
  Tree t;
  t.File("a/b/c/plain", 0755);
  t.File("a/sticky-file", 01755);
  auto none = t.Search();
  ASSERT_TRUE(none) << none.error().Message();
  EXPECT_EQ(*none, "");
  t.File("a/b/c/d/e/tool", 04755);
  auto found = t.Search();
  ASSERT_TRUE(found);
  EXPECT_NE(found->find("(a/b/c/d/e/tool)"), std::string::npos) << *found;
  std::filesystem::remove(t.root / "a/b/c/d/e/tool");
  t.File("x/gtool", 02711);
  auto sgid = t.Search();
  ASSERT_TRUE(sgid);
  EXPECT_NE(sgid->find("(x/gtool)"), std::string::npos) << *sgid;
}

TEST(FindOwnersSetIdFile, DoesNotFollowSymlinksAndGivesUpOnHugeOrDeepTrees) {
  Tree outside;
  outside.File("suid", 04755);
  Tree t;
  std::filesystem::create_directory_symlink(outside.root, t.root / "link");
  auto followed = t.Search();
  ASSERT_TRUE(followed);
  EXPECT_EQ(*followed, "") << "a symlink out of the grant is not the grant's";
  for (int i = 0; i < 20; ++i) t.File("many/f" + std::to_string(i), 0644);
  auto big = t.Search(10);
  EXPECT_FALSE(big) << "a tree larger than the budget cannot be called clean";
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "d/";
  t.File(deep + "f", 0644);
  auto too_deep = t.Search(100000);
  EXPECT_FALSE(too_deep);
}

TEST(FindOwnersSetIdFile, FindsANonExecutableCapabilityFileAndANestedSharedDirectory) {
  Tree t;
  auto cap = t.File("lib/tool", 0644);
  // VFS_CAP_REVISION_2 with cap_setuid (bit 7) permitted: what setcap writes.
  const std::uint32_t v2[5] = {0x02000000, 1u << 7, 0, 0, 0};
  if (::setxattr(cap.c_str(), "security.capability", v2, sizeof v2, 0) == 0) {
    auto found = t.Search();
    ASSERT_TRUE(found) << found.error().Message();
    EXPECT_NE(found->find("(lib/tool)"), std::string::npos) << "a 0644 capability file becomes one with +x: " << *found;
    std::filesystem::remove(cap);
  } else {
    std::fprintf(stderr, "skipped the capability file: setxattr security.capability needs CAP_SETFCAP\n");
  }
  std::filesystem::create_directories(t.root / "x/shared");
  ::chmod((t.root / "x/shared").c_str(), 01777);
  auto shared = t.Search();
  ASSERT_TRUE(shared) << shared.error().Message();
  EXPECT_NE(shared->find("(x/shared)"), std::string::npos) << *shared;
}

TEST(FindOwnersSetIdFile, ADirectoryItCannotOpenIsAnErrorNotSkipped) {
  if (::geteuid() == 0) GTEST_SKIP() << "root opens a 0000 directory anyway";
  Tree t;
  std::filesystem::create_directories(t.root / "closed/inner");
  ::chmod((t.root / "closed").c_str(), 0);
  auto r = t.Search();
  ::chmod((t.root / "closed").c_str(), 0755);
  EXPECT_FALSE(r) << "an unreadable directory was called clean";
}

}  // namespace
}  // namespace mcpcell
