#include "cell/script_cell.h"

#include <algorithm>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <optional>
#include <mutex>
#include <condition_variable>
#include <thread>

#include "cell/native/native_cell.h"
#include "cell/native/stdio_relay.h"
#include "cell/cell_network.h"
#include "cell/script_network.h"
#include "cell/spec_builder.h"
#include "core/exit_codes.h"
#include "source/host_run.h"
#include "source/host_tool.h"
#include "source/npm_user_agent.h"
#include "source/registry_url.h"
#include "util/diag.h"
#include "util/fs_usage.h"
#include "util/lstat_kind.h"
#include "util/terminal_text.h"
#include "util/unique_fd.h"
#include "util/write_all.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

/// Memory for a compile: g++ on an amalgamation (sqlite3.c) needs more than
/// a server's default; a default, so a machine without the cgroup only warns.
constexpr std::uint64_t kScriptMemoryBytes = 2ULL << 30;
constexpr std::uint64_t kScriptFileBytes = 1ULL << 30;  // RLIMIT_FSIZE of a script cell
/// How many of the last lines a failure shows.
constexpr std::size_t kTailLines = 15;

std::string Real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

/// The package directory must be where its name says, below the install's
/// node_modules, with no symlink on the way: an earlier package's script
/// could otherwise have left a link that makes this cell's one writable
/// bind a directory of the host.
Status CheckBelow(const ScriptRun& run, const std::string& dir, const std::string& root) {
  std::string real_root = Real(root);
  std::string prefix = root + "/node_modules/";
  std::string real = Real(dir);
  if (real_root.empty() || dir.rfind(prefix, 0) != 0 || dir.find("/../") != std::string::npos ||
      real != real_root + dir.substr(root.size())) {
    return MakeError("run the install scripts of", run.package,
                     VisibleOnTerminal(dir) + " is not a plain directory below " + VisibleOnTerminal(prefix) +
                         " (resolves to \"" + VisibleOnTerminal(real) + "\"): refusing to make it writable");
  }
  return {};
}

Status CheckPackageDir(const ScriptRun& run) {
  MCPCELL_TRY(CheckBelow(run, run.package_dir, run.install_dir));
  // A bundled package lies inside its bundler's own node_modules, and so
  // does a package npm placed below a bundled one.
  for (const auto& dir : run.bundled) MCPCELL_TRY(CheckBelow(run, dir, run.package_dir));
  for (const auto& dir : run.read_only) MCPCELL_TRY(CheckBelow(run, dir, run.package_dir));
  return {};
}

/// The parts of the host's npm the scripts use (npm's run-script puts its
/// node-gyp wrapper on their PATH, the wrapper runs npm's node-gyp), found
/// where the cell finds programs (kCellPath: system mounts it sees too).
/// Empty when npm is not there: a script then finds node-gyp on PATH, if at all.
struct NpmParts {
  std::string execpath;      ///< .../npm/bin/npm-cli.js
  std::string node_gyp_bin;  ///< .../@npmcli/run-script/lib/node-gyp-bin
  std::string node_gyp;      ///< .../node-gyp/bin/node-gyp.js
};

NpmParts FindNpmParts() {
  std::string cli = Real(FindHostTool("npm", kCellPath));
  fs::path root = fs::path(cli).parent_path().parent_path();
  NpmParts parts{cli, (root / "node_modules/@npmcli/run-script/lib/node-gyp-bin").string(),
                 (root / "node_modules/node-gyp/bin/node-gyp.js").string()};
  if (cli.empty() || !fs::path(cli).filename().string().starts_with("npm-cli") ||
      !IsRealFile(parts.node_gyp_bin + "/node-gyp") || !IsRealFile(parts.node_gyp)) {
    return {};
  }
  return parts;
}

