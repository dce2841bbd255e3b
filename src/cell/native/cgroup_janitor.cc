// The janitor: a detached process that removes a cell's cgroups if the
// supervisor dies without doing it (kill -9, OOM kill, crash).
//
// It blocks in poll(2) on two things: a pipe whose write end the supervisor
// holds (O_CLOEXEC, so a cell that execs never has it), which reaches EOF when
// the supervisor closes it after removing the cgroups itself or dies; and a
// pidfd of the supervisor (pidfd_open(2), Linux 5.3), readable when it exits.
// The pidfd is needed because the pipe alone is not enough: every process
// forked from the supervisor inherits the write end until it execs, and the
// cell's PID 1 never execs — a cell orphaned by a killed supervisor would keep
// the janitor asleep for ever (seen: PR_SET_PDEATHSIG is cleared by the
// setuid in the cell, so PID 1 survived a kill -9 of the supervisor).
// No periodic polling and no PDEATHSIG (which fires on the death of the
// forking *thread*, not the process — prctl(2)).
//
// After fork the child may only use async-signal-safe calls (fork(2) in a
// multithreaded program): every path is computed before fork and the child
// touches only syscalls and stack buffers — no malloc, no stdio, no locks.

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "cell/native/cgroup.h"
#include "cell/native/cgroup_files.h"

