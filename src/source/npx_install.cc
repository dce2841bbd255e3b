#include "source/npx_install.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "source/cache_entry_owner.h"
#include "source/host_run.h"
#include "source/install_scopes.h"
#include "source/install_origin.h"
#include "source/npx_cache.h"
#include "source/public_sources.h"
#include "source/registry_url.h"
#include "source/url_credential.h"
#include "source/host_tool.h"
#include "source/npm_config.h"
#include "source/lockfile_scrub.h"
#include "source/npmrc_snapshot.h"
#include "util/process_environment.h"
#include "util/diag.h"
#include "util/remove_tree.h"
#include "util/terminal_text.h"
#include "util/json_input.h"
#include "util/sealed_memfd.h"
#include "util/unique_fd.h"
#include "util/work_dir_lock.h"
#include "util/write_all.h"

extern char** environ;

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

/// The directories a launch leaves in the cache root while it works, named
/// with its pid: an install (".install-<pid>-XXXXXX") and npm's config
/// copies and cache (".npmrc-<pid>-XXXXXX", npmrc_snapshot.h).
constexpr std::string_view kWorkDirs[] = {".install-", ".npmrc-"};

/// The supervisor pid in a work directory's name, 0 if none.
pid_t InstallOwner(const std::string& name) {
  std::string_view prefix;
  for (std::string_view p : kWorkDirs) {
    if (name.rfind(p, 0) == 0) prefix = p;
  }
  std::size_t dash = prefix.empty() ? std::string::npos : name.find('-', prefix.size());
  if (dash == std::string::npos) return 0;
  const std::size_t kPrefixSize = prefix.size();
  pid_t pid = 0;
  for (std::size_t i = kPrefixSize; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100000000) return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

constexpr const char* kNpmTimeoutHint = "is the npm registry reachable (npm config get registry)?";
constexpr const char* kNpmMissingHint = "npx:// sources need npm on the host PATH (Debian: apt-get install npm)";

/// Whether the default registry or a scope's names a token in its URL
/// (by shape; the relay's rules are not linked here).
bool AnyRegistryHoldsToken(const NpmConfig& config) {
  auto holds = [](const std::string& url) {
    auto normal = NormalizeRegistryUrl(url);
    return normal.ok() && RegistryUrlHoldsToken(*normal, [](std::string_view) { return false; });
  };
  if (holds(config.registry)) return true;
  return std::any_of(config.scopes.begin(), config.scopes.end(), [&](const auto& s) { return holds(s.second); });
}

/// The token-shaped pieces of the default registry's and the scopes' URLs:
/// what npm prints names them whole (a FetchError's "request to URL", a
/// 404's "GET URL"), and npm's output reaches the client (adv14).
std::vector<std::string> RegistryTokenPieces(const NpmConfig& config) {
  std::vector<std::string> pieces;
  AppendUrlTokenPieces(config.registry, &pieces);
  for (const auto& s : config.scopes) AppendUrlTokenPieces(s.second, &pieces);
  return pieces;
}

/// The install prefix's .npmrc (install_scopes.h ProjectNpmrc): a symlink
/// to /proc/self/fd/N, N a sealed memfd passed to npm alone, made before npm
/// runs and removed before anything else reads the prefix (the scripts'
/// cells, the server). Not a file: it names a registry URL, token and all,
/// and a cell granted a read of ~/.cache would read a file while npm runs
/// (adv18); through the link, any other process opens its own fd N.
class ProjectConfigFile {
 public:
  static Result<ProjectConfigFile> Write(const std::string& prefix, const std::string& text) {
    ProjectConfigFile f;
    if (text.empty()) return f;
    auto fd = SealedMemfd("npmrc-project", text);
    if (!fd.ok()) return fd.error();
    std::string path = prefix + "/.npmrc";
    if (::symlink(OwnFdPath(fd->get()).c_str(), path.c_str()) != 0) {
      return ErrnoError("write npm's scope settings for the install", path);
    }
    f.path_ = std::move(path);
    f.fd_ = std::move(*fd);
    return f;
  }
  ProjectConfigFile() = default;
  ProjectConfigFile(ProjectConfigFile&& o) noexcept : path_(std::exchange(o.path_, {})), fd_(std::move(o.fd_)) {}
  ProjectConfigFile& operator=(ProjectConfigFile&&) = delete;
  ~ProjectConfigFile() { (void)Remove(); }
  Status Remove() {
    fd_.reset();
    if (path_.empty()) return {};
    std::string path = std::exchange(path_, {});
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("remove npm's scope settings", path);
    return {};
  }
  /// The fd npm must be given (none without scope settings).
  std::vector<int> Fds() const { return fd_ ? std::vector<int>{fd_.get()} : std::vector<int>{}; }

 private:
  std::string path_;
  UniqueFd fd_;
};

class NpmTool : public PackageTool {
 public:
  NpmTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit, std::vector<std::string> npm_scopes)
      : cell_writable_(std::move(cell_writable)), limit_(limit), npm_scopes_(std::move(npm_scopes)) {}

  Result<std::string> ResolveVersion(const std::string& package, const std::string& spec) override {
    std::string what = spec.empty() ? package : package + "@" + spec;
    // npm's config first: its registries' path tokens are masked in what npm
    // view prints (a 404 names the URL whole).
    auto config = Config();
    if (!config.ok()) return config.error();
    // The registry only, as for the install: a spec npm would read as a
    // file, directory, URL or git repository is refused by npm itself.
    auto out = Run({"npm", "view", what, "version", "--json", "--allow-git=none", "--allow-remote=none",
                    "--allow-file=none", "--allow-directory=none", "--offline=false", "--prefer-offline=false"},
                   true, "resolving " + what + " with npm");
    if (!out.ok()) return out.error();
    nlohmann::json j = nlohmann::json::parse(*out, nullptr, false);
    if (j.is_array() && !j.empty()) j = j.back();  // a range lists every match; the last is highest
    if (!j.is_string()) {
      return MakeError("resolve npm version", what, "npm view printed no version: is the name right?");
    }
    return j.get<std::string>();
  }
  Status Install(const std::string& package, const std::string& version, const std::string& prefix) override {
    auto snapshot = Snapshot();
    if (!snapshot.ok()) return snapshot.error();
    // --loglevel=http: one line per registry request on stderr, so the user
    // (and a client's log) sees the install moving rather than a silent minute.
    MCPCELL_TRY(CheckNpmRefusesNonRegistrySources());
    // A dependency at any depth may name a git URL (cloned with the user's
    // ssh key or credential helper), a tarball URL (fetched from where the
    // host stands: its loopback, the intranet, a metadata address), a file
    // or a directory on the host; the fetched code then sits where every
    // script cell and the server read it (adv9). Only registry packages; and
    // npm fetches a registry package's tarball only from the registry's own
    // origin (a packument naming another host is refused as "remote", adv11).
    std::vector<std::string> argv = {"npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                                     "--ignore-scripts", "--omit=dev",
                                     "--allow-git=none", "--allow-remote=none", "--allow-file=none",
                                     "--allow-directory=none",
                                     // where each package came from, in the install's lockfile (install_origin.h)
                                     "--omit-lockfile-registry-resolved=false",
                                     // the registry asked again, not npm's cache: a man in the middle's
                                     // answers of an earlier install stay there under the registry's key,
                                     // and a tarball is taken from the cache only by the integrity the
                                     // registry answers now (adv14); and not told otherwise by offline
                                     // or prefer-offline, which npm puts before it (adv15)
                                     "--prefer-online", "--offline=false", "--prefer-offline=false"};
    // The user's token fetches only the scope the user asked for (adv9,
    // install_scopes.h): every other scoped registry points at this package's.
    auto config = Config();
    if (!config.ok()) return config.error();
    auto scopes = ScopesForInstall(*config, package, npm_scopes_);
    if (!scopes.ok()) return scopes.error();
    auto project_npmrc = scopes->ProjectNpmrc();
    if (!project_npmrc.ok()) return project_npmrc.error();
    // npm's request log names every URL, path and all: a registry that takes
    // its token in the path (url_credential.h) would have it printed to the
    // client's stderr on every install (adv12), so then npm says less.
    bool token_in_a_url = AnyRegistryHoldsToken(*config);
    argv.push_back(token_in_a_url ? "--loglevel=notice" : "--loglevel=http");
    if (token_in_a_url) Say("npm's request log is off: a registry URL holds a token in its path");
    argv.push_back(package + "@" + version);
    auto npmrc = ProjectConfigFile::Write(prefix, *project_npmrc);
    if (!npmrc.ok()) return npmrc.error();
    // What the tarballs unpack to is the registry's to choose: bounded as
    // the install scripts' writes are (adv19: 1 MiB of gzip, 1.2 GiB).
    auto out = Run(argv, false, "installing " + package + "@" + version + " with npm", scopes->Env(), npmrc->Fds(),
                   {prefix, kHostInstallBytes, kHostInstallInodes});
    MCPCELL_TRY(npmrc->Remove());
    if (!out.ok()) {
      Error e = out.error();
      if (std::string hint = scopes->Hint(package); !hint.empty()) e.detail += (e.detail.empty() ? "" : "; ") + hint;
      return e;
    }
    // npm's lockfiles name every tarball's URL whole: a registry's path
    // token in them was read by the server's own cell and by any later
    // grant of the cache (adv19).
    MCPCELL_TRY(ScrubLockfiles(prefix, masked_));
    // Under which settings it came (install_origin.h): an allow run trusts
    // only an install made under the public registry's — the settings of
    // the copies npm read (npmrc_snapshot.h), judged here.
    std::string why = npm_scopes_.empty() ? WhyNpmConfigIsNotPublic(*config, package) : "--npm-scope";
    if (why.empty()) why = WhyCaEnvironmentIsNotPublic(ProcessEnvironment());
    return WriteInstallOrigin(prefix, why);
  }

 private:
  Result<std::string> Run(std::vector<std::string> argv, bool capture, std::string what,
                          std::vector<std::string> extra_env = {}, std::vector<int> pass_fds = {},
                          HostToolRun::Disk disk = {}) {
    // npm's own package cache (~/.npm, or $npm_config_cache) answers a
    // packument and a tarball without asking the registry while the stored
    // max-age holds, and a cell may have been granted it (`--write ~/.npm`
    // planted the code the next install put in place: adversary pass,
    // tests/e2e/adv_npx_cache.test.mjs). npm gets a cache inside mcpcell's,
    // which no grant may make writable (launch_plan.cc). A flag beats every
    // npmrc and environment setting.
    auto root = NpxCacheRoot();
    if (!root.ok()) return root.error();
    // Every npm run with the launch's cache, not only the install's: `npm
    // view` writes the registry's answer whole into it (adv21: a 1.4 GiB
    // packument). (The runs before it, `npm config get`, write nothing.)
    if (disk.dir.empty() && snapshot_) disk = {*root, kHostInstallBytes, kHostInstallInodes};
    // Once taken, every npm run reads the copies and a cache of this
    // launch's own (npmrc_snapshot.h): what another install's registry (a
    // man in the middle) left in a shared one was served again — kept by a
    // revalidation's 304, or read first under prefer-offline (adv15). Before
    // (`npm config get` of the config files): logs only, in mcpcell's.
    if (snapshot_) {
      for (auto& flag : snapshot_->Flags()) argv.push_back(std::move(flag));
    } else {
      argv.push_back("--cache=" + *root + "/.npm-cache");
    }
    // The project config too: the install's is its prefix's .npmrc (ours);
    // every other run gets an empty prefix of the snapshot's, so `/.npmrc`
    // is never the check's project config alone (adv16).
    bool has_prefix = std::any_of(argv.begin(), argv.end(), [](const std::string& a) { return a == "--prefix"; });
    if (std::string project = snapshot_ ? snapshot_->ProjectFlag() : ""; !project.empty() && !has_prefix) {
      argv.push_back(std::move(project));
    }
    // No debug log: it holds every URL whole, and `logs-dir` is npm's
    // config to choose (adv16: a directory a cell reads).
    argv.push_back("--logs-max=0");
    if (snapshot_) {
      for (int fd : snapshot_->Fds()) pass_fds.push_back(fd);
    }
    return RunHostTool({std::move(argv), capture, limit_, std::move(what), cell_writable_, kNpmTimeoutHint,
                        kNpmMissingHint, {}, std::move(extra_env), masked_, std::move(pass_fds), std::move(disk)});
  }

  /// Asked the way Install asked (the same global npmrc), so the scripts'
  /// cells reach the registries the packages came from (npm_config.h: why
  /// `config list`, and the tokens that are never kept).
  /// Read once: a launch asks it for the allow check and again for the
  /// install scripts' cells (cli/launch_plan.cc), of the same npm.
  Result<NpmConfig> Config() override {
    if (config_) return *config_;
    auto snapshot = Snapshot();
    if (!snapshot.ok()) return snapshot.error();
    std::vector<std::string> argv = {"npm", "config", "list", "-l"};
    auto out = Run(argv, true, "asking npm for its registry");
    if (!out.ok()) return out.error();
    auto config = NpmConfigFromList(*out);
    if (config.ok()) {
      config_ = *config;
      // Added to the copies' (Snapshot), never in their place: a keyed
      // `//host/TOKEN/:x` of a URL that is no registry stays masked.
      for (auto& piece : RegistryTokenPieces(*config)) masked_.push_back(std::move(piece));
    }
    return config;
  }

  /// The npmrc files every npm run after the first reads: copies taken once
  /// (npmrc_snapshot.h), so what is checked is what the install is made under.
  Result<const NpmrcSnapshot*> Snapshot() {
    if (!snapshot_) {
      auto root = NpxCacheRoot();
      if (!root.ok()) return root.error();
      auto snap = NpmrcSnapshot::Make(*root);
      if (!snap.ok()) return snap.error();
      snapshot_.emplace(std::move(*snap));
      auto paths = ConfigPaths();
      if (!paths.ok()) return paths.error();
      MCPCELL_TRY(snapshot_->Copy(paths->first, paths->second));
      // What npm prints names the URLs of the copies whole (a warning about
      // an unknown `//host/TOKEN/:key`, a FetchError): masked from here on,
      // before npm has listed anything (adv16).
      masked_ = snapshot_->UrlTokenPieces();
    }
    return &*snapshot_;
  }

  /// npm ignores a setting it does not know (a warning at most): an npm
  /// without allow-git/allow-remote (npm 11's) would fetch what the flags
  /// above refuse. Asked, not guessed from a version number.
  Status CheckNpmRefusesNonRegistrySources() {
    auto out = Run({"npm", "config", "get", "allow-remote"}, true, "asking npm whether it can refuse URL dependencies");
    if (!out.ok()) return out.error();
    std::string v = *out;
    while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ')) v.pop_back();
    if (v == "all" || v == "none" || v == "root") return {};
    return MakeError("check npm", "allow-remote",
                     "this npm has no allow-git/allow-remote settings (npm config get allow-remote: \"" + v +
                         "\"), so it would fetch a dependency's git or URL source with your credentials from your "
                         "network; mcpcell installs npx:// packages only with an npm that refuses them (npm 11 or "
                         "later: npm install -g npm@11)");
  }

  /// The global and the user npmrc npm reads. The global one as npm names
  /// it when no --prefix is given (issue 14.1): npm derives it from its
  /// *global* prefix (${prefix}/etc/npmrc), and `--prefix DIR` sets that
  /// prefix too, so `npm install --prefix DIR` would read DIR/etc/npmrc and
  /// drop the machine's registry, proxy and cafile (npm's config docs:
  /// "globalconfig: Default: The global --prefix setting plus 'etc/npmrc'").
  /// Asking npm itself keeps every way the user sets them
  /// (NPM_CONFIG_GLOBALCONFIG, NPM_CONFIG_PREFIX, ~/.npmrc's prefix,
  /// npm_config_userconfig, the distribution's builtin config).
  Result<std::pair<std::string, std::string>> ConfigPaths() {
    // Before the masks are known: npm's warnings (an unknown key, printed
    // whole, may hold a path token) are not shown.
    auto out = Run({"npm", "config", "get", "globalconfig", "userconfig", "--loglevel=error"}, true,
                   "asking npm for its config files");
    if (!out.ok()) return out.error();
    return NpmrcPathsFromGet(*out);
  }

  std::vector<std::string> cell_writable_;
  std::chrono::milliseconds limit_;
  std::vector<std::string> npm_scopes_;
  std::optional<NpmrcSnapshot> snapshot_;  ///< Snapshot(), taken once
  std::vector<std::string> masked_;    ///< the registries' path tokens: never shown (util/masked_echo.h)
  std::optional<NpmConfig> config_;    ///< Config() as first read
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
    // A killed launch's: an install, or npm's copies of the user's npmrc
    // (tokens) and its cache (adv16).
    if (InstallOwner(name) == 0 && name.rfind(".install-", 0) != 0) continue;
    if (checked != nullptr) ++*checked;
    // Every mcpcell holds its own from right after making it
    // (util/work_dir_lock.h): a held one is never taken, however old and
    // whoever its pid names here (adv19: an install step over an hour, or an
    // owner in another pid namespace, was swept under its running cell).
    if (WorkDirHeld(e.path().string())) continue;
    // One not held is abandoned once its owner is gone (kill(2): ESRCH), is
    // this process (a container's PID 1 after `docker stop`, adv20: its pid
    // is every next run's), or has been so for 10 minutes (its pid reused,
    // or it was made before the hold, by an older mcpcell).
    pid_t owner = InstallOwner(name);
    bool owner_dead = owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH;
    std::error_code time_ec;
    auto mtime = fs::last_write_time(e.path(), time_ec);
    bool stale = !time_ec && now - mtime > std::chrono::minutes(10);
    if (!(owner_dead || owner == ::getpid() || stale)) continue;
    if (RemoveTree(e.path().string())) ++removed;
  }
  return removed;
}

