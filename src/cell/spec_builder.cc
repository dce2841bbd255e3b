#include "cell/spec_builder.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cell/bind_source.h"
#include "cell/credentials.h"
#include "cell/grant_scan_cache.h"
#include "cell/hidden_dirs.h"
#include "util/cache_dir.h"
#include "cell/mount_plan.h"
#include "cell/socket_scan.h"
#include "util/home_path.h"
#include "util/path_search.h"
#include "util/units.h"
#include "util/path_prefix.h"

namespace mcpcell {
namespace {

namespace fs = std::filesystem;

// Entries visited per granted directory when looking for unix sockets.
constexpr std::size_t kSocketScanBudget = 100'000;

bool IsFile(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDir(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> RealPath(const std::string& p) {
  char buf[PATH_MAX];
  if (::realpath(p.c_str(), buf) == nullptr) return ErrnoError("resolve path", p);
  return std::string(buf);
}

// Lexical absolute path (for the target a user named), relative to cwd.
std::string Absolute(const std::string& p) {
  std::error_code ec;
  auto abs = fs::absolute(ExpandHome(p), ec);
  return ec ? p : abs.lexically_normal().string();
}

bool UnderSystemDir(const std::string& path) {
  for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    if (PathAtOrBelow(path, d)) return true;
  }
  return false;
}

// Somebody's home directory: the caller's, any passwd entry's, or a direct
// child of /home (issue 10 item 5: a server under another user's home got
// that home's .ssh and .aws).
bool IsHomeDirectory(const std::string& dir) {
  if (fs::path(dir).parent_path() == "/home") return true;
  std::string mine = CallerHome();
  if (!mine.empty() && dir == fs::path(mine).lexically_normal().string()) return true;
  bool found = false;
  ::setpwent();
  while (const struct passwd* pw = ::getpwent()) {
    if (pw->pw_dir != nullptr && dir == fs::path(pw->pw_dir).lexically_normal().string() && dir != "/") found = true;
  }
  ::endpwent();
  return found;
}

// A directory too broad to bind just because a server lives in it.
bool TooBroad(const std::string& dir) {
  for (const char* d : {"/", "/home", "/root", "/tmp", "/var", "/opt", "/srv", "/mnt", "/media", "/etc", "/run",
                        "/var/tmp", "/usr/local"}) {
    if (dir == d) return true;
  }
  return IsHomeDirectory(dir);
}

// The directory that holds a script's code and its dependencies: the top-most
// node_modules for an installed package (Node resolves upward), else the
// nearest ancestor with a package manifest, else the script file alone —
// never the directory it happens to sit in (a project, ~/.local/bin, a home).
std::string PackageRoot(const std::string& script) {
  auto nm = script.find("/node_modules/");
  if (nm != std::string::npos) return script.substr(0, nm + std::string("/node_modules").size());
  for (fs::path d = fs::path(script).parent_path(); d.has_relative_path(); d = d.parent_path()) {
    if (TooBroad(d.string())) break;
    for (const char* marker : {"package.json", "pyproject.toml", "setup.py", "setup.cfg"}) {
      std::error_code ec;
      if (fs::exists(d / marker, ec)) return d.string();
    }
  }
  return script;
}

// PREFIX/bin/EXE where PREFIX is an installed runtime or environment that
// the executable needs whole: a Python virtualenv (pipx, uv tools), a Node
// install (nvm, a tarball). ~/.local is not one: it holds keyrings.
bool IsInstallPrefix(const fs::path& prefix) {
  std::error_code ec;
  if (fs::exists(prefix / "pyvenv.cfg", ec)) return true;
  return fs::exists(prefix / "lib/node_modules/npm", ec) && fs::exists(prefix / "bin/node", ec);
}

bool StartsWithShebang(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  char c[2] = {};
  return in.read(c, 2) && c[0] == '#' && c[1] == '!';
}

// What to bind for executable `exe` (resolved): its install prefix, the
// package of a script, or the file itself (a compiled binary).
std::string ExecutableRoot(const std::string& exe) {
  fs::path dir = fs::path(exe).parent_path();
  if (dir.filename() == "bin" && IsInstallPrefix(dir.parent_path()) && !TooBroad(dir.parent_path().string())) {
    return dir.parent_path().string();
  }
  std::string root = StartsWithShebang(exe) ? PackageRoot(exe) : exe;
  return TooBroad(root) ? exe : root;
}

// Masks, inside the cell, what a grant of `real` at `target` must not show:
// unix sockets (doors out) and credential locations at any depth. A scan
// that runs out of budget refuses the grant: granting the rest unmasked
// would fail open, and a cell with --write below `real` can flood it to
// exactly that point (the adversary review: 200,001 empty files, ~4 s).
Status MaskBeneath(CellSpec* spec, const std::string& real, const std::string& target, const std::string& label,
                 std::vector<std::string>* notes) {
  auto inside = [&](const std::string& host) { return target + host.substr(real == "/" ? 0 : real.size()); };
  GrantScan both = ScanGrantRemembered(real, kSocketScanBudget, AccountCacheBase());
  const CredentialScan& creds = both.creds;
  for (const auto& dir : both.unreadable) {
    // Not listable here, so not checked: masked whole (the cell, as this
    // user, could not list it either, but could open a name it knows).
    spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kTmpfs, "", inside(dir), false, false, 4096, "masked"},
                                      MountSpec::Origin::kMasked));
    notes->push_back("masked directory " + dir + " inside " + label + " (it cannot be listed, so it was not checked)");
  }
  for (const auto& cred : creds.found) {
    // A credential directory that also cannot be listed (another user's
    // ~/.ssh in a granted /var/tmp) is masked once: two masks on one
    // target refused the whole run ("named twice").
    bool covered = false;
    for (const auto& dir : both.unreadable) covered = covered || PathAtOrBelow(cred, dir);
    if (covered) continue;
    // An empty read-only tmpfs over a directory; /dev/null over anything else.
    MountSpec mask{MountSpec::Kind::kTmpfs, "", inside(cred), false, false, 4096, "masked"};
    if (!IsDir(cred)) mask = MountSpec{MountSpec::Kind::kBind, "/dev/null", inside(cred), false, false, 0, "masked"};
    mask.origin = MountSpec::Origin::kMasked;
    spec->mounts.push_back(mask);
    notes->push_back("masked credential location " + cred + " inside " + label);
  }
  if (creds.truncated) {
    return MakeError("refusing grant", label,
                     "too large to check for credentials (gave up " + creds.gave_up +
                         "); a credential file deeper inside could not be masked — grant a narrower directory, "
                         "--read/--write the subdirectories the server needs, or pass --force-credentials to "
                         "grant it unchecked");
  }
  const SocketScan& scan = both.sockets;
  for (const auto& sock : scan.sockets) {
    // Already hidden by a credential mask (/run/docker.sock, ~/.ssh/agent.sock).
    bool covered = false;
    for (const auto& cred : creds.found) covered = covered || PathAtOrBelow(sock, cred);
    for (const auto& dir : both.unreadable) covered = covered || PathAtOrBelow(sock, dir);
    if (covered) continue;
    spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kBind, "/dev/null", inside(sock), false, false, 0, "masked"},
                                      MountSpec::Origin::kMasked));
    notes->push_back("masked unix socket " + sock + " inside " + label);
  }
  if (scan.truncated) {
    return MakeError("refusing grant", label,
                     "too large to check for unix sockets (over " + std::to_string(kSocketScanBudget) +
                         " entries); a socket deeper inside would be reachable — grant a narrower directory, or "
                         "pass --force-credentials to grant it unchecked");
  }
  return {};
}

