#include "cell/native/cell_init.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/close_range.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <string>

#include "cell/native/cgroup.h"
#include "cell/native/landlock.h"
#include "cell/native/landlock_plan.h"
#include "egress/loopback.h"
#include "cell/native/privileges.h"
#include "cell/native/rootfs.h"
#include "cell/native/seccomp.h"
#include "cell/native/setup_report.h"
#include "core/exit_codes.h"
#include "util/path_search.h"
#include "util/phase_trace.h"
#include "util/unique_fd.h"
#include "egress/cell_net.h"
#include "egress/host_loopback.h"

namespace mcpcell {
namespace {

// Signals PID 1 passes on to the server. SIGCHLD is ours (reaping).
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

[[noreturn]] void Fail(int sync_fd, const Error& e, int code = kExitSetupFailed) {
  SendSetupError(sync_fd, e);
  ::_exit(code);
}

void Check(int sync_fd, const Status& s) {
  if (!s) Fail(sync_fd, s.error());
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Finds argv[0] on the cell's PATH; execve (not execvpe) so the search uses
// the cell's environment, not mcpcell's.
std::string ResolveInCell(const CellSpec& spec) {
  const std::string& a0 = spec.argv[0];
  if (a0.find('/') != std::string::npos) return a0;
  auto it = spec.env.find("PATH");
  // PID 1 is already in the server's working directory: a relative or empty
  // entry names the same directory it will for the server's execve.
  return SearchPath(a0, it != spec.env.end() ? it->second : "/usr/bin:/bin");
}

// Everything the server process needs, prepared by PID 1 before it forks, so
// the child only makes syscalls: it is started with vfork (no copy of PID 1's
// address space, which on this kind of VM costs more than all the mounts).
struct ServerLaunch {
  std::string exe;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::vector<char*> cargv;
  std::vector<char*> cenv;
  PreparedLandlock landlock;
};

// The server process: last privilege steps, then execve. Order matters:
// rlimits need privileges; capabilities go next; Landlock and seccomp need
// no_new_privs; seccomp is last so the steps before it may use what it denies.
[[noreturn]] void ExecServer(const CellInitArgs& a, const ServerLaunch& l) {
  const CellSpec& spec = *a.spec;
  int fd = a.sync_fd;
  // Dispositions set to "ignore" survive execve (signal(7)); mcpcell ignores
  // SIGPIPE, the server must not inherit that.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < 32; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Every fd but stdio and the report socket closes at exec: nothing of
  // mcpcell's leaks into the server.
  ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  Check(fd, ApplyRlimits(spec.limits));
  // Securebits: uid 0 inside never regains capabilities through execve, and
  // this can't be undone (capabilities(7), "The securebits flags").
  if (::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) != 0) {
    Fail(fd, ErrnoError("set securebits"));
  }
  Check(fd, DropAllCapabilities());
  Check(fd, SetNoNewPrivs());
  Check(fd, RestrictLandlock(l.landlock));
  if (a.seccomp != nullptr) Check(fd, LoadSeccompProgram(*a.seccomp));
  TracePhase("server-execve");
  ::execve(l.exe.c_str(), l.cargv.data(), l.cenv.data());
  int err = errno;
  Fail(fd, Error{"exec server", l.exe, err, {}}, err == ENOENT ? kExitNotFound : kExitCannotExec);
}

// --secret-env: the value is read here, in the cell, from the secret's file
// under /run/secrets (the cell user's own, 0400), and exists only in the
// server's initial environment: never on anyone's argv, never in the
// supervisor's memory or environment, never in the spec or the audit log.
// Trailing newlines are dropped, as the shell's $(cat FILE) does (a token
// file written by `echo` ends with one); a NUL cannot be in a variable.
void AddSecretEnvironment(const CellInitArgs& a, std::vector<std::string>* env) {
  for (const auto& s : a.spec->secrets) {
    if (!s.env_name) continue;
    std::string path = "/run/secrets/" + s.name;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
    if (!fd) Fail(a.sync_fd, ErrnoError("read secret for --secret-env " + *s.env_name, path));
    // Sized up front: a string that grows leaves copies of the value behind
    // in freed memory, and so would a vector of strings that grows (below).
    struct stat st{};
    std::string value;
    if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) value.reserve(static_cast<std::size_t>(st.st_size) + 1);
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) value.append(buf, static_cast<std::size_t>(n));
    ::explicit_bzero(buf, sizeof buf);
    if (n < 0) Fail(a.sync_fd, ErrnoError("read secret for --secret-env " + *s.env_name, path));
    if (value.find('\0') != std::string::npos) {
      Fail(a.sync_fd, MakeError("--secret-env " + *s.env_name, s.host_file,
                                "the secret holds a NUL byte, which an environment variable cannot; read it from " + path));
    }
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    env->push_back(*s.env_name + "=" + value);
    ::explicit_bzero(value.data(), value.size());
  }
}

// PID 1's copy of the environment may hold secret values; the server has its
// own since execve.
void ForgetEnvironment(ServerLaunch* l) {
  for (auto& e : l->env) ::explicit_bzero(e.data(), e.size());
}