std::unique_ptr<PackageTool> MakeNpmTool(std::vector<std::string> cell_writable, std::chrono::milliseconds limit,
                                         std::vector<std::string> npm_scopes) {
  return std::make_unique<NpmTool>(std::move(cell_writable), limit, std::move(npm_scopes));
}

Result<std::string> NpxCacheRoot() { return PackageCacheRoot("npx"); }

Result<std::string> PackageBin(const std::string& package_dir, const std::string& package) {
  std::string manifest = package_dir + "/package.json";
  // An install script could have replaced it (its package's directory is
  // the one place its cell writes): a FIFO would hang this read, a symlink
  // would make us read a file of the host's.
  struct stat st{};
  if (::lstat(manifest.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return MakeError("read package manifest", manifest, "not a regular file");
  }
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
    return MakeError("find the program of", package,
                     "its \"bin\" points outside the package: " + VisibleOnTerminal(rel));
  }
  // ...nor can a symlink an install script left there (tarballs carry
  // none): the launch binds the directory of the server's script, resolved.
  char real_bin[PATH_MAX];
  char real_dir[PATH_MAX];
  if (::realpath(full.c_str(), real_bin) != nullptr && ::realpath(dir.c_str(), real_dir) != nullptr &&
      std::string(real_bin).rfind(std::string(real_dir) + "/", 0) != 0) {
    return MakeError("find the program of", package,
                     "its \"bin\" " + VisibleOnTerminal(rel) + " resolves outside the package, to " +
                         VisibleOnTerminal(real_bin) +
                         " (a symlink, left by an install script?); refusing to run it");
  }
  return full.string();
}

