#include "source/host_run.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "source/host_tool.h"
#include "util/diag.h"
#include "util/fs_usage.h"
#include "util/masked_echo.h"
#include "util/path_search.h"
#include "util/unique_fd.h"

extern char** environ;

namespace mcpcell {
namespace {

/// What a host tool is started with, all of it made before fork.
struct HostCommand {
  std::string exe;
  std::vector<std::string> env;
};

Result<HostCommand> PrepareHostCommand(const HostToolRun& run) {
  const std::string& name = run.argv[0];
  const char* path = std::getenv("PATH");
  char cwd[PATH_MAX];
  // The account's home, not $HOME: a client's env block may set HOME to the
  // repository (or "."), which would make it "no workspace" (adv26).
  const passwd* pw = ::getpwuid(::geteuid());
  std::string home = pw != nullptr && pw->pw_dir != nullptr && pw->pw_dir[0] == '/' ? pw->pw_dir : "";
  std::string safe = WithoutProjectEntries(
      HostToolPath(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", run.cell_writable),
      ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "", home);
  HostCommand c{"", HostToolEnvironment(environ, safe)};
  std::erase_if(c.env, [&](const std::string& e) {
    return std::any_of(run.drop_env_prefixes.begin(), run.drop_env_prefixes.end(),
                       [&](const std::string& p) { return e.rfind(p, 0) == 0; });
  });
  for (const auto& extra : run.extra_env) {
    std::string key = extra.substr(0, extra.find('=') + 1);
    std::erase_if(c.env, [&](const std::string& e) { return e.rfind(key, 0) == 0; });
    c.env.push_back(extra);
  }
  if (name[0] == '/') {
    // An absolute program (Debian's /usr/bin/python3, a venv's python) is
    // held to the same rule as a PATH entry: not from where a cell writes.
    std::string dir = name.substr(0, name.rfind('/'));
    if (!HostToolPath(dir.empty() ? "/" : dir, run.cell_writable).empty() && IsExecutableFile(name)) c.exe = name;
  } else {
    c.exe = FindHostTool(name, safe);
  }
  if (!c.exe.empty()) {
    // The tool's own directory first: npm's `#!/usr/bin/env node` then runs
    // the node beside it (/usr/bin's, or an nvm install's), not one an
    // earlier PATH entry of mcpcell's environment offers (adv14: a
    // repository's node_modules/.bin on PATH ran as the user on every install).
    std::string dir = c.exe.substr(0, c.exe.rfind('/'));
    for (auto& e : c.env) {
      if (e.rfind("PATH=", 0) == 0) e = "PATH=" + (dir.empty() ? std::string("/") : dir) + ":" + e.substr(5);
    }
  }
  if (c.exe.empty()) {
    return MakeError("find " + name + " on the host", "",
                     (name[0] == '/' ? std::string("not an executable file outside the directories a cell may write")
                                     : "not on PATH (relative entries, directories the cell may write and a project's own — inside node_modules, a "
                                       "Python venv or the working directory — are skipped: " +
                                           safe + ")") +
                         " — " + run.missing_hint);
  }
  return c;
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

}  // namespace

std::string ShortDuration(std::chrono::milliseconds d) {
  if (d < std::chrono::seconds(1)) return std::to_string(d.count()) + "ms";
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return s % 60 == 0 && s > 0 ? std::to_string(s / 60) + "m" : std::to_string(s) + "s";
}

namespace {

/// Forks argv with stdin from /dev/null, stdout on `out_fd` and stderr on
/// `err_fd`, in a process group of its own (so a timeout can stop npm and
/// anything it started).
Result<pid_t> SpawnTool(const std::vector<std::string>& argv, int out_fd, int err_fd, HostCommand& cmd,
                        const std::vector<int>& pass_fds) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: execve's signature
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : cmd.env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork for", argv[0]);
  if (pid == 0) {
    // npm must not outlive mcpcell: a client that kills us mid-install would
    // otherwise leave npm running, holding its stderr open (prctl(2)).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(out_fd, 1) < 0) ::_exit(127);
    if (err_fd != 2 && ::dup2(err_fd, 2) < 0) ::_exit(127);
    if (::chdir(kHostToolCwd) != 0) ::_exit(127);
    for (int fd : pass_fds) {
      if (::fcntl(fd, F_SETFD, 0) != 0) ::_exit(127);
    }
    // What the tools make in mcpcell's caches is run later as the package:
    // nothing there writable by the group or others, whatever the caller's
    // umask (cache_entry_owner.h refuses such an entry on the way to the program).
    ::umask(022);
    ::signal(SIGPIPE, SIG_DFL);  // ignored by mcpcell (main.cc), not by npm or pip
    ::execve(cmd.exe.c_str(), args.data(), envp.data());
    std::fprintf(stderr, "mcpcell: cannot run %s: %s\n", cmd.exe.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  return pid;
}

/// Whether `pid` has exited, leaving it to be reaped (waitid(2) WNOWAIT).
bool Exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

/// Appends what one read(2) of `rd` gives to `out`; false at EOF or on an
/// error (EAGAIN included: the caller drains a non-blocking pipe with it).
bool ReadSome(int rd, std::string* out) {
  char buf[4096];
  ssize_t r = ::read(rd, buf, sizeof buf);
  if (r > 0) out->append(buf, static_cast<std::size_t>(r));
  return r > 0 || (r < 0 && errno == EINTR);
}

/// What the tool prints that passes through us: its captured stdout, and
/// its output to be echoed with strings masked. fd -1: not piped.
struct ToolOutput {
  int rd = -1;
  std::string* out = nullptr;
  int echo_rd = -1;
  MaskedEcho* echo = nullptr;
};

/// Reads what one of `fds` (POLLIN or POLLHUP) offers; marks it -1 at its end.
void ReadReady(pollfd* fds, ToolOutput* o) {
  if (fds[1].fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0 && !ReadSome(o->rd, o->out)) fds[1].fd = -1;
  if (fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP)) != 0) {
    std::string got;
    if (!ReadSome(o->echo_rd, &got)) fds[2].fd = -1;
    o->echo->Add(got);
  }
}

/// The rest of what it printed, without waiting: something it started may
/// still hold the pipes open.
void DrainOutput(pollfd* fds, ToolOutput* o) {
  for (int i : {1, 2}) {
    if (fds[i].fd < 0) continue;
    ::fcntl(fds[i].fd, F_SETFL, ::fcntl(fds[i].fd, F_GETFL) | O_NONBLOCK);
    std::string got;
    while (ReadSome(fds[i].fd, i == 1 ? o->out : &got)) {
    }
    if (i == 2) o->echo->Add(got);
  }
  if (o->echo != nullptr) o->echo->Flush();
}

enum class ToolEnd { kExited, kTimeLimit, kDiskBudget };

/// Waits for `pid` (its pidfd), reading its output (ToolOutput) meanwhile,
/// for at most `limit` and while `disk` (may be null) holds; says every 30 s
/// that it is still waiting, because an MCP client shows nothing while we
/// install.
ToolEnd AwaitTool(pid_t pid, ToolOutput o, std::chrono::milliseconds limit, const std::string& what,
                  DiskBudget* disk, const std::string& disk_dir) {
  using Clock = std::chrono::steady_clock;
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const auto start = Clock::now();
  auto next_note = start + std::chrono::seconds(30);
  // Without a pidfd (kernel < 5.3) poll only the pipes, briefly, and ask waitid.
  pollfd fds[3] = {{pidfd ? pidfd.get() : -1, POLLIN, 0}, {o.rd, POLLIN, 0}, {o.echo_rd, POLLIN, 0}};
  for (;;) {
    auto now = Clock::now();
    if (now >= start + limit) return ToolEnd::kTimeLimit;
    if (disk != nullptr && disk->Over(disk_dir)) return ToolEnd::kDiskBudget;
    if (now >= next_note) {
      auto so_far = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
      Say("still " + what + " (" + ShortDuration(so_far) + " so far, limit " + ShortDuration(limit) +
          ": --install-timeout)");
      next_note += std::chrono::seconds(30);
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(start + limit, next_note) - now);
    if (disk != nullptr) wait = std::min(wait, std::chrono::milliseconds(100));
    int n = ::poll(fds, 3, pidfd ? static_cast<int>(wait.count()) : 100);
    if (n < 0 && errno != EINTR) {
      DrainOutput(fds, &o);
      return ToolEnd::kExited;  // cannot wait with a limit: let waitpid decide
    }
    if (n > 0) ReadReady(fds, &o);
    if (pidfd ? (fds[0].revents & POLLIN) != 0 : Exited(pid)) {
      DrainOutput(fds, &o);
      return ToolEnd::kExited;
    }
  }
}

}  // namespace

Result<std::string> RunHostTool(const HostToolRun& run) {
  const auto& argv = run.argv;
  if (argv.empty() || argv[0].empty()) return MakeError("run a host tool", "", "no program named");
  auto cmd = PrepareHostCommand(run);
  if (!cmd) return cmd.error();
  int pipefd[2] = {-1, -1}, echofd[2] = {-1, -1};
  if (run.capture && ::pipe2(pipefd, O_CLOEXEC) != 0) return ErrnoError("pipe for", argv[0]);
  UniqueFd rd(pipefd[0]), wr(pipefd[1]);
  if (!run.masked.empty() && ::pipe2(echofd, O_CLOEXEC) != 0) return ErrnoError("pipe for", argv[0]);
  UniqueFd echo_rd(echofd[0]), echo_wr(echofd[1]);
  int err_fd = echo_wr ? echo_wr.get() : 2;
  std::optional<DiskBudget> disk;
  if (!run.disk.dir.empty()) {
    auto budget = DiskBudget::Start(run.disk.dir, run.disk.bytes, run.disk.inodes);
    if (!budget.ok()) return budget.error();
    disk = std::move(*budget);
  }
  auto pid = SpawnTool(argv, run.capture ? wr.get() : err_fd, err_fd, *cmd, run.pass_fds);
  if (!pid.ok()) return pid.error();
  wr.reset();
  echo_wr.reset();
  std::string out;
  MaskedEcho echo(2, run.masked);
  ToolEnd end = AwaitTool(*pid, {rd.get(), &out, echo_rd.get(), echo_rd ? &echo : nullptr}, run.limit, run.what,
                          disk ? &*disk : nullptr, run.disk.dir);
  bool finished = end == ToolEnd::kExited;
  if (!finished) {
    ::kill(-*pid, SIGKILL);  // the tool and whatever it started (its own process group)...
    ::kill(*pid, SIGKILL);   // ...and the tool itself, should the limit pass before its setpgid
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("wait for", argv[0]);
  }
  if (end == ToolEnd::kDiskBudget) {
    return MakeError("run", MaskedEcho::Masked(CommandLine(argv), run.masked),
                     "it took more than " + std::to_string(run.disk.bytes >> 20) + " MiB or " +
                         std::to_string(run.disk.inodes) + " files of the disk holding " + run.disk.dir +
                         " (counted for the whole disk: other writers to it count too) and was stopped: what a "
                         "registry serves may unpack to any size (a 1 MiB tarball to gigabytes), and the host's disk "
                         "is not its to fill. Run such a server from a docker:// image");
  }
  if (!finished) {
    return MakeError("run", MaskedEcho::Masked(CommandLine(argv), run.masked),
                     "did not finish within " + ShortDuration(run.limit) + " and was stopped: " + run.timeout_hint +
                         " Allow longer with --install-timeout, e.g. " + ShortDuration(run.limit * 2));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError("run", MaskedEcho::Masked(CommandLine(argv), run.masked),
                     WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status)) + " (its messages are above)"
                                       : "killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return out;
}

}  // namespace mcpcell