/// What npm's run-script gives every lifecycle script besides its own
/// npm_lifecycle_* and npm_package_* (source/lifecycle.h; set-path.js,
/// make-spawn-args.js, @npmcli/config's set-envs.js; npm_config_user_agent,
/// source/npm_user_agent.h): PATH = the commands
/// of the package's dependencies (the one view script_bins.h shows in
/// every node_modules/.bin on npm's chain; the chain itself is left off,
/// so a .bin an earlier script made after the plan is on no PATH), npm's
/// node-gyp wrapper, the system's.
void AddLifecycleEnv(CellSpec* spec, const ScriptRun& run) {
  std::string path = run.bin_view.empty() ? "" : run.bin_view + "/bin:";
  const NpmParts npm = FindNpmParts();
  if (!npm.node_gyp_bin.empty()) {
    path += npm.node_gyp_bin + ":";
    spec->env["npm_config_node_gyp"] = npm.node_gyp;
    spec->env["npm_execpath"] = npm.execpath;
  }
  spec->env["PATH"] = path + kCellPath;
  const std::string node = FindHostTool("node", kCellPath);
  if (!node.empty()) spec->env["NODE"] = spec->env["npm_node_execpath"] = node;
  if (!npm.execpath.empty()) {
    std::string agent = NpmUserAgent(fs::path(npm.execpath).parent_path().parent_path().string(), node);
    if (!agent.empty()) spec->env["npm_config_user_agent"] = agent;
  }
  spec->env["INIT_CWD"] = spec->env["npm_config_local_prefix"] = run.install_dir;
  spec->env["npm_command"] = "install";
}

/// npm's settings for the scripts: Node's headers from the host's /usr
/// (node-gyp downloads none), no config of the host's (the global npmrc may
/// hold a registry token; HOME is the cell's empty tmpfs).
void AddNpmEnv(CellSpec* spec) {
  spec->env["npm_config_nodedir"] = "/usr";
  spec->env["npm_config_globalconfig"] = spec->home + "/.npmrc-global";
  spec->env["npm_config_userconfig"] = spec->home + "/.npmrc";
  spec->env["npm_config_cache"] = spec->home + "/.npm";
  spec->env["npm_config_update_notifier"] = "false";
  spec->env["npm_config_audit"] = "false";
  spec->env["npm_config_fund"] = "false";
  // No debug log: it would be written to the cell's tmpfs HOME, gone when
  // npm's error names it.
  spec->env["npm_config_logs_max"] = "0";
  // A browser downloaded into the cell's HOME would vanish with the cell
  // (a tmpfs) and there is no network to fetch it: the downloaders of
  // puppeteer and playwright are told not to try rather than fail the
  // install (the browser servers use Debian's Chromium: docs/COMPAT.md).
  spec->env["PUPPETEER_SKIP_DOWNLOAD"] = "1";
  spec->env["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1";
}

/// npm's config for the cell (source/script_npm.h): the npmrc written for
/// it (in the install directory, already bound read-only) as its
/// userconfig, and the CA file written for it (the host cafile's
/// certificates and every inline `ca`) bound read-only where that npmrc
/// says, also for Node itself (a script's own https request to the
/// registry: node-gyp, prebuild-install).
Status AddNpmConfig(CellSpec* spec, const ScriptNpm& npm, std::vector<std::string>* notes) {
  if (!npm.npmrc.empty()) spec->env["npm_config_userconfig"] = npm.npmrc;
  if (npm.cafile.empty()) return {};
  auto refuse = [&npm](const std::string& why) {
    return MakeError("bind npm's cafile into the install scripts' cell", VisibleOnTerminal(npm.cafile),
                     why + "; --install-scripts=skip installs without running them");
  };
  // npm resolves a relative cafile against its working directory ("/":
  // host_tool.h); the listing prints an absolute one.
  if (npm.cafile.front() != '/') return refuse("not an absolute path");
  // npm ignores a cafile that does not exist (ENOENT: maybeReadFile in its
  // config definitions) and uses its own CAs; so does the cell's npm, which
  // then finds none at kCellNpmCafile.
  struct stat st{};
  if (::stat(npm.cafile.c_str(), &st) != 0 && errno == ENOENT) return {};
  // A regular file, resolved: a directory there would bind a whole tree.
  if (::stat(npm.cafile.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return refuse("not a regular file");
  MCPCELL_TRY(AddUserBind(spec, npm.cafile + ":" + kCellNpmCafile, false, false, "npm's cafile (read-only)", notes));
  spec->env["NODE_EXTRA_CA_CERTS"] = kCellNpmCafile;
  return {};
}

/// Every node_modules/.bin shows only what the package depends on
/// (script_bins.h): the nearest one npm puts on the PATH shows the view's
/// links, the others nothing.
Status HideOtherPackagesBins(CellSpec* spec, const ScriptRun& run, std::vector<std::string>* notes) {
  if (run.bin_view.empty()) return {};
  std::string nearest;
  for (const std::string& candidate : {run.package_dir + "/node_modules/.bin", run.install_dir + "/node_modules/.bin"}) {
    if (std::find(run.bin_dirs.begin(), run.bin_dirs.end(), candidate) != run.bin_dirs.end()) {
      nearest = candidate;
      break;
    }
  }
  for (const auto& dir : run.bin_dirs) {
    std::string source = run.bin_view + (dir == nearest ? "/bin" : "/empty");
    MCPCELL_TRY(AddUserBind(spec, source + ":" + dir, false, false, "the commands of the package's dependencies", notes));
  }
  return {};
}

/// npm's lockfiles in the install directory record the URL of every
/// tarball it fetched (`resolved`): from a registry whose URL holds a token
/// (source/url_credential.h), with the token when the registry serves its
/// tarballs below it. Such a registry is given to no cell, and neither are
/// they: /dev/null over each (no script needs them; the plan read them).
void HideLockfiles(CellSpec* spec, const ScriptRun& run, std::vector<std::string>* notes) {
  if (!run.npm.hide_lockfiles) return;
  for (const char* rel : {"/package-lock.json", "/node_modules/.package-lock.json"}) {
    std::string path = run.install_dir + rel;
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;
    spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kBind, "/dev/null", path, false, false, 0, "masked"},
                                      MountSpec::Origin::kMasked));
    notes->push_back("masked " + path + " (it may record the registry's token in its tarball URLs)");
  }
}

}  // namespace

