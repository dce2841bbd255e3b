#include "source/host_tool.h"

#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "util/cache_dir.h"
#include "util/code_injecting_env.h"
#include "util/path_search.h"
#include "util/path_prefix.h"

namespace mcpcell {
namespace {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// $NAME when set to an absolute path, else "".
std::string AbsoluteEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] == '/' ? std::string(v) : std::string();
}

/// $NAME as the host tool reads it: it runs in kHostToolCwd ("/"), so a
/// relative value is a path under "/"; "" when unset or empty.
std::string ToolEnvPath(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || v[0] == '\0') return {};
  return v[0] == '/' ? std::string(v) : std::string("/") + v;
}

/// $HOME and the account's home from the password database, once each.
std::vector<std::string> Homes() {
  std::vector<std::string> homes;
  if (auto h = AbsoluteEnv("HOME"); !h.empty()) homes.push_back(h);
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr && pw->pw_dir[0] == '/') {
    if (homes.empty() || homes[0] != pw->pw_dir) homes.emplace_back(pw->pw_dir);
  }
  return homes;
}

/// "python3.11": the name /usr/bin/python3 leads to, which names its user
/// site (~/.local/lib/python3.11/site-packages); "" when there is none.
std::string HostPythonName() {
  char real[PATH_MAX];
  if (::realpath("/usr/bin/python3", real) == nullptr) return {};
  std::string name = real;
  return name.substr(name.rfind('/') + 1);
}

/// The `prefix=` an npmrc sets (npm's global prefix: its etc/npmrc is the
/// global config), "" when none or not absolute ("~/x" is under `home`, as npm reads it).
std::string NpmrcPrefix(const std::string& home) {
  std::ifstream in(home + "/.npmrc");
  std::string line;
  while (std::getline(in, line)) {
    auto b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line.compare(b, 6, "prefix") != 0) continue;
    auto eq = line.find_first_not_of(" \t", b + 6);
    if (eq == std::string::npos || line[eq] != '=') continue;
    auto v0 = line.find_first_not_of(" \t", eq + 1);
    std::string v = v0 == std::string::npos ? "" : line.substr(v0);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.pop_back();
    if (v.rfind("~/", 0) == 0) v = home + v.substr(1);
    if (!v.empty() && v[0] == '/') return v;
  }
  return {};
}

void AddHomeInputs(const std::string& home, const std::string& python, std::vector<HostToolInput>* out) {
  out->push_back({home + "/.cache/mcpcell", "mcpcell's default package cache (the code of every npx:// and uvx:// server)"});
  if (!python.empty()) {
    out->push_back({home + "/.local/lib/" + python + "/site-packages",
                    "Python's user site-packages (a .pth there runs in every host Python)"});
  }
  out->push_back({home + "/.config/pip/pip.conf", "pip's user config (it chooses the index uvx:// installs from)"});
  out->push_back({home + "/.pip/pip.conf", "pip's legacy user config (it chooses the index uvx:// installs from)"});
  out->push_back({home + "/.npmrc", "npm's user config (it chooses the registry npx:// installs from)"});
  // npm runs git on the host for a git dependency, with the caller's git
  // config: core.hooksPath there ran a cell's hook after the clone's checkout
  // (adversary pass, tests/e2e/adv_npx_cache.test.mjs).
  out->push_back({home + "/.gitconfig", "git's user config (npm runs git for git dependencies; it can name hooks)"});
  out->push_back({home + "/.config/git/config", "git's user config (npm runs git for git dependencies; it can name hooks)"});
  if (auto prefix = NpmrcPrefix(home); !prefix.empty()) {
    out->push_back({prefix + "/etc/npmrc", "npm's global config (the prefix ~/.npmrc names)"});
  }
}

}  // namespace

std::vector<HostToolInput> HostToolInputs() {
  std::vector<HostToolInput> out;
  std::string python = HostPythonName();
  for (const auto& home : Homes()) AddHomeInputs(home, python, &out);
  if (auto x = ToolEnvPath("XDG_CONFIG_HOME"); !x.empty()) {
    out.push_back({x + "/pip/pip.conf", "pip's user config in $XDG_CONFIG_HOME (it chooses the index uvx:// installs from)"});
  }
  // pip's site config: $XDG_CONFIG_DIRS/pip/pip.conf (default /etc/xdg).
  const char* dirs = std::getenv("XDG_CONFIG_DIRS");
  for (const auto& d : SplitPath(dirs != nullptr && dirs[0] != '\0' ? dirs : "/etc/xdg")) {
    if (d.empty()) continue;
    out.push_back({(d[0] == '/' ? d : "/" + d) + "/pip/pip.conf",
                   "pip's site config (it chooses the index uvx:// installs from)"});
  }
  if (auto x = ToolEnvPath("XDG_CONFIG_HOME"); !x.empty()) {
    out.push_back({x + "/git/config", "git's user config in $XDG_CONFIG_HOME (npm runs git for git dependencies)"});
  }
  for (const char* name : {"PIP_CONFIG_FILE", "NPM_CONFIG_USERCONFIG", "npm_config_userconfig", "NPM_CONFIG_GLOBALCONFIG",
                           "npm_config_globalconfig", "GIT_CONFIG_GLOBAL"}) {
    if (auto v = ToolEnvPath(name); !v.empty()) out.push_back({v, std::string("the config file $") + name + " names"});
  }
  for (const char* name : {"NPM_CONFIG_PREFIX", "npm_config_prefix"}) {
    if (auto v = ToolEnvPath(name); !v.empty()) out.push_back({v + "/etc/npmrc", std::string("npm's global config under $") + name});
  }
  return out;
}