namespace mcpcell {
namespace {

// How long the janitor waits for a cell to empty before killing what remains:
// bounded because this runs only once, at cleanup, never as supervision.
constexpr int kPollMillis = 20;
constexpr int kWaitPolls = 10000 / kPollMillis;   // 10 s
constexpr int kAfterKillPolls = 2000 / kPollMillis;  // 2 s

struct JanitorPaths {
  std::vector<std::string> dirs;
  std::vector<std::string> procs;  ///< <dir>/cgroup.procs
  std::vector<std::string> kills;  ///< <dir>/cgroup.kill (may not exist: v1)
};

void SleepMillis(int ms) {
  struct timespec ts {0, static_cast<long>(ms) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Reads a small file into buf; returns bytes read, 0 on any failure (gone = empty).
size_t ReadSmall(const char* path, char* buf, size_t size) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t total = 0;
  while (total < size) {
    ssize_t n = ::read(fd, buf + total, size - total);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  ::close(fd);
  return total;
}

bool AllEmpty(const JanitorPaths& p) {
  char buf[64];
  for (const auto& procs : p.procs) {
    if (ReadSmall(procs.c_str(), buf, sizeof buf) > 0) return false;
  }
  return true;
}

bool WaitEmpty(const JanitorPaths& p, int polls) {
  for (int i = 0; i < polls; ++i) {
    if (AllEmpty(p)) return true;
    SleepMillis(kPollMillis);
  }
  return AllEmpty(p);
}

// The supervisor is gone, so nothing relays the cell's stdio or watches it any
// more: fail closed. v2 has cgroup.kill; on v1 kill the listed pids (they were
// members when read; a pid recycled in between would have to be a new process
// that joined this cgroup, which only the cell itself could cause).
void KillRemaining(const JanitorPaths& p) {
  for (size_t i = 0; i < p.dirs.size(); ++i) {
    int fd = ::open(p.kills[i].c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      (void)!::write(fd, "1", 1);
      ::close(fd);
      continue;
    }
    char buf[8192];
    size_t n = ReadSmall(p.procs[i].c_str(), buf, sizeof buf);
    long pid = 0;
    for (size_t j = 0; j < n; ++j) {
      if (buf[j] >= '0' && buf[j] <= '9') {
        pid = pid * 10 + (buf[j] - '0');
      } else {
        if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
        pid = 0;
      }
    }
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
}

void RemoveDirs(const JanitorPaths& p) {
  for (const auto& dir : p.dirs) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (::rmdir(dir.c_str()) == 0 || errno != EBUSY) break;
      SleepMillis(10);
    }
  }
}

// Closes every fd but the three kept (-1 = none; no allocation: after fork).
void CloseAllBut(int a, int b, int c) {
  int keep[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {  // sort three
    for (int j = i + 1; j < 3; ++j) {
      if (keep[j] < keep[i]) std::swap(keep[i], keep[j]);
    }
  }
  unsigned next = 0;
  for (int k : keep) {
    if (k < 0 || static_cast<unsigned>(k) < next) continue;
    if (static_cast<unsigned>(k) > next) ::close_range(next, static_cast<unsigned>(k) - 1, 0);
    next = static_cast<unsigned>(k) + 1;
  }
  ::close_range(next, ~0U, 0);
}

// Returns when the pipe reaches EOF or the supervisor (pidfd) has exited.
void WaitForSupervisor(int read_fd, int pid_fd) {
  struct pollfd fds[2] = {{read_fd, POLLIN, 0}, {pid_fd, POLLIN, 0}};
  nfds_t n = pid_fd >= 0 ? 2 : 1;
  while (true) {
    int r = ::poll(fds, n, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return;
    if (n == 2 && fds[1].revents != 0) return;  // the supervisor exited
    if (fds[0].revents != 0) {
      char buf[64];
      ssize_t got = ::read(read_fd, buf, sizeof buf);
      if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return;  // EOF
      // Bytes written by anyone holding the write end are ignored.
    }
  }
}

[[noreturn]] void RunJanitor(int read_fd, int pid_fd, int cell_mnt_ns, const JanitorPaths& paths) {
  // Hold nothing of the supervisor's: above all not the client's stdio pipes,
  // or the MCP client would never see EOF when the supervisor dies
  // (close_range(2), Linux 5.9). The cell's mount namespace is held on
  // purpose (StartCgroupJanitor says why) and dropped at our exit.
  CloseAllBut(read_fd, pid_fd, cell_mnt_ns);
  // Ctrl-C in the client's terminal reaches the whole foreground process
  // group; the janitor has its own session, but ignore the usual stop
  // signals anyway so only the supervisor's end decides when it runs.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  ::prctl(PR_SET_NAME, "mcpcell-janitor", 0, 0, 0);
  (void)!::chdir("/");  // do not pin the supervisor's cwd (a mount, a temp dir)
  WaitForSupervisor(read_fd, pid_fd);
  if (!WaitEmpty(paths, kWaitPolls)) {
    KillRemaining(paths);
    WaitEmpty(paths, kAfterKillPolls);
  }
  RemoveDirs(paths);
  ::_exit(0);
}

}  // namespace

Status StartCgroupJanitor(const CellCgroup& cgroup, int cell_mnt_ns) {
  if (!cgroup.active()) return {};
  if (cgroup.janitor_pipe_) return MakeError("start cgroup janitor", "", "already started");
  JanitorPaths paths;
  for (const auto& dir : cgroup.dirs()) {
    paths.dirs.push_back(dir);
    paths.procs.push_back(cgroupfs::Join(dir, "cgroup.procs"));
    paths.kills.push_back(cgroupfs::Join(dir, "cgroup.kill"));
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("start cgroup janitor: pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // Our own pidfd, inherited by the janitor (pidfds are close-on-exec). On
  // kernels before 5.3 the pipe alone remains.
  // (raw syscall: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.)
  UniqueFd self_pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));

  pid_t middle = ::fork();
  if (middle < 0) return ErrnoError("start cgroup janitor: fork");
  if (middle == 0) {
    // Double fork: the janitor's parent exits at once, so the janitor is
    // re-parented to init (or a subreaper) and never becomes our zombie.
    ::setsid();
    pid_t janitor = ::fork();
    if (janitor == 0) {
      ::close(write_end.get());
      RunJanitor(read_end.get(), self_pidfd.get(), cell_mnt_ns, paths);
    }
    ::_exit(janitor < 0 ? 1 : 0);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return MakeError("start cgroup janitor", "", "fork of the janitor failed");
  }
  cgroup.janitor_pipe_ = std::move(write_end);
  return {};
}

}  // namespace mcpcell