// One bind of the resolved host path `real` at `target`, with its identity
// recorded for the backend's check and everything below it masked.
Status AddGrant(CellSpec* spec, const std::string& real, const std::string& target, bool writable,
                const std::string& why, const std::string& label, std::vector<std::string>* notes, bool mask = true) {
  MountSpec bind{MountSpec::Kind::kBind, real, target, writable, false, 0, why};
  MCPCELL_TRY(RecordSourceIdentity(&bind));
  spec->mounts.push_back(std::move(bind));
  if (!IsDir(real)) return {};
  if (mask) MCPCELL_TRY(MaskBeneath(spec, real, target, label, notes));
  // mcpcell's own state is masked even under --force-credentials: that flag
  // is about the user's own credentials, not other cells' logs.
  MCPCELL_TRY(MaskHiddenDirsBeneath(spec, real, target, label, notes));
  return {};
}

// The Python a virtualenv runs on: pyvenv.cfg's `home` is the bin dir of the
// base interpreter (uv tools use uv's own Python under ~/.local/share/uv),
// which venv/bin/python links to. Its install prefix, or "" when none.
std::string VenvBaseInterpreter(const std::string& venv) {
  std::ifstream in(venv + "/pyvenv.cfg");
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", eq - 1) + 1);
    if (key != "home") continue;
    std::string value = line.substr(line.find_first_not_of(" \t", eq + 1));
    fs::path bin = fs::path(value).lexically_normal();
    if (!bin.is_absolute()) return {};
    auto real = RealPath(bin.string());
    if (!real) return {};
    fs::path dir(*real);
    return dir.filename() == "bin" ? dir.parent_path().string() : *real;
  }
  return {};
}

