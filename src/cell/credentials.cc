#include "cell/credentials.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <set>
#include <string_view>

#include "util/path_prefix.h"

namespace mcpcell {
namespace {

struct Location {
  std::string_view rel;     // relative to a home directory (or absolute when it starts with '/')
  std::string_view what;    // for the message
  bool file_only = false;   // a directory of that name is something else (a virtualenv called .env)
};

// Relative entries are matched as path components anywhere, not only under
// $HOME: /srv/backup/alice/.ssh is as secret as ~/.ssh, and ~/work/sub/.npmrc
// as ~/.npmrc. Shell and REPL histories hold pasted tokens and passwords
// typed on command lines; .env files hold a project's API keys (issue 18 item 14).
constexpr Location kLocations[] = {
    {".ssh", "SSH keys"},
    {".gnupg", "GnuPG keys"},
    {".aws", "AWS credentials"},
    {".azure", "Azure credentials"},
    {".config/gcloud", "Google Cloud credentials"},
    {".kube", "Kubernetes credentials"},
    {".docker", "Docker credentials"},
    {".config/gh", "GitHub CLI token"},
    {".config/hub", "GitHub hub token"},
    {".netrc", "netrc passwords"},
    {".git-credentials", "git credentials"},
    {".config/git/credentials", "git credentials", true},  // git's store under $XDG_CONFIG_HOME (adv23)
    // podman, skopeo and buildah's lasting registry login (adv23)
    {".config/containers/auth.json", "container registry credentials (podman, skopeo, buildah)", true},
    {".config/helm/registry/config.json", "Helm registry credentials", true},
    {".config/rclone/rclone.conf", "rclone cloud storage credentials", true},
    {".s3cfg", "S3 credentials (s3cmd)", true},
    {".boto", "boto / gsutil credentials", true},
    {".config/doctl", "DigitalOcean token"},
    {".oci", "Oracle Cloud credentials"},
    {".databrickscfg", "Databricks token", true},
    {".huggingface/token", "Hugging Face token", true},
    {".cache/huggingface/token", "Hugging Face token", true},
    {".m2/settings.xml", "Maven repository passwords", true},
    {".gradle/gradle.properties", "Gradle repository credentials", true},
    {".composer/auth.json", "Composer tokens", true},
    {".config/composer/auth.json", "Composer tokens", true},
    // AI coding agents' logins: the clients an MCP server runs beside.
    {".claude/.credentials.json", "Claude Code login", true},
    {".codex/auth.json", "Codex CLI login", true},
    {".npmrc", "npm token"},
    {".yarnrc.yml", "yarn registry token"},
    {".pypirc", "PyPI token"},
    {".config/pip/pip.conf", "pip config (index URLs with tokens)", true},
    {".pip/pip.conf", "pip config (index URLs with tokens)", true},
    {".config/uv/uv.toml", "uv config (index URLs with tokens)", true},
    {".pgpass", "PostgreSQL passwords"},
    {".my.cnf", "MySQL passwords"},
    {".vault-token", "HashiCorp Vault token"},
    {".terraform.d/credentials.tfrc.json", "Terraform Cloud token"},
    {".cargo/credentials", "crates.io token"},
    {".cargo/credentials.toml", "crates.io token"},
    {".gem/credentials", "RubyGems token"},
    {".env", "environment secrets (.env)", true},
    {".envrc", "direnv environment (often exports secrets)", true},
    {"id_rsa", "SSH private key", true},
    {"id_ecdsa", "SSH private key", true},
    {"id_ed25519", "SSH private key", true},
    {"id_dsa", "SSH private key", true},
    {".bash_history", "shell history", true},
    {".zsh_history", "shell history", true},
    {".history", "shell history", true},
    {".python_history", "Python history", true},
    {".node_repl_history", "Node REPL history", true},
    {".psql_history", "psql history", true},
    {".mysql_history", "MySQL history", true},
    {".sqlite_history", "SQLite history", true},
    {".lesshst", "less history", true},
    {".password-store", "pass password store"},
    // mcpcell's own state (cell/hidden_dirs.h) of any account, where the
    // account's default puts it: an id-mapped grant of another user's home
    // showed that user's stderr copies and let a --write forge their pins (adv22).
    {".local/state/mcpcell", "mcpcell's state directory (cell records, logs, tool pins)"},
    {"/var/lib/mcpcell", "mcpcell's state directory (cell records, logs, tool pins)"},
    {".local/share/keyrings", "desktop keyring"},
    {".mozilla", "browser profile"},
    {".config/google-chrome", "browser profile"},
    {".config/chromium", "browser profile"},
    {"/var/run/docker.sock", "Docker engine socket (root on the host)"},
    {"/run/user", "per-user runtime sockets (session bus, agents, rootless engines)"},
    {"/run/dbus", "system D-Bus socket"},
    {"/var/run/dbus", "system D-Bus socket"},
    {"/run/systemd", "systemd control sockets"},
    {"/tmp/.X11-unix", "X11 display sockets"},
    {"/run/docker.sock", "Docker engine socket (root on the host)"},
    {"/run/podman", "Podman engine socket"},
    {"/run/containerd", "containerd socket"},
    // npm's global npmrc (`npm config set --global` writes a registry token
    // there): Debian's npm reads /usr/etc/npmrc, a prefix install
    // /usr/local/etc/npmrc, some distributions /etc/npmrc (adv13).
    {"/usr/etc/npmrc", "npm's global config (registry tokens)"},
    {"/usr/local/etc/npmrc", "npm's global config (registry tokens)"},
    {"/etc/npmrc", "npm's global config (registry tokens)"},
    {"/etc/shadow", "password hashes"},
    {"/etc/gshadow", "group password hashes"},
    {"/etc/sudoers", "sudo rules"},
    {"/proc/kcore", "kernel memory"},
    {"/dev/mem", "physical memory"},
    {"/dev/kmem", "kernel memory"},
};

bool Exists(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& p) {
  struct stat st{};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// .env and its variants (.env.local, .env.production): dotenv loads them all.
bool IsDotEnvName(std::string_view name) { return name == ".env" || name.rfind(".env.", 0) == 0; }

// The credential location `path` names exactly (its last components), if any.
const Location* LocationNamedBy(std::string_view path, bool is_dir) {
  auto slash = path.rfind('/');
  std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (const auto& loc : kLocations) {
    if (loc.rel.front() == '/') continue;
    if (loc.file_only && is_dir) continue;
    if (loc.rel == ".env") {
      if (IsDotEnvName(last)) return &loc;
      continue;
    }
    if (path.size() > loc.rel.size() && path.substr(path.size() - loc.rel.size()) == loc.rel &&
        path[path.size() - loc.rel.size() - 1] == '/') {
      return &loc;
    }
  }
  return nullptr;
}

Error Refusal(const std::string& path, const std::string& at, std::string_view what) {
  return MakeError("refusing to expose", path,
                   std::string(what) + (at == path ? "" : " (" + at + ")") +
                       " — pass --force-credentials if you really mean it");
}

// Directories not worth the budget: published package trees and git's object
// store hold no one's credentials, and they are most of a project's entries.
bool Pruned(std::string_view parent, std::string_view name) {
  if (name == "node_modules" || name == "__pycache__") return true;
  // Kernel filesystems: no credential files, and enough entries to exhaust any budget.
  if (parent == "/" && (name == "proc" || name == "sys")) return true;
  return name == "objects" && parent.size() >= 5 && parent.substr(parent.size() - 5) == "/.git";
}

// The direct credential locations of each home above which `dir` lies, so
// `--read /` or `--read /home` masks /home/*/.ssh whatever the scan budget.
void AddHomes(const std::string& dir, std::set<std::string>* found) {
  std::vector<std::string> homes;
  if (dir == "/") homes = {"/root"};
  if (dir == "/" || dir == "/home") {
    if (auto* d = ::opendir("/home")) {
      while (auto* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") homes.push_back("/home/" + n);
      }
      ::closedir(d);
    }
  }
  for (const auto& h : homes) {
    for (const auto& loc : kLocations) {
      if (loc.rel.front() == '/' || loc.rel == ".env") continue;
      std::string p = h + "/" + std::string(loc.rel);
      if (Exists(p) && !(loc.file_only && IsDirectory(p))) found->insert(p);
    }
  }
}

}  // namespace

Status CheckNotCredential(const std::string& path) {
  for (const auto& loc : kLocations) {
    if (loc.rel.front() == '/') {
      if (PathAtOrBelow(path, loc.rel)) return Refusal(path, path, loc.what);
      continue;
    }
  }
  // Relative locations: each prefix of the path, as the scan would see it.
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    std::string prefix = path.substr(0, at);
    // A prefix that is not there cannot be told a file from a directory: refuse by name.
    if (const Location* loc = LocationNamedBy(prefix, at != std::string::npos || IsDirectory(prefix))) {
      return Refusal(path, prefix, loc->what);
    }
    if (at == std::string::npos) break;
  }
  return {};
}

namespace {

// The credential half of one directory entry (CredentialsBeneath's rules).
// Returns whether the walk looks for credentials below it.
bool CredentialEntry(const std::string& parent, std::string_view name, const std::string& path, bool is_dir,
                     std::size_t depth, const CredentialScanLimits& limits, std::size_t* seen,
                     std::set<std::string>* found, CredentialScan* out) {
  if (++*seen > limits.max_entries) {
    out->truncated = true;
    out->gave_up = "after " + std::to_string(limits.max_entries) + " entries, in " + parent;
    return false;
  }
  if (found->count(path) != 0) return false;
  if (LocationNamedBy(path, is_dir) != nullptr) {
    found->insert(path);
    return false;  // masked whole: nothing below it needs a look
  }
  if (!is_dir || Pruned(parent, name)) return false;
  if (depth + 1 > limits.max_depth) {
    out->truncated = true;
    out->gave_up = "at depth " + std::to_string(limits.max_depth) + ", in " + path;
    return false;
  }
  return true;
}

// The credential locations outside the walk: absolute ones below `dir`,
// and the homes `dir` lies above.
std::set<std::string> FixedLocationsBelow(const std::string& dir) {
  std::set<std::string> found;
  for (const auto& loc : kLocations) {
    if (loc.rel.front() != '/') continue;
    if (PathAtOrBelow(loc.rel, dir) &&
        Exists(std::string(loc.rel))) {
      found.emplace(loc.rel);
    }
  }
  AddHomes(dir, &found);
  return found;
}

// The stamp of a directory the walk read (open at `fd`), or could not open
// (fd -1: by path; its parent was read, so a change of its permissions later
// shows in its own ctime). Without one, or on a filesystem whose stamps do
// not follow its entries, the scan is not kept (grant_scan_cache.h).
void AddStamp(int fd, const std::string& root, const std::string& dir, std::set<std::uint64_t>* mounts, GrantScan* out) {
  auto s = fd >= 0 ? StampOf(fd) : StampAt(dir);
  if (!s) {
    out->cacheable = false;
    return;
  }
  if (fd >= 0 && mounts->insert(s->mnt).second && !StampsHoldOn(fd)) out->cacheable = false;
  s->rel = dir.size() > root.size() ? dir.substr(root == "/" ? 1 : root.size() + 1) : "";
  out->walked.push_back(std::move(*s));
}

// A directory the walk cannot open. Gone or replaced since its parent was
// read: nothing to scan there (the parent's stamp moved). Not listable: masked
// whole. Anything else (a path past PATH_MAX, no descriptors left): what is
// below is unknown, so the scan gives up and the grant is refused (fail closed:
// 17 levels of 250-byte names once hid a socket from the scan, adversary pass).
// False when the walk must stop.
bool CannotOpen(const std::string& root, const std::string& dir, int err, std::set<std::uint64_t>* mounts,
                GrantScan* out) {
  if (err == ENOENT || err == ELOOP || err == ENOTDIR) return true;
  if (err == EACCES || err == EPERM) {
    out->unreadable.push_back(dir);
    AddStamp(-1, root, dir, mounts, out);
    return true;
  }
  out->creds.truncated = out->sockets.truncated = true;
  out->creds.gave_up = "could not open " + dir + ": " + std::strerror(err);
  return false;
}

struct Pending {
  std::string dir;
  std::size_t depth;
  bool creds;  ///< the credential scan looks here (not pruned, not below a location found)
};

// One breadth-first walk serving both scans; `creds` false: sockets only,
// `socket_budget` 0: credentials only. Each scan stops at its own limit.
GrantScan Walk(const std::string& dir, bool creds, std::size_t socket_budget, const CredentialScanLimits& limits) {
  GrantScan out;
  std::set<std::string> found;
  if (creds) found = FixedLocationsBelow(dir);
  out.fixed.assign(found.begin(), found.end());
  bool sockets = socket_budget > 0;
  std::deque<Pending> todo{{dir, 0, creds}};
  std::size_t creds_seen = 0, sockets_seen = 0;
  std::set<std::uint64_t> mounts;
  while (!todo.empty()) {
    Pending d = std::move(todo.front());
    todo.pop_front();
    d.creds = d.creds && !out.creds.truncated;
    if (!d.creds && !sockets) continue;
    // O_NOFOLLOW: a symlink inside the grant leads, inside the cell, to the
    // cell's own view; following it here would scan (and mask) the wrong tree.
    int fd = ::open(d.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      if (CannotOpen(dir, d.dir, errno, &mounts, &out)) continue;
      break;
    }
    AddStamp(fd, dir, d.dir, &mounts, &out);
    DIR* dp = ::fdopendir(fd);
    if (dp == nullptr) {
      ::close(fd);
      continue;
    }
    while (auto* e = ::readdir(dp)) {
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = (d.dir == "/" ? "" : d.dir) + "/" + std::string(name);
      // getdents' d_type names the entry itself, as lstat would; only a
      // filesystem that does not fill it in costs a stat.
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st{};
        if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISSOCK(st.st_mode) ? DT_SOCK : DT_REG;
      }
      bool creds_below = d.creds && !out.creds.truncated &&
                         CredentialEntry(d.dir, name, path, type == DT_DIR, d.depth, limits, &creds_seen, &found,
                                         &out.creds);
      if (sockets && ++sockets_seen > socket_budget) {
        out.sockets.truncated = true;
        sockets = false;
      }
      if (sockets && type == DT_SOCK) out.sockets.sockets.push_back(path);
      if (type == DT_DIR && (creds_below || sockets)) todo.push_back({path, d.depth + 1, creds_below});
    }
    ::closedir(dp);
    if (out.creds.truncated && !sockets) break;
  }
  if (creds) out.creds.found = OutermostOnly({found.begin(), found.end()});
  return out;
}

}  // namespace

