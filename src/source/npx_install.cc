#include "source/npx_install.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/host_tool.h"
#include "util/diag.h"
#include "util/json_input.h"
#include "util/unique_fd.h"

extern char** environ;

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

/// What a host tool is started with, all of it made before fork.
struct HostCommand {
  std::string exe;
  std::vector<std::string> env;
};

Result<HostCommand> PrepareHostCommand(const std::string& name, const std::vector<std::string>& cell_writable) {
  const char* path = std::getenv("PATH");
  std::string safe = HostToolPath(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", cell_writable);
  HostCommand c{FindHostTool(name, safe), HostToolEnvironment(environ, safe)};
  if (c.exe.empty()) {
    return MakeError("find " + name + " on the host", "",
                     "not on PATH (relative entries and directories the cell may write are skipped: " + safe +
                         ") — npx:// sources need npm on the host PATH (Debian: apt-get install npm)");
  }
  return c;
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return cmd;
}

/// "5m", "90s": how the user would write the limit back on the command line.
std::string ShortDuration(std::chrono::milliseconds d) {
  if (d < std::chrono::seconds(1)) return std::to_string(d.count()) + "ms";
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return s % 60 == 0 && s > 0 ? std::to_string(s / 60) + "m" : std::to_string(s) + "s";
}

/// Forks argv with stdin from /dev/null and stdout on `out_fd`, in a process
/// group of its own (so a timeout can stop npm and anything it started).
Result<pid_t> SpawnTool(const std::vector<std::string>& argv, int out_fd, HostCommand& cmd) {
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
    if (::chdir(kHostToolCwd) != 0) ::_exit(127);
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

/// Waits for `pid` (its pidfd), reading `rd` (if open) into `out` meanwhile,
/// for at most `limit`; says every 30 s that it is still waiting, because an
/// MCP client shows nothing while we install. false = the limit passed.
bool AwaitTool(pid_t pid, int rd, std::string* out, std::chrono::milliseconds limit, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const auto start = Clock::now();
  auto next_note = start + std::chrono::seconds(30);
  bool reading = rd >= 0;
  for (;;) {
    auto now = Clock::now();
    if (now >= start + limit) return false;
    if (now >= next_note) {
      auto so_far = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
      Say("still " + what + " (" + ShortDuration(so_far) + " so far, limit " + ShortDuration(limit) +
          ": --install-timeout)");
      next_note += std::chrono::seconds(30);
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(start + limit, next_note) - now);
    // Without a pidfd (kernel < 5.3) poll only the pipe, briefly, and ask waitid.
    pollfd fds[2] = {{pidfd ? pidfd.get() : -1, POLLIN, 0}, {reading ? rd : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, pidfd ? static_cast<int>(wait.count()) : 100);
    if (n < 0 && errno != EINTR) return true;  // cannot wait with a limit: let waitpid decide
    if (reading && (fds[1].revents & (POLLIN | POLLHUP)) != 0) reading = ReadSome(rd, out);
    if (pidfd ? (fds[0].revents & POLLIN) != 0 : Exited(pid)) {
      // The rest of what it printed, without waiting: something it started
      // may still hold the pipe open.
      if (reading) ::fcntl(rd, F_SETFL, ::fcntl(rd, F_GETFL) | O_NONBLOCK);
      while (reading) reading = ReadSome(rd, out);
      return true;
    }
  }
}

/// Runs argv with stdin from /dev/null; stdout captured (capture=true) or
/// sent to our stderr, because mcpcell's stdout belongs to JSON-RPC. After
/// `limit` it is killed (with everything in its process group) and the
/// error says so and how to allow longer.
Result<std::string> RunTool(const std::vector<std::string>& argv, bool capture, std::chrono::milliseconds limit,
                            const std::string& what, const std::vector<std::string>& cell_writable) {
  auto cmd = PrepareHostCommand(argv[0], cell_writable);
  if (!cmd) return cmd.error();
  int pipefd[2] = {-1, -1};
  if (capture && ::pipe2(pipefd, O_CLOEXEC) != 0) return ErrnoError("pipe for", argv[0]);
  UniqueFd rd(pipefd[0]), wr(pipefd[1]);
  auto pid = SpawnTool(argv, capture ? wr.get() : 2, *cmd);
  if (!pid.ok()) return pid.error();
  wr.reset();
  std::string out;
  bool finished = AwaitTool(*pid, capture ? rd.get() : -1, &out, limit, what);
  if (!finished) {
    ::kill(-*pid, SIGKILL);  // npm and whatever it started (its own process group)...
    ::kill(*pid, SIGKILL);   // ...and npm itself, should the limit pass before its setpgid
  }
  int status = 0;
  while (::waitpid(*pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("wait for", argv[0]);
  }
  if (!finished) {
    return MakeError("run", CommandLine(argv),
                     "did not finish within " + ShortDuration(limit) + " and was stopped: is the npm registry "
                     "reachable (npm config get registry)? Allow longer with --install-timeout, e.g. " +
                     ShortDuration(limit * 2));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return MakeError("run", CommandLine(argv),
                     WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status)) + " (its messages are above)"
                                       : "killed by signal " + std::to_string(WTERMSIG(status)));
  }
  return out;
}

/// The supervisor pid in an install directory's name (".install-<pid>-XXXXXX"), 0 if none.
pid_t InstallOwner(const std::string& name) {
  constexpr std::string_view kPrefix = ".install-";
  std::size_t dash = name.find('-', kPrefix.size());
  if (name.rfind(kPrefix, 0) != 0 || dash == std::string::npos) return 0;
  pid_t pid = 0;
  for (std::size_t i = kPrefix.size(); i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100000000) return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

class NpmTool : public PackageTool {
 public:
  explicit NpmTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit)
      : cell_writable_(std::move(cell_writable)), limit_(limit) {}

  Result<std::string> ResolveVersion(const std::string& package, const std::string& spec) override {
    std::string what = spec.empty() ? package : package + "@" + spec;
    auto out = RunTool({"npm", "view", what, "version", "--json"}, true, limit_, "resolving " + what + " with npm",
                       cell_writable_);
    if (!out.ok()) return out.error();
    nlohmann::json j = nlohmann::json::parse(*out, nullptr, false);
    if (j.is_array() && !j.empty()) j = j.back();  // a range lists every match; the last is highest
    if (!j.is_string()) {
      return MakeError("resolve npm version", what, "npm view printed no version: is the name right?");
    }
    return j.get<std::string>();
  }
  Status Install(const std::string& package, const std::string& version, const std::string& prefix) override {
    auto global = GlobalConfig();
    if (!global.ok()) return global.error();
    // --loglevel=http: one line per registry request on stderr, so the user
    // (and a client's log) sees the install moving rather than a silent minute.
    std::vector<std::string> argv = {"npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                                     "--ignore-scripts", "--omit=dev", "--loglevel=http"};
    if (!global->empty()) argv.push_back("--globalconfig=" + *global);
    argv.push_back(package + "@" + version);
    auto out = RunTool(argv, false, limit_, "installing " + package + "@" + version + " with npm", cell_writable_);
    if (!out.ok()) return out.error();
    return {};
  }

 private:
  /// The global npmrc npm reads when no --prefix is given (issue 14.1):
  /// npm derives it from its *global* prefix (${prefix}/etc/npmrc), and
  /// `--prefix DIR` sets that prefix too, so `npm install --prefix DIR` would
  /// read DIR/etc/npmrc and drop the machine's registry, proxy and cafile
  /// (npm's config docs: "globalconfig: Default: The global --prefix setting
  /// plus 'etc/npmrc'"). Asking npm itself keeps every way the user sets it
  /// (NPM_CONFIG_GLOBALCONFIG, NPM_CONFIG_PREFIX, ~/.npmrc's prefix, the
  /// distribution's builtin config). "" when npm names none.
  Result<std::string> GlobalConfig() {
    auto out = RunTool({"npm", "config", "get", "globalconfig"}, true, limit_, "asking npm for its global config",
                       cell_writable_);
    if (!out.ok()) return out.error();
    std::string path = *out;
    while (!path.empty() && (path.back() == '\n' || path.back() == '\r' || path.back() == ' ')) path.pop_back();
    if (path.empty() || path == "undefined") return std::string();
    if (path[0] != '/' || path.find('\n') != std::string::npos) {
      return MakeError("find npm's global config", path, "npm config get globalconfig printed no absolute path");
    }
    return path;
  }

  std::vector<std::string> cell_writable_;
  std::chrono::milliseconds limit_;
};

std::string CacheName(const std::string& package, const std::string& version) {
  std::string name = package;
  for (char& c : name) {
    if (c == '/') c = '+';
  }
  return name + "@" + version;
}

}  // namespace

int RemoveAbandonedInstalls(const std::string& cache_root, int* checked) {
  std::error_code ec;
  int removed = 0;
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(cache_root, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(".install-", 0) != 0) continue;
    if (checked != nullptr) ++*checked;
    pid_t owner = InstallOwner(name);
    // kill(pid, 0) (kill(2)): ESRCH = no such process, so its install is over.
    bool owner_dead = owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH;
    std::error_code time_ec;
    auto mtime = fs::last_write_time(e.path(), time_ec);
    bool stale = !time_ec && now - mtime > std::chrono::hours(1);
    if ((owner_dead || stale) && fs::remove_all(e.path(), ec) > 0) ++removed;
  }
  return removed;
}

std::unique_ptr<PackageTool> MakeNpmTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit) {
  return std::make_unique<NpmTool>(std::move(cell_writable), limit);
}