// An auto-mount passes the same checks as --read: never a credential
// location, credentials and unix sockets below it masked, identity recorded.
void AddServerMount(CellSpec* spec, const std::string& path, const std::string& why,
                    std::vector<std::string>* notes) {
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && PathAtOrBelow(path, m.target) && PathAtOrBelow(path, m.source)) return;
  }
  if (UnderSystemDir(path)) return;
  if (auto cred = CheckNotCredential(path); !cred.ok()) {
    notes->push_back("warning: not auto-mounting " + path + " (" + why + "): " + cred.error().Message());
    return;
  }
  if (auto added = AddGrant(spec, path, path, false, why, path, notes); !added.ok()) {
    notes->push_back("warning: not auto-mounting " + path + ": " + added.error().Message());
    return;
  }
  notes->push_back("auto-mounted read-only (" + why + "): " + path);
}

// The executable named by a path that is a symlink (~/.local/bin/tool ->
// ../share/pipx/venvs/tool/bin/tool): the cell gets the link itself, pointing
// at the bound target, instead of the directory the link sits in.
void AddExecutableLink(CellSpec* spec, const std::string& link, const std::string& real) {
  std::error_code ec;
  fs::path to = fs::read_symlink(link, ec);
  if (ec) return;
  fs::path resolved = (to.is_absolute() ? to : fs::path(link).parent_path() / to).lexically_normal();
  if (resolved.string() != real) {
    spec->argv[0] = real;  // a chain of links: run the end of it
    return;
  }
  spec->mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kBind, link, link, false, false, 0, "server executable link"},
                                    MountSpec::Origin::kServerLink));
}

// Binds what the server command needs from outside the system dirs: the
// executable (or its install prefix) and, for interpreters, the script's package.
Status AddServerMounts(CellSpec* spec, std::vector<std::string>* notes) {
  if (spec->argv.empty()) return MakeError("server command", "", "nothing to run: give a command after --");
  std::string exe = spec->argv[0];
  std::string host_exe = exe.find('/') != std::string::npos ? Absolute(exe) : FindOnHostPath(exe);
  if (host_exe.empty()) return {};  // maybe it exists only inside the cell; exec will say
  auto real = RealPath(host_exe);
  if (!real) return {};
  if (exe.find('/') != std::string::npos) spec->argv[0] = host_exe;
  if (!UnderSystemDir(*real)) {
    std::string root = ExecutableRoot(*real);
    AddServerMount(spec, root, "server executable", notes);
    std::string base = root != *real ? VenvBaseInterpreter(root) : std::string();
    if (!base.empty() && !UnderSystemDir(base) && !TooBroad(base)) AddServerMount(spec, base, "server's Python", notes);
  }
  if (host_exe != *real && !UnderSystemDir(host_exe) && exe.find('/') != std::string::npos) {
    AddExecutableLink(spec, host_exe, *real);
  }
  // First argument that names an existing file: the script an interpreter runs.
  for (std::size_t i = 1; i < spec->argv.size(); ++i) {
    const std::string& a = spec->argv[i];
    if (a.empty() || a.front() == '-') continue;
    std::string abs = Absolute(a);
    // Kernel files (/proc/self/cgroup, /sys/...) are arguments, not server code.
    if (IsReservedTarget(abs) || PathAtOrBelow(abs, "/sys") || !IsFile(abs)) break;
    auto script = RealPath(abs);
    if (!script) break;
    AddServerMount(spec, PackageRoot(*script), "server code", notes);
    if (a.front() != '/') spec->argv[i] = abs;  // cwd may differ inside the cell
    break;
  }
  return {};
}