ServerLaunch PrepareServer(const CellInitArgs& a) {
  const CellSpec& spec = *a.spec;
  ServerLaunch l;
  l.exe = ResolveInCell(spec);
  if (l.exe.empty()) {
    Fail(a.sync_fd, MakeError("server command not found in the cell", spec.argv[0],
                              "it must be on the cell's PATH or inside a mounted directory; add its directory with --read"),
         kExitNotFound);
  }
  if (spec.landlock) {
    auto ll = PrepareLandlock(LandlockPathsFor(spec, *a.planned));
    if (!ll) Fail(a.sync_fd, ll.error());
    l.landlock = std::move(*ll);
  }
  l.argv = spec.argv;
  l.env.reserve(spec.env.size() + spec.secrets.size());
  for (const auto& [k, v] : spec.env) l.env.push_back(k + "=" + v);
  AddSecretEnvironment(a, &l.env);
  l.cargv = CStrings(l.argv);
  l.cenv = CStrings(l.env);
  return l;
}

// An allow-list cell: lo, the local default route, the nft redirect and the
// two sockets, made here while PID 1 still has CAP_NET_ADMIN in the cell's
// namespaces; the sockets go to the supervisor, which serves them from
// outside (the proxy's upstream connections are made from the host's
// network namespace). PID 1 keeps no copy: the server must never hold the
// listener (it could accept its own connections and skip the proxy).
void HandOverEgressSockets(int fd, const NetworkSpec& network) {
  auto sockets = SetUpCellNet(HostLoopbackPortNumbers(network.host_ports));
  if (!sockets) Fail(fd, sockets.error());
  const int fds[] = {sockets->proxy_listener.get(), sockets->dns_socket.get()};
  Check(fd, SendSetupFds(fd, "egress sockets", fds));
}

// No network (profile none): only the DNS stub's socket, so the supervisor
// can tell the user which names the server looked up (issue 14 item 8).
// Best effort: the reports are a convenience, the cell has no network either
// way, so a socket that cannot be bound leaves it as it was (no fds sent).
void HandOverNoNetworkDns(int fd) {
  Check(fd, BringUpLoopback());
  auto dns = BindNoNetworkDnsSocket();
  if (!dns) return;
  const int fds[] = {dns->get()};
  Check(fd, SendSetupFds(fd, "no-network DNS socket", fds));
}

int StatusToExit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitSetupFailed;
}

// PID 1's loop: signals arrive synchronously through sigwaitinfo, so there
// is no async handler and no race with waitpid.
[[noreturn]] void Supervise(pid_t server, const sigset_t& mask) {
  for (;;) {
    siginfo_t info{};
    int sig = ::sigwaitinfo(&mask, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      ::kill(server, sig);
      continue;
    }
    int status = 0;
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      // When PID 1 exits the kernel kills everything left in the namespace.
      if (pid == server) ::_exit(StatusToExit(status));
    }
  }
}

// The cell shares no session, process group or terminal with anything
// outside. Without this the cell's processes stay in the caller's process
// group and session (they read as 0/0 from inside the pid namespace), so
// kill(0, sig) and a terminal's job control reach the client, its shell and
// their other children; Landlock's signal scoping (ABI 6, Linux 6.12) stops
// that only on new kernels. setsid(2) cannot fail here: the child of clone
// is never a process group leader. A session leader acquires a controlling
// terminal by opening one without O_NOCTTY (open(2), credentials(7)): PID 1 never
// holds a terminal (below), and every file it opens is O_PATH or O_NOCTTY.
void LeaveCallersSession(int sync_fd, const std::array<int, 3>& stdio) {
  for (int n = 0; n < 3; ++n) {
    if (stdio[n] >= 0 && ::dup2(stdio[n], n) < 0) Fail(sync_fd, ErrnoError("take over stdio fd", std::to_string(n)));
  }
  if (::setsid() < 0) Fail(sync_fd, ErrnoError("start a session of the cell's own (setsid)"));
}

// cgroup v1: PID 1 moves itself into the cell's cgroups as soon as the
// supervisor says "go" (its id maps written: a failure here is reported, not
// mistaken for a vanished child), so all it does from then on is accounted
// and limited there, and its server is born in them. Cheaper than the
// supervisor's move (CellCgroup::OpenV1TasksFiles says why). The `tasks` fds
// are closed right after: nothing later in the cell holds one.
void JoinCellCgroups(const CellInitArgs& a) {
  std::size_t failed = 0;
  int err = JoinCgroupsAsSelf(a.cgroup_tasks, &failed);
  for (int t : a.cgroup_tasks) ::close(t);
  if (err == 0) return;
  std::string dir = a.cgroup_dirs != nullptr && failed < a.cgroup_dirs->size() ? (*a.cgroup_dirs)[failed] : "";
  Fail(a.sync_fd, Error{"join the cell's cgroup (write 0 to tasks)", dir + "/tasks", err, {}});
}