Result<CellSpec> ScriptCellSpec(const ScriptRun& run) {
  MCPCELL_TRY(CheckPackageDir(run));
  RunRequest req;
  req.no_auto_mount = true;  // npm, node, python3, make and g++ come from the system mounts
  std::vector<std::string> notes;
  auto spec = BuildCellSpec(req, run.argv, &notes);
  if (!spec.ok()) return spec.error();
  // The grants, named for what they are in any message about them (the
  // same checks and masks as --read and --write).
  MCPCELL_TRY(AddUserBind(&*spec, run.install_dir, false, false, "the install directory (read-only)", &notes));
  MCPCELL_TRY(AddUserBind(&*spec, run.package_dir, true, false, "the package directory its scripts write", &notes));
  // The package's own dependencies stay read-only: its script may build
  // its own files, not change another package's code.
  std::error_code ec;
  std::string nested = run.package_dir + "/node_modules";
  if (fs::is_directory(nested, ec) && !fs::is_symlink(nested, ec)) {
    MCPCELL_TRY(AddUserBind(&*spec, nested, false, false, "the package's own dependencies (read-only)", &notes));
  }
  // Except what its own tarball carries: those scripts run here (npm runs
  // them as part of this package's rebuild) and build their own files.
  for (const auto& dir : run.bundled) {
    MCPCELL_TRY(AddUserBind(&*spec, dir, true, false, "a package its tarball bundles", &notes));
  }
  // ...and what npm placed below those: another tarball's code.
  for (const auto& dir : run.read_only) {
    MCPCELL_TRY(AddUserBind(&*spec, dir, false, false, "a package npm placed below a bundled one (read-only)", &notes));
  }
  MCPCELL_TRY(HideOtherPackagesBins(&*spec, run, &notes));
  HideLockfiles(&*spec, run, &notes);
  spec->workdir = run.install_dir;
  spec->relay.on = false;  // not an MCP server: its stdout is not JSON-RPC
  spec->limits.memory_bytes = {kScriptMemoryBytes, false};
  // The package directory is a bind of the host's disk, which no tmpfs size
  // bounds: no file a script writes may pass kScriptFileBytes (adv9: one
  // fallocate put 2 GiB into the host's cache). Builds write a few MiB.
  spec->limits.file_bytes = kScriptFileBytes;
  // ...and the directory's growth is looked at while they run (Follow,
  // kScriptDiskBytes), which an instant allocation would outrun.
  spec->refuse_preallocation = true;
  AddNpmEnv(&*spec);
  AddLifecycleEnv(&*spec, run);
  MCPCELL_TRY(AddNpmConfig(&*spec, run.npm, &notes));
  // The registries the install used, nothing else (script_network.h); npm
  // in the cell is pointed at them, and reaches them through the egress proxy.
  NetworkSpec network;
  if (!run.npm.registries.empty()) {
    auto to_registries = RegistriesNetwork(run.npm.registries);
    if (!to_registries.ok()) return to_registries.error();
    network = std::move(*to_registries);
  }
  if (!run.npm.registry.empty()) spec->env["npm_config_registry"] = run.npm.registry;
  // --allow-host and profiles do not reach this cell: say what does.
  network.fixed_how_to_allow = ScriptNetworkAdvice(run.npm);
  ApplyCellNetwork(&*spec, std::move(network));
  return spec;
}

