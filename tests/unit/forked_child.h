#pragma once
// Runs a test body in a forked child, for tests that change the process for
// good (seccomp, Landlock, capabilities, uid). The child reports what went
// wrong as text through a pipe; gtest assertions stay in the parent.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

namespace mcpcell::testing {

/// What the child said and how it ended.
struct ChildOutcome {
  std::string report;  ///< text the body returned; "" means every check passed
  int status = 0;      ///< waitpid status
  bool exited_ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
  bool killed_by(int sig) const { return WIFSIGNALED(status) && WTERMSIG(status) == sig; }
};

/// Forks; the child runs `body` and sends back its return value. The child
/// leaves with _exit so it never runs the parent's atexit handlers or gtest.
inline ChildOutcome RunInChild(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {std::string("pipe: ") + std::strerror(errno), -1};
  pid_t pid = fork();
  if (pid < 0) return {std::string("fork: ") + std::strerror(errno), -1};
  if (pid == 0) {
    close(fds[0]);
    std::string report = body();
    const char* p = report.data();
    std::size_t left = report.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0) _exit(3);
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  ChildOutcome out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.report.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

/// Runs `call` (a syscall wrapper returning -1 and setting errno on failure)
/// and says what went wrong when it did not fail with `want`.
template <typename F>
std::string ExpectErrno(const char* what, F&& call, int want) {
  errno = 0;
  const long rc = static_cast<long>(call());
  const int err = errno;
  if (rc == -1 && err == want) return {};
  const char* got = rc == -1 ? strerrorname_np(err) : "success";
  const char* wanted = strerrorname_np(want);
  return std::string(what) + ": expected " + (wanted != nullptr ? wanted : "?") + ", got " +
         (got != nullptr ? got : "?") + " (rc " + std::to_string(rc) + ")\n";
}

/// Runs `call` and says what went wrong when it failed.
template <typename F>
std::string ExpectOk(const char* what, F&& call) {
  errno = 0;
  const long rc = static_cast<long>(call());
  const int err = errno;
  if (rc != -1) return {};
  const char* name = strerrorname_np(err);
  return std::string(what) + ": expected success, got " + (name != nullptr ? name : "?") + "\n";
}

}  // namespace mcpcell::testing