// Where `cell_path` comes from on the host: the bind with the longest target
// at or above it, mapped back to its source; "" when a tmpfs or nothing holds it.
std::string HostPathOf(const CellSpec& spec, const std::string& cell_path) {
  const MountSpec* best = nullptr;
  for (const auto& m : spec.mounts) {
    if (!PathAtOrBelow(cell_path, m.target)) continue;
    if (best == nullptr || m.target.size() >= best->target.size()) best = &m;
  }
  if (best == nullptr || best->kind != MountSpec::Kind::kBind || IsMask(*best)) return {};
  return best->source + cell_path.substr(best->target == "/" ? 0 : best->target.size());
}

bool ExistsInCell(const CellSpec& spec, const std::string& cell_path) {
  std::string host = HostPathOf(spec, cell_path);
  struct stat st{};
  return !host.empty() && ::stat(host.c_str(), &st) == 0;
}

// An interpreter whose first argument is the script it runs.
bool IsInterpreter(const std::string& exe) {
  std::string base = fs::path(exe).filename().string();
  for (const char* i : {"node", "nodejs", "deno", "bun", "python", "ruby", "perl", "bash", "sh", "php"}) {
    if (base == i) return true;
  }
  return base.rfind("python3", 0) == 0;
}

bool LooksLikeScript(const std::string& arg) {
  if (arg.empty() || arg.front() == '-') return false;
  std::string ext = fs::path(arg).extension().string();
  for (const char* e : {".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".pl", ".sh", ".php"}) {
    if (ext == e) return true;
  }
  return arg.find('/') != std::string::npos;
}

std::string CwdNote(const CellSpec& spec, const std::string& given) {
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  if (ec || (!given.empty() && given.front() == '/') || spec.workdir == cwd) return {};
  return "; the current directory " + cwd + " is not mounted in the cell (the server starts in " + spec.home +
         "), so relative paths do not reach it: give an absolute path, or bind it with --read " + cwd;
}

}  // namespace

std::vector<std::string> UnreachableRelativeArgs(const CellSpec& spec) {
  std::vector<std::string> out;
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  if (ec || spec.workdir == cwd) return out;
  for (std::size_t i = 1; i < spec.argv.size(); ++i) {
    const std::string& a = spec.argv[i];
    if (a.empty() || a.front() == '-' || a.front() == '/') continue;
    if (fs::exists(fs::path(cwd) / a, ec)) {
      out.push_back("argument '" + a + "' names " + Absolute(a) + " on the host, but the current directory " + cwd +
                    " is not mounted in the cell (the server starts in " + spec.workdir +
                    "): give its absolute path and bind it with --read or --write");
    }
  }
  return out;
}

Status CheckServerPaths(const CellSpec& spec) {
  if (spec.argv.empty()) return {};
  const std::string& exe = spec.argv[0];
  if (exe.find('/') != std::string::npos && !ExistsInCell(spec, Absolute(exe))) {
    return MakeError(kNotInCell, exe, "the server command is not found in the cell: no such file " + Absolute(exe) +
                                          " on the host, nor a directory that maps it" + CwdNote(spec, exe));
  }
  if (spec.argv.size() > 1 && IsInterpreter(exe) && LooksLikeScript(spec.argv[1])) {
    const std::string& script = spec.argv[1];
    std::string cell_path = script.front() == '/' ? script : Absolute(script);
    if (!ExistsInCell(spec, cell_path)) {
      return MakeError(kNotInCell, script, "the script " + fs::path(exe).filename().string() + " is asked to run (" +
                                               cell_path + ") is not found in the cell: no such file" + CwdNote(spec, script));
    }
  }
  return {};
}