namespace {

/// What the cell printed: copied to our stderr as it comes (made safe for a
/// terminal) up to kShownBytes, the last lines kept. A client keeps mcpcell's
/// stderr as its log: a script flooding it for the whole --install-timeout
/// filled that log without bound (adv9); npm itself shows a script's output
/// only when it fails, which the tail still does. The budget is the
/// install's, shared by its cells (adv13: six packages printing 2 MiB each
/// put 6 MiB on stderr with a budget per cell).
class ScriptOutput {
 public:
  static constexpr std::size_t kShownBytes = 1 << 20;

  explicit ScriptOutput(std::size_t* shown) : shown_(*shown) {}

  void Add(std::string_view bytes) {
    if (shown_ < kShownBytes) {
      std::string_view part = bytes.substr(0, kShownBytes - shown_);
      (void)WriteAll(STDERR_FILENO, filter_.Filter(part));
      shown_ += part.size();
      if (shown_ == kShownBytes) {
        Say("the install scripts printed more than 1 MiB; the rest is not shown (their last lines are, if they fail)");
      }
    }
    for (char c : bytes) {
      if (c != '\n') {
        if (line_.size() < 400) line_ += c;
        continue;
      }
      tail_.push_back(std::move(line_));
      line_.clear();
      if (tail_.size() > kTailLines) tail_.pop_front();
    }
  }
  /// The last lines, each on its own indented line, with every control
  /// character shown (a CR would return over the indent and read as
  /// mcpcell's own words, adv9).
  std::string Tail() {
    if (!line_.empty()) tail_.push_back(line_);
    std::string out;
    for (const auto& l : tail_) out += "\n    | " + VisibleOnTerminal(l);
    return out.empty() ? " (it printed nothing)" : ":" + out;
  }

