// The container watcher (issue 10.9) against a stand-in engine on a unix
// socket: a "supervisor" child starts it and is killed with SIGKILL; the
// watcher must send the kill and the force-remove for the container's name,
// and remove that supervisor's /dev/shm entries. The e2e tests do the same
// against dockerd and Podman; this tier needs neither.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cell/docker/container_watcher.h"

namespace mcpcell::docker {
namespace {

TEST(ContainerWatcher, RequestAndStatus) {
  EXPECT_EQ(WatcherRequest("DELETE", "/containers/mcpcell-ab?force=1&v=1"),
            "DELETE /v1.41/containers/mcpcell-ab?force=1&v=1 HTTP/1.1\r\nHost: docker\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n");
  const char ok[] = "HTTP/1.1 204 No Content\r\n";
  EXPECT_EQ(WatcherStatus(ok, sizeof ok - 1), 204);
  const char gone[] = "HTTP/1.0 404 Not Found\r\n";
  EXPECT_EQ(WatcherStatus(gone, sizeof gone - 1), 404);
  EXPECT_EQ(WatcherStatus("HTTP/1.1 2", 10), 0);
  EXPECT_EQ(WatcherStatus("SSH-2.0-OpenSSH_9", 17), 0);
}

// Accepts one connection, returns its request line, answers `status`.
std::string ServeOne(int listener, int status) {
  int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (c < 0) return "accept failed";
  std::string req;
  char buf[1024];
  while (req.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::read(c, buf, sizeof buf);
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
  }
  std::string reply = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)!::write(c, reply.data(), reply.size());
  ::close(c);
  return req.substr(0, req.find("\r\n"));
}

TEST(ContainerWatcher, RemovesTheContainerAndShmEntriesWhenTheSupervisorIsKilled) {
  std::string sock = "/tmp/mcpcell-watcher-test-" + std::to_string(::getpid()) + ".sock";
  ::unlink(sock.c_str());
  int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  // accept(2) honours SO_RCVTIMEO: no watcher fails the test instead of hanging it.
  struct timeval guard {30, 0};
  ASSERT_EQ(::setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof guard), 0);

  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  pid_t supervisor = ::fork();
  if (supervisor == 0) {
    // Like a run: a per-run directory and file on /dev/shm, then the watcher.
    std::string dir = "/dev/shm/mcpcell-stdio-" + std::to_string(::getpid()) + "-test";
    std::string file = "/dev/shm/mcpcell-seccomp-" + std::to_string(::getpid()) + "-test";
    if (::mkdir(dir.c_str(), 0700) != 0 || ::mkdir((dir + "/d").c_str(), 0500) != 0) _exit(2);
    int f = ::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (f < 0) _exit(3);
    auto w = ContainerWatcher::Start(sock, "mcpcell-feedface");
    if (!w) _exit(4);
    (void)!::write(ready[1], "r", 1);
    ::pause();
    _exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the supervisor child failed to set up";
  ::close(ready[0]);
  std::string dir = "/dev/shm/mcpcell-stdio-" + std::to_string(supervisor) + "-test";
  std::string file = "/dev/shm/mcpcell-seccomp-" + std::to_string(supervisor) + "-test";
  struct stat st{};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);

  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  // accept() blocks until the watcher calls: no timing involved.
  EXPECT_EQ(ServeOne(listener, 204), "POST /v1.41/containers/mcpcell-feedface/kill?signal=SIGKILL HTTP/1.1");
  EXPECT_EQ(ServeOne(listener, 204), "DELETE /v1.41/containers/mcpcell-feedface?force=1&v=1 HTTP/1.1");
  // The entries go right after the DELETE; wait for that (bounded: a hang
  // guard of 10 s, not a measurement).
  for (int i = 0; i < 1000 && (::stat(dir.c_str(), &st) == 0 || ::stat(file.c_str(), &st) == 0); ++i) ::usleep(10000);
  EXPECT_NE(::stat(dir.c_str(), &st), 0) << dir << " (with a 0500 subdirectory) was left";
  EXPECT_NE(::stat(file.c_str(), &st), 0) << file << " was left";
  ::close(listener);
  ::unlink(sock.c_str());
}

}  // namespace
}  // namespace mcpcell::docker
