// The per-run host id of a cell (cell_ids.h): the block, what a claim must
// avoid (subordinate ranges, passwd/group, running processes), the lock that
// keeps two runs apart, release, and what a claimer killed with -9 leaves.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "cell/cell_ids.h"

namespace mcpcell {
namespace {

constexpr std::uint32_t kOnly = kCellIdFirst + 4242;

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("cellids-test") {}
  std::string Sub() const { return File("ids"); }
};

// Facts under which kOnly is the one free id of the whole block.
IdFacts OnlyOneFree() {
  IdFacts f;
  f.known = [](std::uint32_t id) { return id != kOnly; };
  return f;
}

bool Exists(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

TEST(CellIds, BlockIsAboveContainerRangesAndBelowTwoToThe31) {
  EXPECT_GE(kCellIdFirst, 0x70000000U);
  EXPECT_LE(static_cast<std::uint64_t>(kCellIdFirst) + kCellIdCount, 1ULL << 31);
}

TEST(CellIds, ParsesSubordinateRanges) {
  auto r = ParseSubIdRanges("mcpcell-test:100000:65536\n# comment:1:2\nbad line\nx:y:z\nmcpcell-docker:165536:65536");
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].first, 100000U);
  EXPECT_EQ(r[0].count, 65536U);
  EXPECT_EQ(r[1].first, 165536U);
}

TEST(CellIds, FreeMeansInTheBlockAndUsedByNothing) {
  IdFacts f;
  EXPECT_TRUE(IdIsFree(kCellIdFirst, f));
  EXPECT_TRUE(IdIsFree(kCellIdFirst + kCellIdCount - 1, f));
  EXPECT_FALSE(IdIsFree(kCellIdFirst - 1, f));
  EXPECT_FALSE(IdIsFree(kCellIdFirst + kCellIdCount, f));
  EXPECT_FALSE(IdIsFree(1000, f));
  EXPECT_FALSE(IdIsFree(65534, f));
  f.subordinate.push_back({kCellIdFirst + 10, 5});  // a subuid range someone put in the block
  EXPECT_FALSE(IdIsFree(kCellIdFirst + 10, f));
  EXPECT_FALSE(IdIsFree(kCellIdFirst + 14, f));
  EXPECT_TRUE(IdIsFree(kCellIdFirst + 15, f));
  f.process_ids.insert(kCellIdFirst + 20);  // a process runs as it (a cell whose claimer died)
  EXPECT_FALSE(IdIsFree(kCellIdFirst + 20, f));
  f.known = [](std::uint32_t id) { return id == kCellIdFirst + 30; };  // in passwd or group
  EXPECT_FALSE(IdIsFree(kCellIdFirst + 30, f));
  EXPECT_TRUE(IdIsFree(kCellIdFirst + 31, f));
}

TEST(CellIds, HostFactsSeeThisMachine) {
  IdFacts f = HostIdFacts();
  EXPECT_EQ(f.process_ids.count(::getuid()), 1U);
  EXPECT_EQ(f.process_ids.count(::getgid()), 1U);
  ASSERT_TRUE(f.known);
  EXPECT_TRUE(f.known(0));  // root is in /etc/passwd
}

// HostIdFacts of a child that switched to (real, effective, saved) uid and gid.
IdFacts FactsWithAChildAs(uid_t r, uid_t e, uid_t s) {
  int go[2];
  if (::pipe(go) != 0) return {};
  pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    ::close(go[0]);
    if (::setresgid(r, e, s) != 0 || ::setresuid(r, e, s) != 0) ::_exit(1);
    ::close(go[1]);  // switched: the parent may look
    ::pause();
    ::_exit(0);
  }
  ::close(go[1]);
  char c;
  (void)!::read(go[0], &c, 1);  // EOF: the child switched (or failed, which the caller's checks show)
  ::close(go[0]);
  IdFacts f = HostIdFacts();
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return f;
}

// As root: a process running as an id of the block makes that id taken.
TEST(CellIds, HostFactsSeeAProcessRunningAsABlockId) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a process as uid " << kOnly;
  IdFacts f = FactsWithAChildAs(kOnly, kOnly, kOnly);
  EXPECT_EQ(f.process_ids.count(kOnly), 1U);
  EXPECT_FALSE(IdIsFree(kOnly, f));
}

// Only the saved id in the block (the process may switch back to it at any
// time): taken too. /proc/PID/status is read in one 4 KiB piece, so this
// also shows both lines are found there.
TEST(CellIds, HostFactsSeeASavedBlockId) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a process with saved uid " << kOnly;
  IdFacts f = FactsWithAChildAs(65534, 65534, kOnly);
  EXPECT_EQ(f.process_ids.count(kOnly), 1U);
  EXPECT_FALSE(IdIsFree(kOnly, f));
}

TEST(CellIds, FirstCandidateIsAskedOnceAndTriedFirst) {
  TempDir t;
  int calls = 0;
  std::uint32_t asked = 0;
  IdFacts f;
  f.known = [&](std::uint32_t id) {
    ++calls;
    asked = id;
    return false;
  };
  IdFacts g = WithFirstCandidateLookedUp(f);
  ASSERT_TRUE(g.first_offset.has_value());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(asked, kCellIdFirst + *g.first_offset);
  const std::uint32_t first = asked;
  auto c = CellIdClaim::Claim(t.Sub(), g);
  ASSERT_TRUE(c.ok()) << c.error().Message();
  EXPECT_EQ(c->id(), first);
  EXPECT_EQ(calls, 1);  // the kept answer
  EXPECT_FALSE(g.known(first + 1));
  EXPECT_EQ(calls, 2);  // any other id is asked
}

