#include "cell/docker/container_watcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "cell/docker/engine_client.h"

namespace mcpcell::docker {
namespace {

// A create the supervisor sent just before it died may still be in the
// engine: a 404 is retried this often, this far apart (bounded: cleanup,
// not supervision). What is created later still is `mcpcell gc`'s.
constexpr int kNotFoundRetries = 20;
constexpr long kRetryMillis = 250;
// Each engine call; a force-remove in Podman waits for the stop.
constexpr int kCallSeconds = 60;
// /dev/shm/<prefix><pid>-XXXXXX/d/in: three levels at most (run_dirs.h).
constexpr int kMaxDepth = 4;

struct WatcherPlan {
  sockaddr_un addr{};
  std::string kill_request;
  std::string delete_request;
  std::vector<std::string> shm_prefixes;  ///< "mcpcell-stdio-<pid>-", ...
  uid_t uid = 0;
  std::string claim_path;  ///< the cell id claim file, unlinked once the container is gone
};

// getdents64(2)'s record head (glibc's readdir allocates: not for after fork);
// the NUL-terminated name follows at kDirentName.
struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
};
constexpr std::size_t kDirentName = offsetof(LinuxDirent64, d_type) + 1;

void SleepMillis(long ms) {
  struct timespec ts {ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Not util/write_all.h: this runs in the forked watcher of a threaded
// process, where only async-signal-safe calls are safe (fork(2)), and that
// one builds an Error (malloc) when a write fails.
bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// One request on a fresh connection; the response's status, or 0.
int Send(const WatcherPlan& plan, const std::string& request) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  struct timeval tv {kCallSeconds, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  char buf[512];
  size_t got = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&plan.addr), sizeof plan.addr) == 0 &&
      WriteAll(fd, request.data(), request.size())) {
    while (got < sizeof buf) {
      ssize_t n = ::read(fd, buf + got, sizeof buf - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
      if (::memchr(buf, '\n', got) != nullptr) break;  // the status line is all we need
    }
  }
  ::close(fd);
  return WatcherStatus(buf, got);
}

void RemoveContainer(const WatcherPlan& plan) {
  (void)Send(plan, plan.kill_request);  // Podman's force-remove would first wait out a stop timeout
  for (int i = 0; i <= kNotFoundRetries; ++i) {
    int status = Send(plan, plan.delete_request);
    if (status != 404) return;  // removed (204), or an engine error a later gc will meet
    SleepMillis(kRetryMillis);
    (void)Send(plan, plan.kill_request);
  }
}

void RemoveTreeAt(int parent, const char* name, int depth);

// Empties the directory open as `fd` (ours: made 0700 first, since a 0500
// secrets directory cannot lose entries otherwise).
void EmptyDir(int fd, int depth) {
  (void)::fchmod(fd, 0700);
  alignas(LinuxDirent64) char buf[4096];
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) return;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      const char* name = buf + off + kDirentName;
      off += d->d_reclen;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      if (d->d_type == DT_DIR) RemoveTreeAt(fd, name, depth - 1);
      else (void)::unlinkat(fd, name, 0);
    }
  }
}

void RemoveTreeAt(int parent, const char* name, int depth) {
  if (depth <= 0) return;
  int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    EmptyDir(fd, depth);
    ::close(fd);
  }
  (void)::unlinkat(parent, name, AT_REMOVEDIR);
}

bool HasPrefix(const char* name, const std::string& prefix) {
  return std::strncmp(name, prefix.c_str(), prefix.size()) == 0;
}

