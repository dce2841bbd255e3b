// The cell → supervisor setup channel: errors and fds (SCM_RIGHTS) over a
// SOCK_SEQPACKET pair, read until EOF.
#include "cell/native/setup_report.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace mcpcell {
namespace {

struct Pair {
  UniqueFd cell;
  UniqueFd supervisor;
};

Pair MakePair() {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

TEST(SetupReport, FdsArriveInOrderAndWork) {
  Pair p = MakePair();
  int a[2];
  int b[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(b, O_CLOEXEC), 0);
  const int send[] = {a[1], b[1]};
  ASSERT_TRUE(SendSetupFds(p.cell.get(), "egress sockets", send).ok());
  ::close(a[1]);
  ::close(b[1]);
  p.cell.reset();  // EOF, as when the server is exec'd
  SetupResult r = AwaitSetupResult(p.supervisor.get());
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.fds_what, "egress sockets");
  ASSERT_EQ(r.fds.size(), 2u);
  // The received fds are the same pipes: what goes in comes out of a[0], b[0].
  ASSERT_EQ(::write(r.fds[0].get(), "A", 1), 1);
  ASSERT_EQ(::write(r.fds[1].get(), "B", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(a[0], &c, 1), 1);
  EXPECT_EQ(c, 'A');
  ASSERT_EQ(::read(b[0], &c, 1), 1);
  EXPECT_EQ(c, 'B');
  EXPECT_NE(::fcntl(r.fds[0].get(), F_GETFD) & FD_CLOEXEC, 0);
  ::close(a[0]);
  ::close(b[0]);
}

TEST(SetupReport, AnErrorAfterTheFdsWinsAndTheFdsAreClosed) {
  Pair p = MakePair();
  int a[2];
  ASSERT_EQ(::pipe2(a, O_CLOEXEC), 0);
  const int send[] = {a[1]};
  ASSERT_TRUE(SendSetupFds(p.cell.get(), "egress sockets", send).ok());
  ::close(a[1]);
  SendSetupError(p.cell.get(), Error{"exec server", "/bin/nope", ENOENT, ""});
  p.cell.reset();
  SetupResult r = AwaitSetupResult(p.supervisor.get());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->what, "exec server");
  EXPECT_EQ(r.error->err, ENOENT);
  EXPECT_TRUE(r.fds.empty());
  // Every write end is closed, so the read end sees EOF.
  char c = 0;
  EXPECT_EQ(::read(a[0], &c, 1), 0);
  ::close(a[0]);
}

// A path is bytes, not UTF-8: `mcpcell run -- $'/bin/tr\xae'` made the cell's
// setup child throw from json::dump() (std::terminate) instead of reporting
// ENOENT. Found by fuzz/server_ref_fuzz.cc; the byte arrives as U+FFFD.
TEST(SetupReport, AnErrorNamingAPathThatIsNotUtf8Arrives) {
  Pair p = MakePair();
  SendSetupError(p.cell.get(), Error{"exec server", "/bin/tr\xae", ENOENT, ""});
  p.cell.reset();
  SetupResult r = AwaitSetupResult(p.supervisor.get());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->what, "exec server");
  EXPECT_EQ(r.error->path, "/bin/tr\xEF\xBF\xBD");
  EXPECT_EQ(r.error->err, ENOENT);
}

TEST(SetupReport, NoMessageMeansTheServerWasExeced) {
  Pair p = MakePair();
  p.cell.reset();
  SetupResult r = AwaitSetupResult(p.supervisor.get());
  EXPECT_FALSE(r.error.has_value());
  EXPECT_TRUE(r.fds.empty());
}

}  // namespace
}  // namespace mcpcell