TEST(CellIds, AKnownFirstCandidateIsSkipped) {
  TempDir t;
  std::uint32_t first = 0;
  IdFacts f;
  f.known = [&first](std::uint32_t id) {
    if (first == 0) first = id;
    return id == first;  // the first id asked is in passwd
  };
  IdFacts g = WithFirstCandidateLookedUp(f);
  auto c = CellIdClaim::Claim(t.Sub(), g);
  ASSERT_TRUE(c.ok()) << c.error().Message();
  EXPECT_NE(c->id(), first);
  EXPECT_EQ(c->id(), kCellIdFirst + (*g.first_offset + 1) % kCellIdCount);
}

TEST(CellIds, RealClaimGetsAFreeIdOfTheBlock) {
  TempDir t;
  IdFacts f = HostIdFacts();
  auto a = CellIdClaim::Claim(t.Sub(), f);
  ASSERT_TRUE(a.ok()) << a.error().Message();
  EXPECT_TRUE(IdIsFree(a->id(), f));
  auto b = CellIdClaim::Claim(t.Sub(), f);
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_NE(a->id(), b->id());
}

TEST(CellIds, AClaimedIdIsNotClaimedAgainUntilReleased) {
  TempDir t;
  IdFacts f = OnlyOneFree();
  auto a = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
  ASSERT_TRUE(a.ok()) << a.error().Message();
  EXPECT_EQ(a->id(), kOnly);
  EXPECT_TRUE(Exists(t.Sub() + "/" + std::to_string(kOnly)));
  auto b = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("no free id"), std::string::npos) << b.error().Message();
  *a = CellIdClaim();  // released: the lock file goes with it
  EXPECT_FALSE(Exists(t.Sub() + "/" + std::to_string(kOnly)));
  auto c = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
  ASSERT_TRUE(c.ok()) << c.error().Message();
  EXPECT_EQ(c->id(), kOnly);
}

TEST(CellIds, AClaimInAnotherProcessHoldsTheId) {
  TempDir t;
  IdFacts f = OnlyOneFree();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto a = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
    if (!a.ok()) ::_exit(1);
    if (::write(ready[1], "x", 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_FALSE(CellIdClaim::Claim(t.Sub(), f, kCellIdCount).ok());
  EXPECT_EQ(ReapCellIdClaims(t.Sub()), 0);  // held: not stale
  // Killed with -9: the kernel drops the flock with the last fd; the file stays.
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_TRUE(Exists(t.Sub() + "/" + std::to_string(kOnly)));
  auto again = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
  ASSERT_TRUE(again.ok()) << again.error().Message();
  EXPECT_EQ(again->id(), kOnly);
  *again = CellIdClaim();
  ::close(ready[0]);
}

// Hostile: 8 processes claim at once where only 4 ids are free: exactly 4
// win, each a different id (the lock, not luck, keeps them apart).
TEST(CellIds, ConcurrentClaimersNeverShareAnId) {
  TempDir t;
  IdFacts f;
  f.known = [](std::uint32_t id) { return id < kOnly || id >= kOnly + 4; };
  int go[2];
  int report[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(report), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      char c;
      if (::read(go[0], &c, 1) != 0) ::_exit(2);  // all start together at EOF
      auto a = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
      std::uint32_t id = a.ok() ? a->id() : 0;
      if (::write(report[1], &id, sizeof id) != sizeof id) ::_exit(2);
      ::pause();  // keep the claim until killed
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  ::close(report[1]);
  std::set<std::uint32_t> won;
  int lost = 0;
  for (int i = 0; i < 8; ++i) {
    std::uint32_t id = 0;
    ASSERT_EQ(::read(report[0], &id, sizeof id), static_cast<ssize_t>(sizeof id));
    if (id == 0) ++lost;
    else EXPECT_TRUE(won.insert(id).second) << "id " << id << " claimed twice";
  }
  for (pid_t pid : kids) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ::close(report[0]);
  EXPECT_EQ(won.size(), 4U);
  EXPECT_EQ(lost, 4);
}

TEST(CellIds, GcRemovesWhatAKilledClaimerLeft) {
  TempDir t;
  IdFacts f = OnlyOneFree();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto a = CellIdClaim::Claim(t.Sub(), f, kCellIdCount);
    ::_exit(a.ok() ? 0 : 1);  // no destructor: as after kill -9
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  EXPECT_TRUE(Exists(t.Sub() + "/" + std::to_string(kOnly)));
  EXPECT_EQ(ReapCellIdClaims(t.Sub()), 1);
  EXPECT_FALSE(Exists(t.Sub() + "/" + std::to_string(kOnly)));
}

TEST(CellIds, RefusesADirectoryThatIsNotOurs0700) {
  TempDir t;
  ASSERT_EQ(::mkdir(t.Sub().c_str(), 0755), 0);
  auto a = CellIdClaim::Claim(t.Sub(), OnlyOneFree(), kCellIdCount);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().Message().find("mode 0700"), std::string::npos) << a.error().Message();
  std::string link = t.path() + "/link";
  ASSERT_EQ(::chmod(t.Sub().c_str(), 0700), 0);
  ASSERT_EQ(::symlink(t.Sub().c_str(), link.c_str()), 0);
  EXPECT_FALSE(CellIdClaim::Claim(link, OnlyOneFree(), kCellIdCount).ok());  // a planted symlink
}

}  // namespace
}  // namespace mcpcell