 private:
  std::size_t& shown_;  ///< bytes shown so far by every cell of this install
  TerminalFilter filter_;
  std::string line_;
  std::deque<std::string> tail_;
};

/// What stopped a script cell before its scripts ended.
enum class Stopped { kNo, kTimeLimit, kDiskBudget };

/// What the install's scripts may take of the disk holding the package
/// directory, all of their cells together (adv18: a budget per cell let three
/// packages take 2.1 GiB): the directory is a bind of the host's disk, which
/// no tmpfs size bounds, and RLIMIT_FSIZE bounds one file, not many (adv13:
/// three files of 1000 MiB). Builds write a few MiB; a prebuilt binary tens.
/// The inodes too: 340,000 symlinks were 1.3 GiB and no regular file (adv18).
constexpr std::uint64_t kScriptDiskBytes = 1ULL << 30;
constexpr std::uint64_t kScriptInodes = 250000;
constexpr auto kDiskCheckEvery = std::chrono::milliseconds(100);

/// Keeps the time limit and the disk budget on a thread of its own, looking
/// every kDiskCheckEvery (between two looks a script writes at the disk's
/// speed; fallocate and the ioctls that allocate, which are instant, are
/// refused in the cell), and stops the cell past either. Not the follower's
/// work: it writes the scripts' output to mcpcell's stderr, which a client
/// that does not read it blocks (adv19: 1.5 GiB written meanwhile).
class Watchdog {
 public:
  Watchdog(Cell& cell, const ScriptRun& run, DiskBudget* disk)
      : thread_([this, &cell, &run, disk] { Watch(cell, run, disk); }) {}
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() { End(); }
  /// Once the cell is gone: what stopped it, if this did.
  Stopped End() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return stopped_;
  }

 private:
  void Watch(Cell& cell, const ScriptRun& run, DiskBudget* disk) {
    const auto deadline = std::chrono::steady_clock::now() + run.limit;
    std::unique_lock lock(mu_);
    while (!done_) {
      if (std::chrono::steady_clock::now() >= deadline) {
        stopped_ = Stopped::kTimeLimit;
      } else if (disk->Over(run.package_dir)) {
        stopped_ = Stopped::kDiskBudget;
      }
      if (stopped_ != Stopped::kNo) {
        cell.Stop(std::chrono::milliseconds(0));  // SIGKILL to PID 1: the pid namespace dies whole
        return;
      }
      wake_.wait_for(lock, kDiskCheckEvery, [this] { return done_; });
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;
  Stopped stopped_ = Stopped::kNo;  ///< written by the thread, read after its join
  std::thread thread_;              ///< last: started once the rest exists
};

/// Reads the cell's output until every process of the cell is gone (EOF),
/// and says every 30 s that it is still running. Runs beside Cell::Wait.
void Follow(int rd, const ScriptRun& run, ScriptOutput* out) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto next_note = start + std::chrono::seconds(30);
  for (;;) {
    auto now = Clock::now();
    if (now >= next_note) {
      auto so_far = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
      Say("still running the install scripts of " + run.package + " (" + ShortDuration(so_far) + " so far, limit " +
          ShortDuration(run.limit) + ": --install-timeout)");
      next_note += std::chrono::seconds(30);
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_note - now).count();
    pollfd p{rd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::max<long long>(wait, 1)));
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    char buf[4096];
    ssize_t r = ::read(rd, buf, sizeof buf);
    if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) return;
    if (r > 0) out->Add(std::string_view(buf, static_cast<std::size_t>(r)));
  }
}

/// "no network", or "only the npm registry X", and what it did not reach.
std::string Reached(const ScriptNpm& npm) {
  std::string reached = RegistriesReached(npm);
  std::string out = reached.empty() ? std::string("no network") : "only " + reached;
  if (!npm.unreached.empty()) out += ", not " + VisibleOnTerminal(npm.unreached);
  return out;
}

Error NoCellHere(const ScriptRun& run, const std::string& why) {
  return MakeError("run the install scripts of", run.package,
                   "they run only in a native cell, and none can be made here (" + why +
                       "); they never run on the host. To install without them, add --install-scripts=skip (a "
                       "native module among them will then not load), or run the server from a docker:// image; "
                       "'mcpcell doctor' says what this machine lacks");
}

Error NoCell(const ScriptRun& run, const CellResult& failure) {
  std::string why = failure.error ? failure.error->Message() : "exit " + std::to_string(failure.exit_code);
  if (failure.exit_code == kExitIsolationUnavailable) return NoCellHere(run, why);
  return MakeError("run the install scripts of", run.package, "their cell could not be set up: " + why);
}

