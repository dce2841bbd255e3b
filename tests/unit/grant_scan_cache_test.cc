// The remembered grant scan (src/cell/grant_scan_cache.h): the file format
// round-trips and refuses what it did not write; a scan is reused only while
// every directory it read is unchanged, and any change below the grant (a
// socket deep down, a new or replaced directory, another path to the root) or
// a cache that is not the caller's brings the walk back.

#include "cell/grant_scan_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/un.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "forked_child.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr std::size_t kBudget = 100'000;

void MakeSocket(const fs::path& p) {
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, p.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ::close(s);
}

RememberedScan Sample() {
  RememberedScan r;
  r.rules = "0123456789abcdef";
  r.root = "/srv/a dir\nwith a newline";
  r.walked = {{"", 9001, 65024, 12, 1700000000123456789, 1700000000123456789},
              {"pkg/sub dir", 9001, 65024, 13, -5, 7},
              {"odd\nname/\xff\x01", 9002, 1, 2, 3, 4}};
  r.creds = {"pkg/.env", "x/.ssh"};
  r.sockets = {"pkg/sub dir/agent.sock"};
  r.unreadable = {"locked"};
  return r;
}

TEST(RememberedScanFormat, RoundTripsNamesWithAnyByteButNulAndSlash) {
  RememberedScan r = Sample();
  auto back = ParseRememberedScan(FormatRememberedScan(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
}

TEST(RememberedScanFormat, RefusesWhatItDidNotWrite) {
  std::string good = FormatRememberedScan(Sample());
  ASSERT_TRUE(ParseRememberedScan(good));
  auto bad = [](std::string s) { return !ParseRememberedScan(s).has_value(); };
  EXPECT_TRUE(bad(""));
  EXPECT_TRUE(bad("mcpcell-grant-scan 1\n" + good.substr(21)));               // another version
  EXPECT_TRUE(bad(good.substr(0, good.size() - 4)));                         // no end line: cut short
  EXPECT_TRUE(bad(good + "d 1 2 3 4 0:\n"));                                 // past the end
  for (std::size_t cut = 0; cut < good.size(); ++cut) EXPECT_TRUE(bad(good.substr(0, cut))) << cut;
  RememberedScan r = Sample();
  for (std::string rel : {std::string("../etc"), std::string("a/../b"), std::string("/abs"), std::string("a//b"),
                          std::string("a/"), std::string("./a"), std::string("a\0b", 3)}) {
    r.walked[1].rel = rel;
    EXPECT_TRUE(bad(FormatRememberedScan(r))) << rel;
  }
  r = Sample();
  std::swap(r.walked[0], r.walked[1]);  // the root's own stamp must come first
  EXPECT_TRUE(bad(FormatRememberedScan(r)));
  r = Sample();
  r.root = "relative";
  EXPECT_TRUE(bad(FormatRememberedScan(r)));
  std::string longer = good;
  longer.replace(longer.find("d 9001 65024 13 -5 7 11:"), 24, "d 9001 65024 13 -5 7 99:");  // a length past its line
  EXPECT_TRUE(bad(longer));
  std::string huge = good;  // a length whose + 1 wraps to 0 (adversary pass: read one byte before the text)
  std::size_t root_at = huge.find("\nroot ") + 1;
  huge.replace(root_at, huge.find(':', root_at) + 1 - root_at, "root 18446744073709551615:");
  EXPECT_TRUE(bad(huge));
}

// A tree whose directories are older than the racy window: racy_ns 0 stands
// in for "created more than two seconds ago".
struct Tree {
  TempDir tmp{"mcpcell-grant-cache"};
  std::string root = tmp.File("grant");
  std::string cache = tmp.File("cache");
  Tree() {
    fs::create_directories(root + "/pkg/lib/deep");
    fs::create_directories(root + "/other");
    std::ofstream(root + "/pkg/lib/deep/file.js") << "x";
    std::ofstream(root + "/pkg/.env") << "TOKEN=1";
  }
  GrantScan Scan(std::int64_t racy_ns = 0) const { return ScanGrantRemembered(root, kBudget, cache, racy_ns); }
  std::string CacheFile() const {
    for (const auto& e : fs::directory_iterator(cache + "/mcpcell/grant-scan")) {
      if (e.path().filename().string()[0] != '.') return e.path();
    }
    return "";
  }
  // Marks what the next scan returns when it reuses the file: a find no walk can make.
  void PlantMarker() const {
    std::string file = CacheFile();
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    auto r = ParseRememberedScan(text.str());
    ASSERT_TRUE(r.has_value());
    r->sockets.push_back("marker.sock");
    std::ofstream(file, std::ios::trunc) << FormatRememberedScan(*r);
  }
};

bool Has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

bool Reused(const GrantScan& g, const Tree& t) { return Has(g.sockets.sockets, t.root + "/marker.sock"); }

TEST(ScanGrantRemembered, AnUnchangedTreeIsNotWalkedAgain) {
  Tree t;
  GrantScan first = t.Scan();
  EXPECT_TRUE(Has(first.creds.found, t.root + "/pkg/.env"));
  ASSERT_FALSE(t.CacheFile().empty()) << "the scan was kept";
  t.PlantMarker();
  GrantScan again = t.Scan();
  EXPECT_TRUE(Reused(again, t));
  EXPECT_TRUE(Has(again.creds.found, t.root + "/pkg/.env")) << "the walk's finds come back as absolute paths";
  EXPECT_EQ(again.walked, first.walked);
}

TEST(ScanGrantRemembered, ASocketAddedDeepDownBringsTheWalkBack) {
  Tree t;
  t.Scan();
  t.PlantMarker();
  MakeSocket(t.root + "/pkg/lib/deep/agent.sock");
  GrantScan g = t.Scan();
  EXPECT_FALSE(Reused(g, t));
  EXPECT_TRUE(Has(g.sockets.sockets, t.root + "/pkg/lib/deep/agent.sock"));
}

TEST(ScanGrantRemembered, EveryChangeOfTheTreeBringsTheWalkBack) {
  struct Change {
    const char* what;
    void (*apply)(const Tree&);
  };
  const Change changes[] = {
      {"a new directory", [](const Tree& t) { fs::create_directories(t.root + "/pkg/lib/deep/new"); }},
      {"a new file", [](const Tree& t) { std::ofstream(t.root + "/other/.npmrc") << "x"; }},
      {"a removed file", [](const Tree& t) { fs::remove(t.root + "/pkg/lib/deep/file.js"); }},
      {"a directory replaced by another of the same name",
       [](const Tree& t) {
         fs::rename(t.root + "/other", t.root + "/other.old");
         fs::create_directories(t.root + "/other");
         fs::remove_all(t.root + "/other.old");
       }},
      {"a directory replaced by a symlink", [](const Tree& t) {
         fs::remove_all(t.root + "/other");
         fs::create_directory_symlink("/run", t.root + "/other");
       }},
      {"mtime set back with utimensat (ctime still moves)", [](const Tree& t) {
         struct stat before{};
         ::stat((t.root + "/pkg").c_str(), &before);
         std::ofstream(t.root + "/pkg/new.sock.standin") << "x";
         timespec times[2] = {before.st_atim, before.st_mtim};
         ::utimensat(AT_FDCWD, (t.root + "/pkg").c_str(), times, 0);
       }},
      {"permissions of a directory changed", [](const Tree& t) { ::chmod((t.root + "/pkg/lib").c_str(), 0700); }},
  };
  for (const auto& c : changes) {
    Tree t;
    t.Scan();
    t.PlantMarker();
    c.apply(t);
    EXPECT_FALSE(Reused(t.Scan(), t)) << c.what;
  }
}

TEST(ScanGrantRemembered, TheSameDirectoryUnderAnotherPathIsScannedAfresh) {
  Tree t;
  t.Scan();
  t.PlantMarker();
  std::string moved = t.tmp.File(".config");
  fs::rename(t.root, moved);  // the same inode; its name now makes "gcloud" below it a credential location
  fs::create_directories(moved + "/gcloud");
  GrantScan g = ScanGrantRemembered(moved, kBudget, t.cache, 0);
  EXPECT_FALSE(Has(g.sockets.sockets, moved + "/marker.sock"));
  EXPECT_TRUE(Has(g.creds.found, moved + "/gcloud"));
}

TEST(ScanGrantRemembered, ACacheThatIsNotTheCallersOnlyIsNotUsed) {
  Tree t;
  t.Scan();
  t.PlantMarker();
  ::chmod(t.CacheFile().c_str(), 0666);
  EXPECT_FALSE(Reused(t.Scan(), t)) << "a file others can write";
  Tree u;
  u.Scan();
  u.PlantMarker();
  ::chmod((u.cache + "/mcpcell/grant-scan").c_str(), 0777);
  EXPECT_FALSE(Reused(u.Scan(), u)) << "a directory others can write";
  Tree v;
  v.Scan();
  std::ofstream(v.CacheFile(), std::ios::trunc) << "garbage";
  EXPECT_TRUE(Has(v.Scan().creds.found, v.root + "/pkg/.env")) << "a corrupt file: the walk runs";
}

TEST(ScanGrantRemembered, RecentChangesAndTruncatedScansAreNotKept) {
  Tree t;
  t.Scan(kRacyStampNs);  // every directory was made just now
  EXPECT_FALSE(fs::exists(t.cache + "/mcpcell/grant-scan") && !t.CacheFile().empty());
  Tree u;
  for (int i = 0; i < 30; ++i) fs::create_directories(u.root + "/many/d" + std::to_string(i));
  ScanGrantRemembered(u.root, 10, u.cache, 0);  // a socket budget of 10 entries runs out
  EXPECT_TRUE(!fs::exists(u.cache + "/mcpcell/grant-scan") || u.CacheFile().empty());
}

// Past PATH_MAX a directory cannot be opened by path, so its entries cannot
// be read: 17 levels of 250-byte names once hid a socket from the scan
// (adversary pass). The scan gives up and the grant is refused.
TEST(ScanGrant, APathPastPathMaxStopsTheScanInsteadOfSkippingIt) {
  TempDir tmp("mcpcell-deep");
  std::string root = tmp.File("grant");
  fs::create_directories(root);
  std::string name(250, 'd');
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 17; ++i) {  // mkdirat/openat: each step is short, the whole is not
    ASSERT_EQ(::mkdirat(fd, name.c_str(), 0700), 0) << std::strerror(errno);
    int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    ASSERT_GE(next, 0);
    fd = next;
  }
  ::close(fd);
  GrantScan g = ScanGrant(root, kBudget);
  EXPECT_TRUE(g.creds.truncated);
  EXPECT_TRUE(g.sockets.truncated);
  EXPECT_NE(g.creds.gave_up.find("File name too long"), std::string::npos) << g.creds.gave_up;
  EXPECT_FALSE(ScanGrantRemembered(root, kBudget, tmp.File("cache"), 0).cacheable && fs::exists(tmp.File("cache/mcpcell/grant-scan")) &&
               !fs::is_empty(tmp.File("cache/mcpcell/grant-scan")));
  // remove_all works by path: remove the chain from the bottom, by descriptors.
  std::vector<int> fds{::open(root.c_str(), O_RDONLY | O_DIRECTORY)};
  for (int i = 0; i < 17 && fds.back() >= 0; ++i) fds.push_back(::openat(fds.back(), name.c_str(), O_RDONLY | O_DIRECTORY));
  ::close(fds.back());
  fds.pop_back();
  while (!fds.empty()) {
    EXPECT_EQ(::unlinkat(fds.back(), name.c_str(), AT_REMOVEDIR), 0) << std::strerror(errno);
    ::close(fds.back());
    fds.pop_back();
  }
}

// A directory the walk may not list is masked whole (the caller could not
// list it either, but the cell could open a name it knows: a root-owned 0711
// directory holding a 0777 socket was reachable). Root lists everything.
TEST(ScanGrant, ADirectoryThatCannotBeListedIsMaskedWhole) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may list any directory; the normal user's e2e pass covers this";
  TempDir tmp("mcpcell-locked");
  std::string root = tmp.File("grant");
  fs::create_directories(root + "/locked");
  MakeSocket(root + "/locked/door.sock");
  ASSERT_EQ(::chmod((root + "/locked").c_str(), 0311), 0);
  GrantScan g = ScanGrant(root, kBudget);
  EXPECT_TRUE(Has(g.unreadable, root + "/locked"));
  EXPECT_FALSE(g.creds.truncated);
}