namespace {

Status AddEnv(CellSpec* spec, const RunRequest& req) {
  const char* lang = std::getenv("LANG");
  spec->env = {{"PATH", kCellPath}, {"HOME", spec->home}, {"LANG", lang != nullptr ? lang : "C.UTF-8"},
               {"TMPDIR", "/tmp"}};
  for (const auto& e : req.env) {
    auto eq = e.find('=');
    std::string name = e.substr(0, eq);
    if (name.empty() || name.find_first_of(" \t\n") != std::string::npos) {
      return MakeError("--env", e, "expected NAME or NAME=VALUE");
    }
    if (eq != std::string::npos) {
      spec->env[name] = e.substr(eq + 1);
    } else if (const char* v = std::getenv(name.c_str())) {
      spec->env[name] = v;
    } else {
      return MakeError("--env", name, "is not set in mcpcell's environment; give NAME=VALUE");
    }
  }
  return {};
}

Status AddLimits(CellSpec* spec, const RunRequest& req) {
  auto& l = spec->limits;
  l.memory_bytes = {kDefaultMemoryBytes, false};
  l.pids = {kDefaultPids, false};
  l.tmp_bytes = kDefaultTmpBytes;
  if (req.memory) {
    auto v = ParseSize(*req.memory);
    if (!v) return MakeError("--memory", *req.memory, v.error().detail);
    if (*v < (8ULL << 20)) return MakeError("--memory", *req.memory, "below 8m no runtime starts");
    l.memory_bytes = {*v, true};
  }
  if (req.pids) {
    auto v = ParseSize(*req.pids);
    if (!v || *v == 0) return MakeError("--pids", *req.pids, "expected a positive number");
    l.pids = {*v, true};
  }
  if (req.cpus) {
    char* end = nullptr;
    double v = std::strtod(req.cpus->c_str(), &end);
    if (end == req.cpus->c_str() || *end != '\0' || !(v > 0.0) || v > 1024) {
      return MakeError("--cpus", *req.cpus, "expected a positive number of cores, e.g. 0.5 or 2");
    }
    // The smallest a cgroup enforces as asked (1 ms of a 100 ms period);
    // less was set as 0.01 natively and as no limit at all (NanoCpus 0) by a
    // container engine (adv8).
    if (v < 0.01) return MakeError("--cpus", *req.cpus, "less than 0.01 cores cannot be enforced; use 0.01 or more");
    l.cpus = {v, true};
  }
  if (req.tmp_size) {
    auto v = ParseSize(*req.tmp_size);
    if (!v || *v == 0) return MakeError("--tmp-size", *req.tmp_size, "expected a size such as 64m");
    l.tmp_bytes = *v;
  }
  if (req.timeout) {
    auto v = ParseDuration(*req.timeout);
    if (!v) return MakeError("--timeout", *req.timeout, v.error().detail);
    l.timeout = *v;
  }
  if (req.grace) {
    auto v = ParseDuration(*req.grace);
    if (!v) return MakeError("--grace", *req.grace, v.error().detail);
    spec->stop_grace = *v;
  }
  return {};
}

// npm's global npmrc lies under /usr (Debian's npm: /usr/etc/npmrc; a
// prefix install: /usr/local/etc/npmrc), where `npm config set --global`
// keeps a registry token: no cell reads it (adv13). npm in an install
// script's cell is given its own (script_cell.cc).
void MaskSystemCredentials(CellSpec* spec) {
  for (const char* f : {"/usr/etc/npmrc", "/usr/local/etc/npmrc"}) {
    struct stat st{};
    if (::lstat(f, &st) != 0) continue;
    // A grant's own scan masked it already, or the user granted it by name
    // (--force-credentials): a second mount on one target is refused (adv14).
    if (std::any_of(spec->mounts.begin(), spec->mounts.end(), [&](const MountSpec& m) { return m.target == f; })) continue;
    spec->mounts.push_back(WithOrigin(
        MountSpec{MountSpec::Kind::kBind, "/dev/null", f, false, false, 0, "masked (npm's global config)"},
        MountSpec::Origin::kSystemMasked));
  }
}

}  // namespace

std::vector<MountSpec> SystemMounts(bool networked) {
  std::vector<MountSpec> out;
  auto ro = [&out](const char* p) {
    out.push_back(WithOrigin(MountSpec{MountSpec::Kind::kBind, p, p, false, true, 0, "system"}, MountSpec::Origin::kSystem));
  };
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache",
                        "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
                        "/etc/nsswitch.conf"}) {
    ro(p);
  }
  if (networked) {
    for (const char* p : {"/etc/resolv.conf", "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/gai.conf"}) ro(p);
  }
  return out;
}

