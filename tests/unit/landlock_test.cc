// Landlock in a forked child with no_new_privs: a read-only dir, a writable
// dir, and nothing else. Landlock binds root too, so this runs the same with
// and without privileges.

#include "cell/native/landlock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "forked_child.h"
#include "temp_dir.h"

namespace mcpcell {
namespace {

using testing::ExpectErrno;
using testing::ExpectOk;
using testing::RunInChild;

using testing::TempDir;

const char* OutsideFile() {
  return access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "/etc/passwd";
}

class LandlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    abi_ = LandlockAbi();
    if (abi_ == 0) GTEST_SKIP() << "Landlock is not available on this kernel (LandlockAbi() == 0)";
    ASSERT_FALSE(a_.path().empty());
    ASSERT_FALSE(b_.path().empty());
    int fd = open((a_.path() + "/r").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "x", 1), 1);
    close(fd);
  }

  /// Restricts the child; "" on success, else why not.
  static std::string Restrict(const std::vector<LandlockPath>& paths, LandlockReport* out) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS) failed\n";
    auto r = ApplyLandlock(paths);
    if (!r.ok()) return "ApplyLandlock: " + r.error().Message() + "\n";
    if (!r->enforced) return "not enforced: " + r->note + "\n";
    *out = *r;
    return {};
  }

  int abi_ = 0;
  TempDir a_;
  TempDir b_;
};

TEST_F(LandlockTest, ReadOnlyAndWritableDirsAndNothingElse) {
  const std::string a = a_.path(), b = b_.path();
  const int abi = abi_;
  auto out = RunInChild([&]() -> std::string {
    LandlockReport rep;
    std::string r = Restrict({{a, false, false, false}, {b, true, false, false}}, &rep);
    if (!r.empty()) return r;
    if (rep.abi != abi) r += "report abi " + std::to_string(rep.abi) + "\n";
    r += ExpectOk("read in A", [&] { return open((a + "/r").c_str(), O_RDONLY | O_CLOEXEC); });
    r += ExpectOk("list A", [&] { return open(a.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    r += ExpectErrno("create in A", [&] {
      return open((a + "/new").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    }, EACCES);
    r += ExpectErrno("open for write in A", [&] {
      return open((a + "/r").c_str(), O_WRONLY | O_CLOEXEC);
    }, EACCES);
    r += ExpectErrno("unlink in A", [&] { return unlink((a + "/r").c_str()); }, EACCES);
    if (abi >= 3) {
      r += ExpectErrno("truncate in A", [&] { return truncate((a + "/r").c_str(), 0); }, EACCES);
    }
    r += ExpectOk("create in B", [&] {
      return open((b + "/new").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    });
    r += ExpectOk("mkdir in B", [&] { return mkdir((b + "/d").c_str(), 0755); });
    r += ExpectOk("rename within B", [&] {
      return rename((b + "/new").c_str(), (b + "/d/new").c_str());
    });
    r += ExpectErrno("read outside", [] { return open(OutsideFile(), O_RDONLY | O_CLOEXEC); },
                     EACCES);
    r += ExpectErrno("create in /tmp", [] {
      return open("/tmp/mcpcell-landlock-escape", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    }, EACCES);
    if (abi >= 6) {
      if (!rep.scoped_signals || !rep.scoped_abstract_unix) r += "ABI >= 6 but scopes not set\n";
      // The parent is outside this Landlock domain.
      r += ExpectErrno("signal the parent", [] { return kill(getppid(), 0); }, EPERM);
    }
    return r;
  });
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
}

// Rights that only make sense on directories must be masked off for a regular
// file or a device, or landlock_add_rule fails with EINVAL.
TEST_F(LandlockTest, FilesAndDevicesAsRulesAndMissingPathsSkipped) {
  const std::string outside = OutsideFile();
  auto out = RunInChild([&]() -> std::string {
    LandlockReport rep;
    std::string r = Restrict({{outside, false, true, false},
                              {"/dev/null", true, false, true},
                              {"/nonexistent/mcpcell", true, true, false}},
                             &rep);
    if (!r.empty()) return r;
    if (rep.note.find("skipped missing /nonexistent/mcpcell") == std::string::npos) {
      r += "missing path not noted: " + rep.note + "\n";
    }
    r += ExpectOk("read the allowed file", [&] { return open(outside.c_str(), O_RDONLY | O_CLOEXEC); });
    r += ExpectErrno("write the read-only file", [&] {
      return open(outside.c_str(), O_WRONLY | O_CLOEXEC);
    }, EACCES);
    r += ExpectOk("write /dev/null", [] { return open("/dev/null", O_WRONLY | O_CLOEXEC); });
    r += ExpectErrno("read /dev/zero", [] { return open("/dev/zero", O_RDONLY | O_CLOEXEC); },
                     EACCES);
    return r;
  });
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
}

TEST(Landlock, ReportsAbi) {
  const int abi = LandlockAbi();
  std::printf("[ note ] Landlock ABI %d\n", abi);
  EXPECT_GE(abi, 0);
}

}  // namespace
}  // namespace mcpcell