namespace {

// A mountinfo field: spaces, tabs, newlines and backslashes as \ooo.
std::string Unescaped(std::string_view f) {
  auto oct = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '\\' && i + 3 < f.size() && oct(f[i + 1]) && oct(f[i + 2]) && oct(f[i + 3])) {
      out.push_back(static_cast<char>((f[i + 1] - '0') * 64 + (f[i + 2] - '0') * 8 + (f[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(f[i]);
    }
  }
  return out;
}

// The fifth field of a mountinfo line ("ID PARENT MAJ:MIN ROOT MOUNTPOINT ..."), unescaped.
std::string MountPointOf(std::string_view line) {
  for (int skip = 0; skip < 4; ++skip) {
    std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return "";
    line.remove_prefix(sp + 1);
  }
  return Unescaped(line.substr(0, line.find(' ')));
}

}  // namespace

std::vector<std::string> MountedSocketsBelow(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::string point = MountPointOf(line);
    if (point.empty() || point == dir || !PathAtOrBelow(point, dir)) {
      continue;
    }
    struct stat st{};
    if (::lstat(point.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) out.push_back(point);
  }
  return out;
}

std::vector<std::string> FixedCredentialsBelow(const std::string& dir) {
  std::set<std::string> found = FixedLocationsBelow(dir);
  return {found.begin(), found.end()};
}

std::vector<std::string> OutermostOnly(const std::vector<std::string>& found) {
  std::vector<std::string> out;
  for (const auto& p : found) {
    bool covered = false;
    for (const auto& q : out) covered = covered || PathAtOrBelow(p, q);
    if (!covered) out.push_back(p);
  }
  return out;
}

std::string GrantScanRulesDigest(std::size_t socket_budget, const CredentialScanLimits& limits) {
  // FNV-1a over everything the walk's verdicts depend on; not a security
  // hash (the cache file is the user's own, checked as such), a version.
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;  // a separator no byte of a name can be
  };
  for (const auto& loc : kLocations) {
    mix(loc.rel);
    mix(loc.file_only ? "f" : "-");
  }
  // What Pruned() and the walk's other rules are; bump when they change.
  mix("pruned: node_modules __pycache__ /proc /sys .git/objects; dotenv; symlinks not followed; v1");
  mix(std::to_string(limits.max_entries) + "/" + std::to_string(limits.max_depth) + "/" + std::to_string(socket_budget));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

CredentialScan CredentialsBeneath(const std::string& dir, const CredentialScanLimits& limits) {
  return Walk(dir, true, 0, limits).creds;
}

GrantScan ScanGrant(const std::string& dir, std::size_t socket_budget, const CredentialScanLimits& limits) {
  GrantScan scan = Walk(dir, true, socket_budget, limits);
  for (auto& s : MountedSocketsBelow(dir)) {
    if (std::find(scan.sockets.sockets.begin(), scan.sockets.sockets.end(), s) == scan.sockets.sockets.end()) {
      scan.sockets.sockets.push_back(std::move(s));
    }
  }
  return scan;
}

SocketScan FindSockets(const std::string& dir, std::size_t max_entries) {
  if (max_entries == 0) return SocketScan{{}, true};
  return Walk(dir, false, max_entries, {}).sockets;
}

}  // namespace mcpcell