// Every fd above stdio but the sync socket, the supervisor's idmapped
// mount trees (idmap_mount.h), which the root is built from, and the cgroup
// `tasks` files PID 1 joins through (JoinCellCgroups).
void CloseInheritedFds(int sync_fd, const std::vector<int>& trees, const std::vector<int>& tasks) {
  std::vector<int> keep{sync_fd};
  for (int t : trees) {
    if (t >= 0) keep.push_back(t);
  }
  keep.insert(keep.end(), tasks.begin(), tasks.end());
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int k : keep) {
    if (static_cast<unsigned>(k) > from) ::syscall(SYS_close_range, from, static_cast<unsigned>(k - 1), 0U);
    from = std::max(from, static_cast<unsigned>(k) + 1);
  }
  ::syscall(SYS_close_range, from, ~0U, 0U);
}

// The supervisor moves PID 1 into the cell's cgroup while the root is built
// (native_cell.cc, StartCell); no server starts before it is in. Then a
// cgroup namespace rooted there hides the host's hierarchy. Best effort: old
// kernels.
void AwaitCgroupJoined(int sync_fd) {
  char joined = 0;
  if (::read(sync_fd, &joined, 1) != 1 || joined != 'c') ::_exit(kExitSetupFailed);  // supervisor gone or refused
  (void)::unshare(CLONE_NEWCGROUP);
  TracePhase("init-cgroup-joined");
}

}  // namespace

[[noreturn]] void CellInitMain(const CellInitArgs& a) {
  const CellSpec& spec = *a.spec;
  int fd = a.sync_fd;
  LeaveCallersSession(fd, a.stdio);
  // If the supervisor dies, so does the cell (PID 1 dying kills the namespace).
  // The signal follows the THREAD that cloned us (prctl(2)): the supervisor's
  // main thread, which lives until the cell is reaped. The egress thread
  // starts later and is never a parent.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(fd, ErrnoError("set parent-death signal"));
  // Keep only stdio and the sync socket: fds inherited from the supervisor
  // (the cgroup janitor's pipe among them) have no business in the cell.
  CloseInheritedFds(fd, a.idmapped_trees, a.cgroup_tasks);
  char go = 0;
  if (::read(fd, &go, 1) != 1 || go != 'g') ::_exit(kExitSetupFailed);  // supervisor gone or refused
  JoinCellCgroups(a);
  TracePhase("init-go");
  // PID 1 and so the server (its only child) run at no priority the caller
  // lent them (rlimits.cc): a real-time PID 1 woken by a flood of signals
  // from the server would be the server's way to real-time CPU.
  Check(fd, ResetScheduling());
  // The supervisor blocked its signals for signalfd; the cell starts clean.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (::sethostname(spec.hostname.data(), spec.hostname.size()) != 0) Fail(fd, ErrnoError("sethostname"));
  // Sources are opened with the caller's host identity, before the switch.
  auto sources = OpenRootfsSources(spec, *a.planned, a.idmapped_trees);
  if (!sources) Fail(fd, sources.error());
  TracePhase("init-sources-opened");
  // Become the cell user now: files created while building the root must be
  // owned by an id that exists in this user namespace. Capabilities in the
  // namespace survive because uid 0 is not mapped (capabilities(7)).
  Check(fd, SwitchUser(spec.uid, spec.gid, a.host.privileged));
  // Changing credentials clears the parent-death signal (prctl(2)): set it
  // again, then make sure the supervisor did not die in between — its end of
  // the sync socket is open for as long as it lives.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(fd, ErrnoError("set parent-death signal"));
  struct pollfd pfd{fd, POLLRDHUP, 0};
  if (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP)) != 0) ::_exit(kExitSetupFailed);
  TracePhase("init-user-switched");
  Check(fd, BuildRootfs(spec, *a.planned, *sources));
  TracePhase("init-rootfs-built");
  if (spec.network.mode == NetworkSpec::Mode::kAllowList) {
    HandOverEgressSockets(fd, spec.network);
  } else if (spec.network.mode == NetworkSpec::Mode::kNone && a.own_netns) {
    HandOverNoNetworkDns(fd);
  } else if (a.own_netns) {
    Check(fd, BringUpLoopback());
  }

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  for (int sig : kForwarded) sigaddset(&mask, sig);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);

  TracePhase("init-net-up");
  ServerLaunch launch = PrepareServer(a);
  TracePhase("init-server-prepared");
  AwaitCgroupJoined(fd);
  // vfork: PID 1 waits until the server has exec'd (or failed); the child
  // touches only the prepared data above and makes syscalls.
  pid_t server = ::vfork();
  if (server < 0) Fail(fd, ErrnoError("start server"));
  if (server == 0) ExecServer(a, launch);
  TracePhase("init-vfork-returned");
  ::close(fd);  // now only the server holds it: EOF at its exec tells the supervisor
  ForgetEnvironment(&launch);
  // PID 1 keeps nothing a server could use: no capabilities, not ptraceable.
  (void)DropAllCapabilities();
  (void)SetNoNewPrivs();
  ::prctl(PR_SET_DUMPABLE, 0);
  Supervise(server, mask);
}

}  // namespace mcpcell
