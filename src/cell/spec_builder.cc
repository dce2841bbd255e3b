#include "cell/spec_builder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "cell/credentials.h"
#include "cell/mount_plan.h"
#include "cell/socket_scan.h"
#include "util/units.h"

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

std::string ExpandHome(const std::string& p) {
  if (p == "~" || p.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home != nullptr) return std::string(home) + p.substr(1);
  }
  return p;
}

// Lexical absolute path (for the target a user named), relative to cwd.
std::string Absolute(const std::string& p) {
  std::error_code ec;
  auto abs = fs::absolute(ExpandHome(p), ec);
  return ec ? p : abs.lexically_normal().string();
}

bool AtOrBelow(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  if (path.compare(0, dir.size(), dir) != 0) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

bool UnderSystemDir(const std::string& path) {
  for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    if (AtOrBelow(path, d)) return true;
  }
  return false;
}

// A directory too broad to bind just because a server lives in it.
bool TooBroad(const std::string& dir) {
  const char* home = std::getenv("HOME");
  for (const char* d : {"/", "/home", "/root", "/tmp", "/var", "/opt", "/srv", "/mnt", "/media", "/etc"}) {
    if (dir == d) return true;
  }
  return home != nullptr && dir == fs::path(home).lexically_normal().string();
}

// Looks `name` up on the host's PATH the way execvp would.
std::string FindOnHostPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path != nullptr ? path : kCellPath;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string cand = dir + "/" + name;
    if (IsFile(cand) && ::access(cand.c_str(), X_OK) == 0) return Absolute(cand);
    start = end + 1;
  }
  return {};
}

// The directory that holds a script's code and its dependencies: the top-most
// node_modules for an installed package (Node resolves upward), else the
// nearest ancestor that looks like a project root, else the script's own dir.
std::string PackageRoot(const std::string& script) {
  auto nm = script.find("/node_modules/");
  if (nm != std::string::npos) return script.substr(0, nm + std::string("/node_modules").size());
  fs::path dir = fs::path(script).parent_path();
  for (fs::path d = dir; d.has_relative_path(); d = d.parent_path()) {
    if (TooBroad(d.string())) break;
    for (const char* marker : {"package.json", "pyproject.toml", "setup.py", ".git"}) {
      std::error_code ec;
      if (fs::exists(d / marker, ec)) return d.string();
    }
  }
  return dir.string();
}

void AddServerMount(CellSpec* spec, const std::string& path, const std::string& why,
                    std::vector<std::string>* notes) {
  for (const auto& m : spec->mounts) {
    if (m.kind == MountSpec::Kind::kBind && AtOrBelow(path, m.target) && AtOrBelow(path, m.source)) return;
  }
  if (UnderSystemDir(path)) return;
  // Auto-mounts are read-only and never a credential location.
  if (!CheckNotCredential(path).ok()) return;
  spec->mounts.push_back(MountSpec{MountSpec::Kind::kBind, path, path, false, false, 0, why});
  notes->push_back("auto-mounted read-only (" + why + "): " + path);
}

// Binds what the server command needs from outside the system dirs: the
// executable's install prefix and, for interpreters, the script's package.
Status AddServerMounts(CellSpec* spec, std::vector<std::string>* notes) {
  if (spec->argv.empty()) return MakeError("server command", "", "nothing to run: give a command after --");
  std::string exe = spec->argv[0];
  std::string host_exe = exe.find('/') != std::string::npos ? Absolute(exe) : FindOnHostPath(exe);
  if (host_exe.empty()) return {};  // maybe it exists only inside the cell; exec will say
  auto real = RealPath(host_exe);
  if (!real) return {};
  if (exe.find('/') != std::string::npos) spec->argv[0] = host_exe;
  for (const std::string& e : {host_exe, *real}) {
    if (UnderSystemDir(e)) continue;
    fs::path dir = fs::path(e).parent_path();
    // bin/ inside an install prefix (~/.nvm/versions/node/v22/bin/node): bind the prefix.
    std::string root = dir.filename() == "bin" ? dir.parent_path().string() : dir.string();
    if (TooBroad(root)) root = e;
    AddServerMount(spec, root, "server executable", notes);
  }
  // First argument that names an existing file: the script an interpreter runs.
  for (std::size_t i = 1; i < spec->argv.size(); ++i) {
    const std::string& a = spec->argv[i];
    if (a.empty() || a.front() == '-') continue;
    std::string abs = Absolute(a);
    // Kernel files (/proc/self/cgroup, /sys/...) are arguments, not server code.
    if (IsReservedTarget(abs) || AtOrBelow(abs, "/sys") || !IsFile(abs)) break;
    auto script = RealPath(abs);
    if (!script) break;
    std::string root = PackageRoot(*script);
    if (TooBroad(root)) root = *script;
    AddServerMount(spec, root, "server code", notes);
    if (a.front() != '/') spec->argv[i] = abs;  // cwd may differ inside the cell
    break;
  }
  return {};
}

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

}  // namespace

