// util/write_all.h: a buffer larger than a pipe holds arrives whole (short
// writes are continued), and a failure is an Error naming what and where.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>

#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

TEST(WriteAll, ContinuesShortWrites) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  UniqueFd r(fds[0]);
  UniqueFd w(fds[1]);
  std::string data(1 << 20, 'x');  // 16 pipe buffers of 64 KiB
  for (std::size_t i = 0; i < data.size(); i += 4093) data[i] = static_cast<char>('a' + i % 26);
  std::string got;
  std::thread reader([&] {
    char buf[7000];  // reads of another size than the writes
    for (ssize_t n; (n = ::read(r.get(), buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  });
  Status ok = WriteAll(w.get(), data, "write test pipe");
  w.reset();
  reader.join();
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(got, data);
}

TEST(WriteAll, FailureNamesWhatAndWhere) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  UniqueFd w(fds[1]);
  ::close(fds[0]);
  auto old = std::signal(SIGPIPE, SIG_IGN);
  Status s = WriteAll(w.get(), "hello", "write audit log", "/tmp/x.log");
  std::signal(SIGPIPE, old);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, EPIPE);
  EXPECT_EQ(s.error().Message().rfind("write audit log /tmp/x.log: ", 0), 0u) << s.error().Message();
}

// A non-blocking pipe that fills: WriteAll fails with EAGAIN (the caller
// decides), WriteAllWaiting waits for the reader and delivers every byte.
TEST(WriteAll, ANonBlockingFullPipeFailsOrIsWaitedFor) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK), 0);
  UniqueFd r(fds[0]);
  UniqueFd w(fds[1]);
  std::string data(1 << 20, 'y');
  Status failed = WriteAll(w.get(), data, "write stderr");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().err, EAGAIN);
  char drain[1 << 16];
  while (::read(r.get(), drain, sizeof drain) > 0) {
  }
  std::size_t got = 0;
  std::thread reader([&] {
    pollfd p{r.get(), POLLIN, 0};
    while (got < data.size() && ::poll(&p, 1, 10000) > 0) {
      ssize_t n = ::read(r.get(), drain, sizeof drain);
      if (n > 0) got += static_cast<std::size_t>(n);
    }
  });
  Status ok = WriteAllWaiting(w.get(), data, "write stderr");
  reader.join();
  EXPECT_TRUE(ok.ok()) << ok.error().Message();
  EXPECT_EQ(got, data.size());
}

}  // namespace
}  // namespace mcpcell