namespace {

/// Says, once, at install, what --install-scripts=skip left out: a native
/// module then fails later with "Could not locate the bindings file".
void WarnSkippedScripts(const std::string& node_modules) {
  auto names = PackagesWithInstallScripts(node_modules);
  if (names.empty()) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + VisibleOnTerminal(n);
  Warn("install scripts not run (--install-scripts=skip): " + list +
       "; a native module among them will not load. Without --install-scripts=skip they run in a native cell of "
       "their own (docs/THREAT_MODEL.md)");
}

/// Runs or skips the scripts of the install at `dir` (not yet published).
/// What the install scripts' cells left writable by the group or others
/// (`chmod -R 777 build`) made writable by its owner only: code the program
/// loads is no one else's to change (adv14; cache_entry_owner.h checks
/// only the path to the program). One that cannot be changed (not ours)
/// refuses the install.
Status WritableByOwnerOnly(const std::string& dir) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st{};
    if (::lstat(it->path().c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0) continue;
    if (::chmod(it->path().c_str(), st.st_mode & 0755) != 0) {
      return ErrnoError("make the install's files writable by their owner only", VisibleOnTerminal(it->path().string()));
    }
  }
  if (ec) return MakeError("read the install", VisibleOnTerminal(dir), ec.message());
  return {};
}