std::vector<MountSpec> SystemMounts(bool networked) {
  std::vector<MountSpec> out;
  auto ro = [&out](const char* p) {
    out.push_back(MountSpec{MountSpec::Kind::kBind, p, p, false, true, 0, "system"});
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

Status AddUserBind(CellSpec* spec, const std::string& host_spec, bool writable, bool force,
                   const std::string& why, std::vector<std::string>* notes) {
  std::string host = host_spec;
  std::string cell;
  // HOST:CELL when the part after the last ':' is an absolute path.
  auto colon = host_spec.rfind(':');
  if (colon != std::string::npos && colon + 1 < host_spec.size() && host_spec[colon + 1] == '/') {
    host = host_spec.substr(0, colon);
    cell = host_spec.substr(colon + 1);
  }
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
  spec->mounts.push_back(MountSpec{MountSpec::Kind::kBind, *real, *target, writable, false, 0, why});
  if (force) return {};
  if (IsDir(*real)) {
    SocketScan scan = FindSockets(*real, kSocketScanBudget);
    for (const auto& sock : scan.sockets) {
      spec->mounts.push_back(MountSpec{MountSpec::Kind::kBind, "/dev/null", *target + sock.substr(real->size()),
                                       false, false, 0, "masked"});
      notes->push_back("masked unix socket " + sock + " inside " + host_spec);
    }
    if (scan.truncated) {
      notes->push_back("warning: " + host_spec + " is too large to check fully for unix sockets (over " +
                       std::to_string(kSocketScanBudget) + " entries); a socket deeper inside would be reachable");
    }
    for (const auto& cred : CredentialsBeneath(*real)) {
      std::string inside = *target + cred.substr(real->size());
      // An empty read-only tmpfs over a directory; /dev/null over a file.
      MountSpec mask{MountSpec::Kind::kTmpfs, "", inside, false, false, 4096, "masked"};
      if (!IsDir(cred)) mask = MountSpec{MountSpec::Kind::kBind, "/dev/null", inside, false, false, 0, "masked"};
      spec->mounts.push_back(mask);
      notes->push_back("masked credential location " + cred + " inside " + host_spec);
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
  MCPCELL_TRY(AddLimits(&spec, req));
  spec.mounts = SystemMounts(spec.network.mode != NetworkSpec::Mode::kNone);
  for (const auto& p : req.system_mounts) {
    auto real = RealPath(ExpandHome(p));
    if (!real) return MakeError("--system-mount", p, real.error().Message());
    MCPCELL_TRY(CheckNotCredential(*real));
    spec.mounts.push_back(MountSpec{MountSpec::Kind::kBind, *real, *real, false, false, 0, "--system-mount"});
  }
  // Writable scratch: tmpfs /tmp (size-capped) and a tmpfs home. Listed here so
  // the planner mounts them before user binds beneath them (/tmp/work).
  spec.mounts.push_back(MountSpec{MountSpec::Kind::kTmpfs, "", "/tmp", true, false, spec.limits.tmp_bytes, "tmp"});
  spec.mounts.push_back(MountSpec{MountSpec::Kind::kTmpfs, "", spec.home, true, false, 64ULL << 20, "home"});
  for (const auto& r : req.read) MCPCELL_TRY(AddUserBind(&spec, r, false, req.force_credentials, "--read", notes));
  for (const auto& w : req.write) MCPCELL_TRY(AddUserBind(&spec, w, true, req.force_credentials, "--write", notes));
  if (!req.no_auto_mount) MCPCELL_TRY(AddServerMounts(&spec, notes));
  MCPCELL_TRY(AddEnv(&spec, req));
  // Keep the caller's cwd when the cell has it, so relative paths mean the same.
  std::error_code ec;
  std::string cwd = fs::current_path(ec).string();
  spec.workdir = spec.home;
  for (const auto& m : spec.mounts) {
    if (m.kind == MountSpec::Kind::kBind && m.why != "system" && !ec && AtOrBelow(cwd, m.source) &&
        m.source == m.target) {
      spec.workdir = cwd;
    }
  }
  return spec;
}

}  // namespace mcpcell
