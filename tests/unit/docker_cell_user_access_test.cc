// Handing a file to the container's user (issue 18.3: a docker-group user may
// not chown, every docker run failed with EPERM). The ACL path is exercised
// for real: as root the test takes the ACL route on purpose, then a child
// that became the cell's uid opens the FIFO, and one that became another uid
// is refused.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cell/docker/cell_user_access.h"

namespace mcpcell::docker {
namespace {

constexpr std::uint32_t kCellUid = 1000;
constexpr std::uint32_t kOtherUid = 1234;

class TempDir {
 public:
  TempDir() {
    std::string t = "/dev/shm/mcpcell-acl-test-XXXXXX";
    path_ = ::mkdtemp(t.data()) ? t : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Opens `path` O_RDWR|O_NONBLOCK as uid:uid in a child; returns 0 or the errno.
int OpenAs(std::uint32_t uid, const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) {
      ::_exit(200);
    }
    int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    ::_exit(fd >= 0 ? 0 : errno & 0x7f);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

TEST(CellUserAccess, AclBytesFollowTheKernelLayout) {
  std::string v = AccessAclXattr(6, 1000, 6);
  ASSERT_EQ(v.size(), 4U + 5 * 8);
  EXPECT_EQ(v.substr(0, 4), std::string("\x02\x00\x00\x00", 4));
  // user:1000:rw- is the second entry: tag 2, perms 6, id 0x3e8.
  EXPECT_EQ(v.substr(12, 8), std::string("\x02\x00\x06\x00\xe8\x03\x00\x00", 8));
  // other:--- last.
  EXPECT_EQ(v.substr(36, 8), std::string("\x20\x00\x00\x00\xff\xff\xff\xff", 8));
}

TEST(CellUserAccess, HandoverDependsOnWhoWeAre) {
  if (::geteuid() == 0) {
    EXPECT_EQ(HandoverFor(kCellUid), Handover::kChown);
  } else {
    EXPECT_EQ(HandoverFor(::geteuid()), Handover::kNone);
    EXPECT_EQ(HandoverFor(::geteuid() + 1), Handover::kAcl);
  }
}

TEST(CellUserAccess, AclLetsTheCellUserInAndNobodyElse) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);  // the test's own dir: searchable, so only the ACL decides
  std::string fifo = dir.path() + "/in";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto ok = HandToCellUser(Handover::kAcl, -1, fifo, kCellUid, kCellUid, 6, "hand FIFO");
  if (!ok && ok.error().err == EOPNOTSUPP) GTEST_SKIP() << "/dev/shm has no POSIX ACLs on this kernel";
  ASSERT_TRUE(ok.ok()) << ok.error().Message();
  struct stat st{};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "the ACL route must not change the owner";
  EXPECT_EQ(st.st_mode & 07, 0U) << "others get nothing";
  if (::geteuid() != 0) GTEST_SKIP() << "switching to other uids to open the FIFO needs root";
  EXPECT_EQ(OpenAs(kCellUid, fifo), 0) << "the cell's uid must open it";
  EXPECT_EQ(OpenAs(kOtherUid, fifo), EACCES) << "another uid must not";
}

TEST(CellUserAccess, SecretFdGetsReadOnly) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);
  std::string file = dir.path() + "/token";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  ASSERT_GE(fd, 0);
  auto ok = HandToCellUser(Handover::kAcl, fd, file, kCellUid, kCellUid, 4, "hand secret");
  ::close(fd);
  if (!ok && ok.error().err == EOPNOTSUPP) GTEST_SKIP() << "/dev/shm has no POSIX ACLs on this kernel";
  ASSERT_TRUE(ok.ok()) << ok.error().Message();
  if (::geteuid() != 0) GTEST_SKIP() << "switching to other uids needs root";
  EXPECT_EQ(OpenAs(kCellUid, file), EACCES) << "read-only: O_RDWR must fail";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setresgid(kCellUid, kCellUid, kCellUid) != 0 || ::setresuid(kCellUid, kCellUid, kCellUid) != 0) _exit(2);
    _exit(::open(file.c_str(), O_RDONLY | O_CLOEXEC) >= 0 ? 0 : 1);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the cell's uid must read it";
}

TEST(CellUserAccess, WithoutAclsTheOtherBitsCarryIt) {
  // gVisor's Sentry checks mode bits only: there the cell's access is "other".
  if (::geteuid() != 0) {
    EXPECT_EQ(HandoverFor(::geteuid() + 1, /*acls_honoured=*/false), Handover::kOther);
  }
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string file = dir.path() + "/token";
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
  ASSERT_GE(fd, 0);
  auto ok = HandToCellUser(Handover::kOther, fd, file, kCellUid, kCellUid, 4, "hand secret");
  ::close(fd);
  ASSERT_TRUE(ok.ok()) << ok.error().Message();
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0404U);
  struct stat d{};
  ASSERT_EQ(::stat(dir.path().c_str(), &d), 0);
  EXPECT_EQ(d.st_mode & 0777, 0700U) << "the directory above is what keeps host users out";
}

}  // namespace
}  // namespace mcpcell::docker