/// npm is asked for its registry only when some package has scripts.
Status HandleScripts(const std::string& dir, const NpxScripts& scripts, PackageTool& tool) {
  if (scripts.mode == InstallScriptsMode::kSkip) {
    WarnSkippedScripts(dir + "/node_modules");
    return {};
  }
  if (scripts.cell == nullptr) return MakeError("run install scripts of", dir, "no cell to run them in");
  if (!scripts.holds_secret) return MakeError("run install scripts of", dir, "no secret check for their registry URLs");
  // Not knowing the registry closes the cells' network, not the install:
  // scripts that need none still run.
  auto config = [&tool]() -> NpmConfig {
    auto read = tool.Config();
    if (read.ok()) return *read;
    Warn(read.error().Message() + "; the install scripts get no network");
    return {};
  };
  MCPCELL_TRY(RunPackageScripts(dir, *scripts.cell, scripts.limit, config, scripts.holds_secret));
  return WritableByOwnerOnly(dir + "/node_modules");
}

/// In an install whose scripts run in place, while they run: a launch that
/// finds it (holding the install's lock) knows that run was killed.
constexpr const char* kScriptsRunningMark = ".mcpcell-scripts-running";

/// A package published without its scripts run (an older mcpcell, or
/// --install-scripts=skip): run them now, in place, one mcpcell at a time
/// (flock(2) on the install directory; the second finds the record). False
/// when there is no such install any more (removed or replaced while this
/// launch waited, or removed here after a killed run): install it afresh.
// An earlier run of ours killed mid-scripts (a client's timeout, the OOM
// killer) left its mark: what its scripts wrote goes with the install
// instead of each retry adding to it (adv21: two killed launches, two
// blobs). False when the install was moved aside (install it afresh).
Result<bool> ClearInterruptedRun(int dir, const std::string& cache_dir, bool in_use) {
  if (::faccessat(dir, kScriptsRunningMark, F_OK, AT_SYMLINK_NOFOLLOW) != 0) return true;
  if (in_use) {
    return MakeError("run the install scripts of", cache_dir,
                     "an earlier launch running them in place was stopped before they ended, and a running server "
                     "uses the install (mcpcell ps): run again once it has ended");
  }
  Say(cache_dir + ": an earlier launch running its install scripts in place was stopped before they ended; "
      "installing it afresh");
  if (RemoveInstallAside(cache_dir, "killed")) return false;
  return MakeError("remove the interrupted install", cache_dir, "remove it, or run 'mcpcell cache prune'");
}