/// Whether this process may make a user namespace, asked in a child that
/// does nothing else (unshare(2)): without one there is no native cell, and
/// the cell's own setup would fail later with a message about something
/// else (an idmap, a directory the cell's id cannot write).
Status CanMakeUserNamespace() {
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork to test for user namespaces");
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("wait for the user namespace test");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  Error e = MakeError("unshare(CLONE_NEWUSER)");
  e.err = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  e.detail = "user namespaces are off or used up (sysctl user.max_user_namespaces, "
             "kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns)";
  return e;
}

class NativeScriptCell final : public ScriptCell {
 public:
  Status Run(const ScriptRun& run) override {
    if (auto userns = CanMakeUserNamespace(); !userns.ok()) return NoCellHere(run, userns.error().Message());
    auto spec = ScriptCellSpec(run);
    if (!spec.ok()) return spec.error();
    if (!disk_) {
      auto budget = DiskBudget::Start(run.package_dir, kScriptDiskBytes, kScriptInodes);
      if (!budget.ok()) return MakeError("run the install scripts of", run.package, budget.error().Message());
      disk_ = std::move(*budget);
    }
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return ErrnoError("pipe for the install scripts of", run.package);
    UniqueFd rd(p[0]), wr(p[1]);
    UniqueFd in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    UniqueFd err(::fcntl(wr.get(), F_DUPFD_CLOEXEC, 0));
    if (!in || !err) return ErrnoError("open the stdio of the install scripts of", run.package);
    auto stdio = StdioRelay::Given({std::move(in), std::move(wr), std::move(err)});
    if (!stdio.ok()) return stdio.error();
    RunContext ctx{"install scripts of " + run.package, nullptr};
    LaunchCallback on_launch;
    StartedCell started = StartNativeCell(*spec, ctx, *stdio, on_launch);
    if (!started.ok()) return NoCell(run, started.failure);
    // The supervisor's loop runs in Wait(); the output is followed (and the
    // limit kept, through Cell::Stop, which is safe from another thread)
    // beside it, until the last process of the cell is gone (EOF).
    ScriptOutput out(&shown_);
    Watchdog watchdog(*started.cell, run, &*disk_);
    std::thread follower([&] { Follow(rd.get(), run, &out); });
    CellResult r = started.cell->Wait();
    follower.join();
    Stopped stopped = watchdog.End();
    started.cell.reset();
    stdio->Finish();
    if (stopped == Stopped::kDiskBudget) {
      return MakeError("run the install scripts of", run.package,
                       "the disk holding " + VisibleOnTerminal(run.package_dir) + " took more than " +
                           std::to_string(kScriptDiskBytes >> 20) + " MiB or " + std::to_string(kScriptInodes) +
                           " files above its lowest use since this install's scripts began (counted for the whole "
                           "disk: other writers to it count too), and their cell was stopped (the host's disk is not theirs to fill); "
                           "--install-scripts=skip installs without running them. Their last lines" + out.Tail());
    }
    if (stopped == Stopped::kTimeLimit) {
      return MakeError("run the install scripts of", run.package,
                       "they did not finish within " + ShortDuration(run.limit) +
                           " and their cell was stopped; allow longer with --install-timeout, e.g. " +
                           ShortDuration(run.limit * 2) + ". Their last lines" + out.Tail());
    }
    if (r.error) return NoCell(run, r);
    if (r.exit_code != 0) {
      return MakeError("run the install scripts of", run.package,
                       "they failed in their cell (a script exited with status " + std::to_string(r.exit_code) +
                           "; the cell could write " + VisibleOnTerminal(run.package_dir) +
                           (run.bundled.empty() ? "" : " and the packages it bundles") + " only, and reached " +
                           Reached(run.npm) +
                           "). Their last lines" + out.Tail() + "\n  --install-scripts=skip installs without running them");
    }
    return {};
  }

 private:
  std::size_t shown_ = 0;  ///< what every cell of this install printed to stderr (ScriptOutput)
  /// From this install's first script cell on: one budget for all of them
  /// (util/fs_usage.h: above the lowest use seen).
  std::optional<DiskBudget> disk_;
};

}  // namespace

std::unique_ptr<ScriptCell> MakeNativeScriptCell() { return std::make_unique<NativeScriptCell>(); }

}  // namespace mcpcell