// A socket bound over a file inside the grant: the directory lists the file
// it covers. Root only (mount), in a mount namespace of the child's own.
TEST(MountedSocketsBelow, FindsASocketMountedOverAFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to bind-mount (the root pass of the unit tests runs it)";
  TempDir tmp("mcpcell-mounted");
  std::string root = tmp.File("grant");
  auto outcome = testing::RunInChild([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("unshare: ") + std::strerror(errno);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return "mount private";
    fs::create_directories(root + "/sub");
    std::ofstream(root + "/sub/notes.txt") << "x";
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string sock = tmp.File("outside.sock");
    std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
    if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return "bind";
    if (::mount(sock.c_str(), (root + "/sub/notes.txt").c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return std::string("mount --bind: ") + std::strerror(errno);
    }
    auto found = MountedSocketsBelow(root);
    if (found != std::vector<std::string>{root + "/sub/notes.txt"}) return "MountedSocketsBelow missed it";
    GrantScan g = ScanGrant(root, kBudget);
    if (!Has(g.sockets.sockets, root + "/sub/notes.txt")) return "ScanGrant missed it";
    return "";
  });
  EXPECT_TRUE(outcome.exited_ok()) << outcome.report;
  EXPECT_EQ(outcome.report, "");
}

}  // namespace
}  // namespace mcpcell