// What failed scripts wrote stays nowhere: the install goes (aside first,
// named as an install of ours under way, so a kill mid-removal is swept),
// and the next launch installs it afresh under a budget of its own (adv19:
// each retry of a failed in-place run added up to 1 GiB to the published
// install) — unless a running server uses it.
Error AfterFailedRun(Error e, const std::string& cache_dir, bool in_use) {
  e.detail += std::string(e.detail.empty() ? "" : "; ") +
              (in_use ? "the install was kept: a running server uses it (mcpcell ps)"
               : RemoveInstallAside(cache_dir, "failed")
                   ? "the install was removed; the next launch installs it afresh"
                   : "the install could not be removed: remove " + cache_dir + " or run 'mcpcell cache prune'");
  return e;
}

Result<bool> RunScriptsInPlace(const std::string& cache_dir, const NpxScripts& scripts, PackageTool& tool) {
  UniqueFd dir(::open(cache_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!dir) return ErrnoError("open installed package", cache_dir);
  while (::flock(dir.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("lock installed package", cache_dir);
  }
  // While this launch waited, another's in-place run may have failed and
  // removed the install, and a third published a fresh one under the name:
  // what is locked must be what the name names (adv21).
  struct stat held{}, named{};
  if (::fstat(dir.get(), &held) != 0 || ::stat(cache_dir.c_str(), &named) != 0 || held.st_dev != named.st_dev ||
      held.st_ino != named.st_ino) {
    return false;
  }
  if (InstallScriptsRan(cache_dir)) return true;
  bool in_use = scripts.in_use && scripts.in_use(cache_dir);
  auto kept = ClearInterruptedRun(dir.get(), cache_dir, in_use);
  if (!kept.ok() || !*kept) return kept;
  UniqueFd mark(::openat(dir.get(), kScriptsRunningMark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!mark) return ErrnoError("mark the install scripts as running in", cache_dir);
  if (!FindScriptPackages(cache_dir + "/node_modules").empty()) {
    Say(cache_dir + " was installed without running its install scripts; running them now");
  }
  Status ran = HandleScripts(cache_dir, scripts, tool);
  if (!ran.ok()) return AfterFailedRun(ran.error(), cache_dir, in_use);
  (void)::unlinkat(dir.get(), kScriptsRunningMark, 0);
  return true;
}

}  // namespace

Status InstallIntoCache(const std::string& cache_root, const std::string& final_dir,
                        const std::function<Status(const std::string&)>& install) {
  std::error_code ec;
  fs::create_directories(cache_root, ec);
  if (ec) return MakeError("create package cache", cache_root, ec.message());
  RemoveAbandonedInstalls(cache_root);
  // The owner's pid in the name: `mcpcell gc` and the next install remove
  // the directory as soon as that mcpcell is gone (e.g. kill -9 mid-install).
  std::string tmpl = cache_root + "/.install-" + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return ErrnoError("create install directory in", cache_root);
  // Held until published or removed: no sweep takes it meanwhile.
  UniqueFd held = HoldWorkDir(tmpl);
  if (!held) {
    Status failed = ErrnoError("lock install directory", tmpl);
    (void)RemoveTree(tmpl);
    return failed;
  }
  // mkdtemp makes 0700; the cell's user must be able to read the package.
  fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec, ec);
  Status st = install(tmpl);
  if (!st.ok()) {
    (void)RemoveTree(tmpl);
    return st.error();
  }
  // Atomic publish: a half-finished install is never seen under the final name.
  if (::rename(tmpl.c_str(), final_dir.c_str()) != 0) {
    int e = errno;
    (void)RemoveTree(tmpl);
    if (e != EEXIST && e != ENOTEMPTY) {
      errno = e;
      return ErrnoError("publish installed package", final_dir);
    }
    // Another mcpcell installed the same version first: use theirs.
  }
  return {};
}

Result<InstalledPackage> EnsureNpxPackage(const ServerRef& ref, PackageTool& tool, const std::string& cache_root,
                                          bool may_install, const NpxScripts& scripts) {
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
  // Twice at most: an install whose in-place scripts were killed, or that
  // another launch removed while this one waited for it, is installed afresh.
  for (int pass = 0;; ++pass) {
    std::error_code ec;
    if (!fs::exists(out.package_dir + "/package.json", ec)) {
      if (!may_install) {
        out.bin_path = out.package_dir + "/<bin from package.json>";
        return out;
      }
      Say("installing " + ref.package + "@" + out.version + " outside the cell into " + out.cache_dir +
          " (npm --ignore-scripts)");
      auto install = [&](const std::string& tmp) -> Status {
        MCPCELL_TRY(tool.Install(ref.package, out.version, tmp));
        return HandleScripts(tmp, scripts, tool);
      };
      MCPCELL_TRY(InstallIntoCache(cache_root, out.cache_dir, install));
      out.installed_now = true;
    } else if (may_install && scripts.mode == InstallScriptsMode::kCell && !InstallScriptsRan(out.cache_dir)) {
      auto ran = RunScriptsInPlace(out.cache_dir, scripts, tool);
      if (!ran.ok()) return ran.error();
      if (!*ran && pass < 2) continue;
      if (!*ran) return MakeError("run the install scripts of", out.cache_dir, "other launches kept replacing it; run again");
    }
    break;
  }
  // What runs must be what this user's mcpcell installed (adv11): checked
  // on every use, not only after an install.
  std::string remedy = "remove " + VisibleOnTerminal(out.cache_dir) + " (rm -rf, or mcpcell cache prune " +
                       ref.package + "@" + out.version + ") to have it installed afresh";
  MCPCELL_TRY(CheckOwnedBelow(cache_root, out.package_dir + "/package.json", remedy));
  auto bin = PackageBin(out.package_dir, ref.package);
  if (!bin.ok()) return bin.error();
  MCPCELL_TRY(CheckOwnedBelow(cache_root, *bin, remedy));
  out.bin_path = *bin;
  out.present = true;
  return out;
}

}  // namespace mcpcell