namespace {

// A package's own bin directory (a project's node_modules/.bin, a package's
// node_modules/x/bin): what is there came with a repository or a package,
// not from the user's installs. A client's env block puts
// "${workspaceFolder}/node_modules/.bin" first on PATH, and the npm found
// there would run as the user, outside any cell (adv13).
bool InsidePackages(const std::string& dir) {
  for (const auto& part : std::filesystem::path(dir)) {
    if (part == "node_modules") return true;
  }
  return false;
}

}  // namespace

std::string HostToolPath(const std::string& path_env, const std::vector<std::string>& cell_writable) {
  std::string out;
  for (const auto& dir : SplitPath(path_env)) {
    if (dir.empty() || dir[0] != '/') continue;  // relative: resolved against whatever the cwd is
    char buf[PATH_MAX];
    if (::realpath(dir.c_str(), buf) == nullptr) continue;
    std::string real = buf;
    if (InsidePackages(dir) || InsidePackages(real)) continue;
    bool writable = false;
    for (const auto& w : cell_writable) writable |= !w.empty() && PathAtOrBelow(real, w);
    if (writable) continue;
    out += (out.empty() ? "" : ":") + dir;
  }
  return out;
}

namespace {

namespace fs = std::filesystem;

// A Python venv's bin holds a console script of every package installed in
// it, under any name (adv24: a dependency's `npm`): the entry or one of its
// ancestors holds pyvenv.cfg.
bool InsideVenv(const std::string& real) {
  for (fs::path p(real); ; p = p.parent_path()) {
    struct stat st{};
    if (::stat((p / "pyvenv.cfg").c_str(), &st) == 0) return true;
    if (p == p.parent_path()) return false;
  }
}

}  // namespace

std::string WithoutProjectEntries(const std::string& path, const std::string& cwd, const std::string& home) {
  char buf[PATH_MAX];
  std::string project = !cwd.empty() && ::realpath(cwd.c_str(), buf) != nullptr ? buf : "";
  std::string real_home = !home.empty() && ::realpath(home.c_str(), buf) != nullptr ? buf : "";
  // "/" or the home (or above it) is where clients start servers that have
  // no workspace: everything is below it, nothing of it is a project's.
  if (project == "/" || (!real_home.empty() && PathAtOrBelow(real_home, project))) project.clear();
  // The workspace is the repository the cwd lies in (adv26: a client started
  // in $REPO/packages/server still put $REPO/bin first), up to the home.
  for (fs::path p(project); !project.empty() && p != p.parent_path(); p = p.parent_path()) {
    if (!real_home.empty() && PathAtOrBelow(real_home, p.string())) break;
    struct stat st{};
    if (::lstat((p / ".git").c_str(), &st) == 0) {
      project = p.string();
      break;
    }
  }
  std::string out;
  for (const auto& dir : SplitPath(path)) {
    if (dir.empty() || ::realpath(dir.c_str(), buf) == nullptr) continue;
    std::string real = buf;
    if (InsideVenv(real) || (!project.empty() && PathAtOrBelow(real, project))) continue;
    out += (out.empty() ? "" : ":") + dir;
  }
  return out;
}

std::string FindHostTool(const std::string& name, const std::string& path) {
  // Not SearchPath: a host tool is looked up in absolute entries only (an
  // empty or relative one would be the cwd, which a cell may have written).
  for (const auto& dir : SplitPath(path)) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string cand = dir + "/" + name;
    if (IsExecutableFile(cand)) return cand;
  }
  return {};
}

std::vector<std::string> HostToolEnvironment(char** environ_in, const std::string& path) {
  std::vector<std::string> env;
  for (char** e = environ_in; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (name == "PATH") continue;
    // A client's env block sets the server's variables on mcpcell (adv10:
    // NODE_OPTIONS ran code in the host's npm, before any cell). npm's own
    // npm_config_* stay: the install runs no scripts and no git
    // (npx_install.cc), so they choose where from, not what runs.
    if (InjectsCode(name) && !IsNpmConfig(name)) continue;
    env.push_back(std::move(entry));
  }
  env.push_back("PATH=" + path);
  return env;
}

Result<std::string> PackageCacheRoot(std::string_view kind) {
  std::string base = UserCacheBase();
  if (base.empty()) return MakeError("find the package cache", "", "neither XDG_CACHE_HOME nor HOME is an absolute path");
  // What the cache holds is what runs (the registry's pinned packages are
  // run from it, trusted): a cache someone else made or can write (an
  // XDG_CACHE_HOME in a shared directory, adv10) is refused, not used.
  static const OwnedRules kRules{"check the package cache",
                                 "another user could have put the code there that mcpcell would run as the package",
                                 "point XDG_CACHE_HOME at a directory of your own",
                                 "run chmod go-w on it, or point XDG_CACHE_HOME at a directory of your own"};
  auto dir = OpenCacheDir(base, kind, /*create=*/true, kRules);
  if (!dir.ok()) return dir.error();
  return CacheDirPath(base, kind);
}

}  // namespace mcpcell