// HOST:CELL when the part after the last ':' is an absolute path.
static std::pair<std::string, std::string> SplitBind(const std::string& host_spec) {
  auto colon = host_spec.rfind(':');
  if (colon != std::string::npos && colon + 1 < host_spec.size() && host_spec[colon + 1] == '/') {
    return {host_spec.substr(0, colon), host_spec.substr(colon + 1)};
  }
  return {host_spec, ""};
}

std::string BindHostPath(const std::string& host_spec) {
  auto real = RealPath(ExpandHome(SplitBind(host_spec).first));
  return real ? *real : std::string();
}

Status AddUserBind(CellSpec* spec, const std::string& host_spec, bool writable, bool force,
                   const std::string& why, std::vector<std::string>* notes) {
  auto [host, cell] = SplitBind(host_spec);
  if (host.empty()) return MakeError(why, host_spec, "expected PATH or HOST:CELL");
  auto real = RealPath(ExpandHome(host));
  if (!real) return MakeError(why, host, real.error().Message() + "; the path must exist");
  if (cell.empty()) cell = Absolute(host);
  auto target = NormalizeCellPath(cell);
  if (!target) return MakeError(why, host_spec, target.error().detail);
  if (IsReservedTarget(*target)) {
    return MakeError(why, host_spec, "cannot mount over " + *target + " (reserved for the cell)");
  }
  if (!force) {
    auto ok = CheckNotCredential(*real);
    if (!ok) return MakeError(why, host_spec, ok.error().Message());
  }
  return AddGrant(spec, *real, *target, writable, why, host_spec, notes, !force);
}

Status CheckNotWritableByCell(const CellSpec& spec, const std::string& flag, const std::string& path) {
  std::string lexical = Absolute(path);
  // The path as written and, for each prefix, where it really leads: a link
  // outside the grant pointing in, or one inside pointing out (the cell can
  // re-point it), both put the file within the cell's reach.
  std::vector<std::string> candidates{lexical};
  for (std::size_t at = lexical.find('/', 1);; at = lexical.find('/', at + 1)) {
    char buf[PATH_MAX];
    std::string prefix = lexical.substr(0, at);
    if (::realpath(prefix.c_str(), buf) != nullptr) {
      candidates.push_back(std::string(buf) + (at == std::string::npos ? "" : lexical.substr(at)));
    }
    if (at == std::string::npos) break;
  }
  auto refuse = [&](const MountSpec& m, const std::string& as) {
    return MakeError(flag, path,
                     "lies inside " + m.why + " " + m.source + (as == lexical ? "" : " (as " + as + ")") +
                         ", which the cell can change: it could rewrite or forge what mcpcell reads and records "
                         "there. Keep the file outside every directory the cell can write");
  };
  for (const auto& m : spec.mounts) {
    if (m.kind != MountSpec::Kind::kBind || !m.writable) continue;
    for (const auto& c : candidates) {
      if (PathAtOrBelow(c, m.source)) return refuse(m, c);
    }
  }
  // A hard link is the same file under another name: one inside the grant
  // cannot be seen from here, so a file with more than one link is refused.
  struct stat file{};
  if (::stat(candidates.back().c_str(), &file) == 0 && S_ISREG(file.st_mode) && file.st_nlink > 1) {
    bool in_grant = false;
    for (const auto& m : spec.mounts) in_grant = in_grant || (m.kind == MountSpec::Kind::kBind && m.writable);
    if (in_grant) {
      return MakeError(flag, path,
                       "has " + std::to_string(file.st_nlink) + " hard links; one may lie inside a directory the "
                       "cell can write, where the cell could rewrite it. Use a file with a single link");
    }
  }
  // The same directory under another name (a bind mount on the host, /mnt/x
  // of /data/rw): compare each existing ancestor's device and inode.
  for (fs::path d = fs::path(candidates.back()); ; d = d.parent_path()) {
    struct stat st{};
    if (::stat(d.c_str(), &st) == 0) {
      for (const auto& m : spec.mounts) {
        if (m.kind == MountSpec::Kind::kBind && m.writable && m.source_ino != 0 && st.st_dev == m.source_dev &&
            st.st_ino == m.source_ino) {
          return refuse(m, d.string() + " (the same directory)");
        }
      }
    }
    if (!d.has_relative_path()) break;
  }
  return {};
}

