// util/owned_file.h: the one open for files mcpcell trusts across runs (the
// pin store, the compiled secret rules): no symlink followed, no FIFO that
// hangs, the caller's own, writable by nobody else, bounded.

#include "util/owned_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace mcpcell {
namespace {

const OwnedRules kRules{"open the test store", "another user could rewrite it", "remove it", "run chmod go-w on it", 16};

struct Store {
  testing::TempDir t{"owned-file-test"};
  UniqueFd dir;
  Store() { dir.reset(::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); }
  Result<UniqueFd> Open(const std::string& name, int flags = O_RDONLY) {
    return OpenOwnedFileAt(dir.get(), name, flags, "open the test file", t.File(name), kRules);
  }
};

std::string Message(const Result<UniqueFd>& r) { return r.ok() ? "(opened)" : r.error().Message(); }

TEST(OwnedFile, CreatesA0600FileAndOpensItAgain) {
  Store s;
  ASSERT_TRUE(s.dir);
  ::umask(0);  // the 0600 must come from the open, not from the umask
  auto made = s.Open("f", O_RDWR | O_CREAT);
  ::umask(022);
  ASSERT_TRUE(made.ok()) << Message(made);
  struct stat st{};
  ASSERT_EQ(::fstat(made->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::write(made->get(), "hello", 5), 5);
  auto again = s.Open("f");
  ASSERT_TRUE(again.ok()) << Message(again);
  auto text = ReadOwnedFile(again->get(), "read the test file", s.t.File("f"), kRules);
  ASSERT_TRUE(text.ok()) << text.error().Message();
  EXPECT_EQ(*text, "hello");
  EXPECT_EQ(s.Open("missing").error().err, ENOENT);  // the caller decides what a missing file means
}

TEST(OwnedFile, ASymlinkIsNotFollowedAndAFifoDoesNotHang) {
  Store s;
  std::ofstream(s.t.File("real")) << "x";
  ::chmod(s.t.File("real").c_str(), 0600);
  ASSERT_EQ(::symlink(s.t.File("real").c_str(), s.t.File("link").c_str()), 0);
  auto link = s.Open("link");
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().err, ELOOP);
  EXPECT_FALSE(s.Open("link", O_RDWR | O_CREAT).ok());  // nor created through
  ASSERT_EQ(::mkfifo(s.t.File("fifo").c_str(), 0600), 0);
  auto fifo = s.Open("fifo");  // O_NONBLOCK: returns with no writer, then refused
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(Message(fifo).find("is not a regular file"), std::string::npos) << Message(fifo);
  ASSERT_EQ(::mkdir(s.t.File("d").c_str(), 0700), 0);
  EXPECT_FALSE(s.Open("d").ok());
}

TEST(OwnedFile, WritableByOthersOrTooLargeIsRefusedNamingPathAndFix) {
  Store s;
  std::ofstream(s.t.File("f")) << "x";
  ::chmod(s.t.File("f").c_str(), 0620);
  auto group = s.Open("f");
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(Message(group), "open the test store " + s.t.File("f") +
                                ": is writable by group or others (mode 620): another user could rewrite it; run chmod go-w on it");
  ::chmod(s.t.File("f").c_str(), 0602);
  EXPECT_FALSE(s.Open("f").ok());
  ::chmod(s.t.File("f").c_str(), 0644);  // readable by others is fine: nobody else can write
  EXPECT_TRUE(s.Open("f").ok());
  std::ofstream(s.t.File("big")) << std::string(17, 'x');
  auto big = s.Open("big");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(Message(big).find("17 bytes, more than 16"), std::string::npos) << Message(big);
}

TEST(OwnedFile, AnotherUsersFileIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another uid (chown)";
  Store s;
  std::ofstream(s.t.File("f")) << "x";
  ::chmod(s.t.File("f").c_str(), 0600);
  ASSERT_EQ(::chown(s.t.File("f").c_str(), 65534, 65534), 0);
  auto r = s.Open("f");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(Message(r).find("is owned by uid 65534, not by you (uid 0): another user could rewrite it; remove it"),
            std::string::npos)
      << Message(r);
  ASSERT_EQ(::mkdir(s.t.File("d").c_str(), 0700), 0);
  ASSERT_EQ(::chown(s.t.File("d").c_str(), 65534, 65534), 0);
  EXPECT_FALSE(OpenOwnedDirAt(s.dir.get(), "d", "open the test dir", s.t.File("d"), kRules).ok());
}

TEST(OwnedDir, OpensOwnDirectoriesOnlyAndNeverThroughALink) {
  Store s;
  ASSERT_EQ(::mkdir(s.t.File("d").c_str(), 0700), 0);
  EXPECT_TRUE(OpenOwnedDirAt(s.dir.get(), "d", "open the test dir", s.t.File("d"), kRules).ok());
  ASSERT_EQ(::symlink("d", s.t.File("l").c_str()), 0);
  auto link = OpenOwnedDirAt(s.dir.get(), "l", "open the test dir", s.t.File("l"), kRules);
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().err, ENOTDIR);  // open(2): O_DIRECTORY|O_NOFOLLOW on a symlink
  ASSERT_EQ(::chmod(s.t.File("d").c_str(), 0770), 0);
  EXPECT_FALSE(OpenOwnedDirAt(s.dir.get(), "d", "open the test dir", s.t.File("d"), kRules).ok());
  std::ofstream(s.t.File("f")) << "x";
  auto file = OpenOwnedDirAt(s.dir.get(), "f", "open the test dir", s.t.File("f"), kRules);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().err, ENOTDIR);
}

TEST(OwnedFile, AReadStopsPastTheCapEvenIfTheFileGrewAfterTheCheck) {
  Store s;
  std::ofstream(s.t.File("f")) << "small";
  ::chmod(s.t.File("f").c_str(), 0600);
  auto fd = s.Open("f");
  ASSERT_TRUE(fd.ok()) << Message(fd);
  std::ofstream(s.t.File("f"), std::ios::app) << std::string(64, 'x');  // grown after the open's check
  auto text = ReadOwnedFile(fd->get(), "read the test file", s.t.File("f"), kRules);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().Message(), "read the test file " + s.t.File("f") + ": too large");
}

}  // namespace
}  // namespace mcpcell