// Whether `a` is later than `b`.
bool After(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

// The dead supervisor's per-run entries in /dev/shm, ours only. One changed
// after `death` is not: the dead pid may already belong to a new run of ours.
void RemoveShmEntries(const WatcherPlan& plan, const struct timespec& death) {
  int shm = ::open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (shm < 0) return;
  alignas(LinuxDirent64) char buf[4096];
  for (;;) {
    long n = ::syscall(SYS_getdents64, shm, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      const char* name = buf + off + kDirentName;
      off += d->d_reclen;
      bool ours = false;
      for (const auto& p : plan.shm_prefixes) ours = ours || HasPrefix(name, p);
      struct stat st {};
      if (!ours || ::fstatat(shm, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != plan.uid) continue;
      if (After(st.st_ctim, death)) continue;
      if (S_ISDIR(st.st_mode)) RemoveTreeAt(shm, name, kMaxDepth);
      else (void)::unlinkat(shm, name, 0);
    }
  }
  ::close(shm);
}

// Closes every fd but `a`, `b` and `c` (close_range(2), Linux 5.9): above all
// the client's stdio pipes, or the client would never see EOF from a dead supervisor.
void CloseAllBut(int a, int b, int c) {
  int keep_fds[3] = {a, b, c};
  std::sort(keep_fds, keep_fds + 3);
  unsigned next = 0;
  for (int keep : keep_fds) {
    if (keep < 0) continue;
    if (static_cast<unsigned>(keep) > next) ::close_range(next, static_cast<unsigned>(keep) - 1, 0);
    next = static_cast<unsigned>(keep) + 1;
  }
  ::close_range(next, ~0U, 0);
}

// Blocks until the supervisor dismisses us (false) or dies without doing so (true).
bool SupervisorDied(int read_fd, int pid_fd) {
  struct pollfd fds[2] = {{read_fd, POLLIN, 0}, {pid_fd, POLLIN, 0}};
  nfds_t n = pid_fd >= 0 ? 2 : 1;
  for (;;) {
    int r = ::poll(fds, n, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return true;
    if (fds[0].revents == 0) {
      // The supervisor exited; a dismissal would already be in the pipe. A
      // pipe with neither byte nor EOF has a writer left (a forked child that
      // did not exec yet): the supervisor itself is gone all the same.
      struct pollfd now {read_fd, POLLIN, 0};
      if (::poll(&now, 1, 0) <= 0) return true;
    }
    char c = 0;
    ssize_t got = ::read(read_fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    return got != 1;  // a byte: dismissed; EOF: died
  }
}

[[noreturn]] void RunWatcher(int read_fd, int pid_fd, int claim_fd, const WatcherPlan& plan) {
  CloseAllBut(read_fd, pid_fd, claim_fd);
  // Own session already; ignore the usual stop signals anyway, so only the
  // supervisor's end decides when this runs.
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_IGN);
  ::prctl(PR_SET_NAME, kWatcherName, 0, 0, 0);
  (void)!::chdir("/");
  if (SupervisorDied(read_fd, pid_fd)) {
    struct timespec death {};
    ::clock_gettime(CLOCK_REALTIME, &death);  // the clock file times are stamped with
    RemoveContainer(plan);
    RemoveShmEntries(plan, death);
    // The container is gone: its uid may be claimed again. Unlinked while
    // we still hold the lock (cell_ids.cc: a claimer re-checks the path).
    if (claim_fd >= 0 && !plan.claim_path.empty()) (void)::unlink(plan.claim_path.c_str());
  }
  ::_exit(0);
}

Result<WatcherPlan> MakePlan(const std::string& socket, const std::string& name) {
  WatcherPlan plan;
  if (socket.size() >= sizeof plan.addr.sun_path) return MakeError("start container watcher", socket, "socket path too long");
  plan.addr.sun_family = AF_UNIX;
  std::memcpy(plan.addr.sun_path, socket.c_str(), socket.size() + 1);
  plan.kill_request = WatcherRequest("POST", "/containers/" + name + "/kill?signal=SIGKILL");
  plan.delete_request = WatcherRequest("DELETE", "/containers/" + name + "?force=1&v=1");
  std::string pid = std::to_string(::getpid());
  for (const char* kind : {"stdio", "secrets", "net", "seccomp", "dns"}) {
    plan.shm_prefixes.push_back(std::string("mcpcell-") + kind + "-" + pid + "-");
  }
  plan.uid = ::geteuid();
  return plan;
}

}  // namespace

std::string WatcherRequest(const std::string& method, const std::string& target) {
  return method + " " + std::string(kApiPrefix) + target +
         " HTTP/1.1\r\nHost: docker\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
}

int WatcherStatus(const char* response, std::size_t len) {
  // "HTTP/1.1 204 No Content"
  if (len < 12 || std::strncmp(response, "HTTP/1.", 7) != 0 || response[8] != ' ') return 0;
  int status = 0;
  for (std::size_t i = 9; i < 12; ++i) {
    if (response[i] < '0' || response[i] > '9') return 0;
    status = status * 10 + (response[i] - '0');
  }
  return status;
}

Result<ContainerWatcher> ContainerWatcher::Start(const std::string& socket, const std::string& name, int claim_fd,
                                                 const std::string& claim_path) {
  auto plan = MakePlan(socket, name);
  if (!plan) return plan.error();
  plan->claim_path = claim_path;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("start container watcher: pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // (raw syscall: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.) On
  // kernels before 5.3 the pipe's EOF alone remains.
  UniqueFd self_pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  pid_t middle = ::fork();
  if (middle < 0) return ErrnoError("start container watcher: fork");
  if (middle == 0) {
    // Double fork: the watcher is re-parented to init (or a subreaper) and
    // never becomes our zombie; setsid: a Ctrl-C to the client's process
    // group does not reach it.
    ::setsid();
    pid_t watcher = ::fork();
    if (watcher == 0) {
      ::close(write_end.get());
      RunWatcher(read_end.get(), self_pidfd.get(), claim_fd, *plan);
    }
    ::_exit(watcher < 0 ? 1 : 0);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError("start container watcher", "", "fork of the watcher failed");
  }
  ContainerWatcher w;
  w.pipe_ = std::move(write_end);
  return w;
}

void ContainerWatcher::Dismiss() {
  if (!pipe_) return;
  (void)!::write(pipe_.get(), "x", 1);
  pipe_.reset();
}

}  // namespace mcpcell::docker