Status CheckDirNotWritableByCell(const CellSpec& spec, const std::string& what, const std::string& dir) {
  MCPCELL_TRY(CheckNotWritableByCell(spec, what, dir));
  std::string lexical = Absolute(dir);
  char buf[PATH_MAX];
  std::string real = ::realpath(lexical.c_str(), buf) != nullptr ? std::string(buf) : lexical;
  struct stat self{};
  bool exists = ::stat(real.c_str(), &self) == 0;
  auto refuse = [&](const MountSpec& m, const std::string& as) {
    return MakeError(m.why, m.source,
                     "lies inside " + what + " " + dir + as + ": the cell could plant files there that a later run "
                     "of mcpcell reads as its own. Grant a directory outside it");
  };
  for (const auto& m : spec.mounts) {
    if (m.kind != MountSpec::Kind::kBind || !m.writable) continue;
    if (PathAtOrBelow(m.source, lexical) || PathAtOrBelow(m.source, real)) return refuse(m, "");
    // The directory under another name (a host bind mount of it): each
    // ancestor of the grant compared by device and inode.
    for (fs::path d = fs::path(m.source); exists; d = d.parent_path()) {
      struct stat st{};
      if (::stat(d.c_str(), &st) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino) {
        return refuse(m, " (as " + d.string() + ")");
      }
      if (!d.has_relative_path()) break;
    }
  }
  return {};
}

Result<CellSpec> BuildCellSpec(const RunRequest& req, const std::vector<std::string>& argv,
                               std::vector<std::string>* notes) {
  CellSpec spec;
  spec.argv = argv;
  if (req.uid) spec.uid = *req.uid;
  if (req.gid) spec.gid = *req.gid;
  else if (req.uid) spec.gid = *req.uid;
  spec.ids_given = req.uid.has_value() || req.gid.has_value();
  if (req.idmap == "on") spec.idmap = CellSpec::Idmap::kOn;
  else if (req.idmap == "off") spec.idmap = CellSpec::Idmap::kOff;
  else if (req.idmap != "auto") return MakeError("--idmap", req.idmap, "expected auto, on or off");
  MCPCELL_TRY(AddLimits(&spec, req));
  spec.mounts = SystemMounts(spec.network.mode != NetworkSpec::Mode::kNone);
  for (const auto& p : req.system_mounts) {
    auto real = RealPath(ExpandHome(p));
    if (!real) return MakeError("--system-mount", p, real.error().Message());
    MCPCELL_TRY(CheckNotCredential(*real));
    // Held to the --read rules: credentials and sockets below it are masked.
    MCPCELL_TRY(AddGrant(&spec, *real, *real, false, "--system-mount", p, notes));
  }
  // Writable scratch: tmpfs /tmp (size-capped) and a tmpfs home. Listed here so
  // the planner mounts them before user binds beneath them (/tmp/work).
  spec.mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kTmpfs, "", "/tmp", true, false, spec.limits.tmp_bytes, "tmp"},
                                   MountSpec::Origin::kTmp));
  spec.mounts.push_back(WithOrigin(MountSpec{MountSpec::Kind::kTmpfs, "", spec.home, true, false, 64ULL << 20, "home"},
                                   MountSpec::Origin::kHome));
  for (const auto& r : req.read) MCPCELL_TRY(AddUserBind(&spec, r, false, req.force_credentials, "--read", notes));
  for (const auto& w : req.write) MCPCELL_TRY(AddUserBind(&spec, w, true, req.force_credentials, "--write", notes));
  if (!req.no_auto_mount) MCPCELL_TRY(AddServerMounts(&spec, notes));
  MCPCELL_TRY(AddEnv(&spec, req));
  MaskSystemCredentials(&spec);  // last: over a grant that shows them again, unless the grant masked them itself
  // Keep the caller's cwd when the cell has it, so relative paths mean the same.
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  spec.workdir = spec.home;
  for (const auto& m : spec.mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.origin != MountSpec::Origin::kSystem && !ec && PathAtOrBelow(cwd, m.source) &&
        m.source == m.target) {
      spec.workdir = cwd;
    }
  }
  return spec;
}

}  // namespace mcpcell