Result<std::string> NpxCacheRoot() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/mcpcell/npx";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') {
    return MakeError("find the package cache", "", "neither XDG_CACHE_HOME nor HOME is an absolute path");
  }
  return std::string(home) + "/.cache/mcpcell/npx";
}

Result<std::string> PackageBin(const std::string& package_dir, const std::string& package) {
  std::string manifest = package_dir + "/package.json";
  auto text = ReadTextFile(manifest, "read package manifest");
  if (!text.ok()) return text.error();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  std::string rel;
  if (j.is_object() && j.contains("bin")) {
    const auto& bin = j["bin"];
    std::string unscoped = package.substr(package.find('/') == std::string::npos ? 0 : package.find('/') + 1);
    if (bin.is_string()) rel = bin.get<std::string>();
    else if (bin.is_object() && bin.size() == 1 && bin.begin()->is_string()) rel = bin.begin()->get<std::string>();
    else if (bin.is_object() && bin.contains(unscoped) && bin[unscoped].is_string()) rel = bin[unscoped].get<std::string>();
  }
  if (rel.empty()) {
    return MakeError("find the program of", package,
                     "package.json has no single \"bin\" entry to run; run it as a command after -- instead");
  }
  fs::path full = (fs::path(package_dir) / rel).lexically_normal();
  // The bin must stay inside the package: a manifest cannot point us elsewhere.
  std::string dir = fs::path(package_dir).lexically_normal().string();
  if (full.string().rfind(dir + "/", 0) != 0) {
    return MakeError("find the program of", package, "its \"bin\" points outside the package: " + rel);
  }
  return full.string();
}

