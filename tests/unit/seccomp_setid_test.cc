// No setuid/setgid bit and no file capability can be created by a cell
// (issue 14 item 5): the rules as data, then the real filter in forked
// children against real files. Needs no privileges.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "cell/native/seccomp.h"
#include "forked_child.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

using testing::ExpectErrno;
using testing::ExpectOk;
using testing::RunInChild;

std::string LoadFilter() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS) failed\n";
  auto st = ApplySeccomp(SeccompDenyRules());
  if (!st.ok()) return "ApplySeccomp: " + st.error().Message() + "\n";
  return {};
}

// A scratch directory the test removes; every path the child may create is
// checked afterwards for the bits.
struct Scratch : testing::TempDir {
  Scratch() : testing::TempDir("mcpcell-setid") {}
  std::string operator/(const char* name) const { return File(name); }
};

// Any file below `dir` with S_ISUID or S_ISGID, named.
std::string FilesWithSetIdBits(const std::string& dir) {
  std::string found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    struct stat st{};
    if (::lstat(e.path().c_str(), &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
      found += e.path().string() + " ";
    }
  }
  return found;
}

constexpr long kFchmodat2 = 452;  // Linux 6.6
constexpr long kSetxattrat = 463;  // Linux 6.13

TEST(SeccompSetId, EveryModeSettingCallIsCovered) {
  std::set<std::string> names;
  for (const auto& r : SetIdBitRules()) names.insert(r.syscall);
  for (const char* n : {"chmod", "fchmod", "fchmodat", "fchmodat2", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
                        "open", "openat", "openat2", "setxattr", "lsetxattr", "fsetxattr", "setxattrat"}) {
    EXPECT_EQ(names.count(n), 1u) << n;
    EXPECT_GE(SyscallNumber(n), 0) << n << " would be skipped (left allowed)";
  }
}

TEST(SeccompSetId, RefusedInTheKernel) {
  Scratch s;
  const std::string plain = s / "plain";
  ASSERT_EQ(::close(::open(plain.c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  auto out = RunInChild([&]() -> std::string {
    std::string r = LoadFilter();
    if (!r.empty()) return r;
    const char* f = plain.c_str();
    r += ExpectErrno("chmod 4755", [&] { return chmod(f, 04755); }, EPERM);
    r += ExpectErrno("chmod 2755", [&] { return chmod(f, 02755); }, EPERM);
    // umode_t is 16 bits: high garbage must not hide the bit, nor reveal one.
    r += ExpectErrno("chmod 4755|1<<32", [&] { return syscall(SYS_chmod, f, (1UL << 32) | 04755); }, EPERM);
    r += ExpectErrno("chmod 4755|0x10000", [&] { return syscall(SYS_chmod, f, 0x10000 | 04755); }, EPERM);
    int fd = open(f, O_RDWR);
    r += ExpectErrno("fchmod 4755", [&] { return fchmod(fd, 04755); }, EPERM);
    r += ExpectErrno("fchmodat 6755", [&] { return fchmodat(AT_FDCWD, f, 06755, 0); }, EPERM);
    r += ExpectErrno("fchmodat2 4755", [&] { return syscall(kFchmodat2, AT_FDCWD, f, 04755, 0); }, EPERM);
    r += ExpectErrno("open O_CREAT 4755", [&] { return syscall(SYS_open, (s / "o1").c_str(), O_CREAT | O_WRONLY, 04755); }, EPERM);
    r += ExpectErrno("openat O_CREAT 2755", [&] { return openat(AT_FDCWD, (s / "o2").c_str(), O_CREAT | O_WRONLY, 02755); }, EPERM);
    r += ExpectErrno("openat O_TMPFILE 4755", [&] { return openat(AT_FDCWD, s.path().c_str(), O_TMPFILE | O_WRONLY, 04755); }, EPERM);
    r += ExpectErrno("creat 4755", [&] { return creat((s / "c1").c_str(), 04755); }, EPERM);
    r += ExpectErrno("mkdir 2755", [&] { return mkdir((s / "d1").c_str(), 02755); }, EPERM);
    r += ExpectErrno("mkdirat 4755", [&] { return mkdirat(AT_FDCWD, (s / "d2").c_str(), 04755); }, EPERM);
    r += ExpectErrno("mknod S_IFREG|4755", [&] { return mknod((s / "n1").c_str(), S_IFREG | 04755, 0); }, EPERM);
    r += ExpectErrno("mknodat S_IFREG|2755", [&] { return mknodat(AT_FDCWD, (s / "n2").c_str(), S_IFREG | 02755, 0); }, EPERM);
    struct open_how how{};
    how.flags = O_CREAT | O_WRONLY;
    how.mode = 04755;
    r += ExpectErrno("openat2", [&] { return syscall(SYS_openat2, AT_FDCWD, (s / "o3").c_str(), &how, sizeof how); }, ENOSYS);
    const char cap[20] = {0, 0, 0, 2};  // a v2 capability header; the content never matters
    r += ExpectErrno("setxattr security.capability", [&] { return setxattr(f, "security.capability", cap, sizeof cap, 0); }, EOPNOTSUPP);
    r += ExpectErrno("lsetxattr", [&] { return lsetxattr(f, "user.x", "1", 1, 0); }, EOPNOTSUPP);
    r += ExpectErrno("fsetxattr", [&] { return fsetxattr(fd, "security.capability", cap, sizeof cap, 0); }, EOPNOTSUPP);
    r += ExpectErrno("setxattrat", [&] { return syscall(kSetxattrat, AT_FDCWD, f, 0, "security.capability", nullptr, 0); }, EOPNOTSUPP);
    // What servers do every day still works.
    r += ExpectOk("chmod 755", [&] { return chmod(f, 0755); });
    r += ExpectOk("chmod 1777 (sticky is no privilege)", [&] { return chmod(f, 01777); });
    r += ExpectOk("open O_CREAT 644", [&] { return open((s / "ok").c_str(), O_CREAT | O_WRONLY, 0644); });
    r += ExpectOk("open existing, stray mode 4755", [&] { return syscall(SYS_open, f, O_RDONLY, 04755); });
    r += ExpectOk("mkdir 755", [&] { return mkdir((s / "okdir").c_str(), 0755); });
    return r;
  });
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
  EXPECT_EQ(FilesWithSetIdBits(s.path()), "");
}

}  // namespace
}  // namespace mcpcell