Result<InstalledPackage> EnsureNpxPackage(const ServerRef& ref, PackageTool& tool,
                                          const std::string& cache_root, bool may_install) {
  InstalledPackage out;
  if (IsExactVersion(ref.version)) {
    out.version = ref.version;
  } else {
    auto v = tool.ResolveVersion(ref.package, ref.version);
    if (!v.ok()) return v.error();
    out.version = *v;
  }
  // The version names a directory: only an exact version may (no "../").
  if (!IsExactVersion(out.version) || out.version.find('/') != std::string::npos) {
    return MakeError("resolve npm version", ref.package, "npm answered \"" + out.version + "\", not an exact version");
  }
  out.cache_dir = cache_root + "/" + CacheName(ref.package, out.version);
  out.package_dir = out.cache_dir + "/node_modules/" + ref.package;
  std::error_code ec;
  if (!fs::exists(out.package_dir + "/package.json", ec)) {
    if (!may_install) {
      out.bin_path = out.package_dir + "/<bin from package.json>";
      return out;
    }
    fs::create_directories(cache_root, ec);
    if (ec) return MakeError("create package cache", cache_root, ec.message());
    RemoveAbandonedInstalls(cache_root);
    // The owner's pid in the name: `mcpcell gc` and the next install remove
    // the directory as soon as that mcpcell is gone (e.g. kill -9 mid-install).
    std::string tmpl = cache_root + "/.install-" + std::to_string(::getpid()) + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("create install directory in", cache_root);
    // mkdtemp makes 0700; the cell's user must be able to read the package.
    fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec, ec);
    Say("installing " + ref.package + "@" + out.version + " outside the cell into " + out.cache_dir +
        " (npm --ignore-scripts)");
    Status st = tool.Install(ref.package, out.version, tmpl);
    if (!st.ok()) {
      fs::remove_all(tmpl, ec);
      return st.error();
    }
    // Atomic publish: a half-finished install is never seen under the final name.
    if (::rename(tmpl.c_str(), out.cache_dir.c_str()) != 0) {
      int e = errno;
      fs::remove_all(tmpl, ec);
      if (e != EEXIST && e != ENOTEMPTY) {
        errno = e;
        return ErrnoError("publish installed package", out.cache_dir);
      }
      // Another mcpcell installed the same version first: use theirs.
    }
    out.installed_now = true;
  }
  auto bin = PackageBin(out.package_dir, ref.package);
  if (!bin.ok()) return bin.error();
  out.bin_path = *bin;
  out.present = true;
  return out;
}

}  // namespace mcpcell
