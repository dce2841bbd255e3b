#include "cell/native/idmap_mount.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <utility>

#include "cell/bind_source.h"

namespace mcpcell {
namespace {

// How many entries a writable grant may hold for the setuid search (as the
// credential scan: a bigger tree is bound as the cell's own id instead).
constexpr std::size_t kScanBudget = 200000;
constexpr int kScanDepth = 64;

// The owner's primary group (passwd), the group its own new files get; the
// directory's group only when the owner has no passwd entry. Never the
// directory's group otherwise: root may have set one the owner is not in.
std::uint32_t OwnerGroup(const struct stat& st) {
  struct passwd pw{};
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) return pw.pw_gid;
  return st.st_gid;
}

Status WriteMap(pid_t pid, const char* name, const std::string& lines) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd || ::write(fd.get(), lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) {
    return ErrnoError("write the idmapped mount's " + std::string(name), path);
  }
  return {};
}

int WaitForKill(void*) {
  for (;;) ::pause();
}

// A user namespace that exists only to carry the mapping: a child is cloned
// into it (sharing our memory, a small stack), the maps are written, its
// /proc/PID/ns/user opened, and the child killed. The fd keeps the namespace.
Result<UniqueFd> IdmapUserns(std::uint32_t uid, std::uint32_t gid, const HostIds& host) {
  constexpr std::size_t kStack = 64 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return ErrnoError("allocate a stack for the idmap namespace");
  pid_t pid = ::clone(WaitForKill, static_cast<char*>(stack) + kStack, CLONE_NEWUSER | CLONE_VM | SIGCHLD, nullptr);
  if (pid < 0) {
    Error e = ErrnoError("create the user namespace of an idmapped mount");
    ::munmap(stack, kStack);
    return e;
  }
  Status maps = WriteMap(pid, "uid_map", IdmapLines(uid, host.uid));
  if (maps) maps = WriteMap(pid, "gid_map", IdmapLines(gid, host.gid));
  UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
  int open_err = errno;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
  }
  ::munmap(stack, kStack);
  if (!maps) return maps.error();
  if (!ns) return Error{"open the idmapped mount's user namespace", "", open_err, {}};
  return ns;
}

// The detached copy of the grant's mount tree, idmapped and flagged in one
// mount_setattr(2): private, so nothing mounted in the cell (masks) can
// propagate back to the host's peers.
Result<UniqueFd> IdmappedTree(int source, const MountSpec& m, int userns) {
  UniqueFd tree(static_cast<int>(::syscall(SYS_open_tree, source, "",
                                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)));
  if (!tree) return ErrnoError("copy the mount tree of", m.source);
  struct mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (m.writable ? 0 : MOUNT_ATTR_RDONLY);
  attr.userns_fd = static_cast<std::uint64_t>(userns);
  attr.propagation = MS_PRIVATE;
  if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    return ErrnoError("idmap the mount of", m.source);
  }
  return tree;
}

std::string FilesystemName(int fd) {
  struct statfs sf{};
  if (::fstatfs(fd, &sf) != 0) return "?";
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(sf.f_type));
  return std::string("filesystem magic ") + hex;
}

// Whether the file at `proc_path` has security.capability: `follow` for
// /proc/self/fd/N itself (the magic link is the file), not for a name below
// a directory fd. Fails closed: an attribute that cannot be read (anything
// but "none" or "no xattrs here") counts.
bool HasFileCapabilities(const std::string& proc_path, bool follow) {
  const char* p = proc_path.c_str();
  if ((follow ? ::getxattr(p, "security.capability", nullptr, 0) : ::lgetxattr(p, "security.capability", nullptr, 0)) >= 0) {
    return true;
  }
  return errno != ENODATA && errno != ENOTSUP;
}

// Why a writable grant must stay the cell's own: a shared directory, the
// owner's setuid file, or a tree too big to search. Empty: map it.
std::string WritableGrantReason(const CellSpec& spec, int source, const struct stat& st, std::uint32_t gid) {
  if (!spec.seccomp) return "without the seccomp filter the cell could create setuid files as the owner";
  if (S_ISDIR(st.st_mode)) {
    if (auto shared = SharedDirectoryReason(st.st_mode); !shared.empty()) return shared;
  }
  if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
    return "it is a setuid/setgid file; as its owner the cell could rewrite it through mmap, which keeps the bit";
  }
  // Any mode: the cell could rewrite a 0644 capability file through mmap
  // and then chmod +x it, which keeps security.capability too.
  std::string at = "/proc/self/fd/" + std::to_string(source);  // O_PATH: fgetxattr would be EBADF
  if (S_ISREG(st.st_mode) && HasFileCapabilities(at, true)) {
    return "it has file capabilities; as its owner the cell could rewrite it through mmap, which keeps them";
  }
  if (!S_ISDIR(st.st_mode)) return {};
  auto found = FindOwnersSetIdFile(source, st.st_uid, gid, kScanBudget);
  if (!found) return found.error().Message();
  if (!found->empty()) {
    return "it holds " + *found +
           "; as its owner the cell could rewrite such a file through mmap (which keeps the bit and the "
           "capabilities) or replace other users' files in a shared directory";
  }
  return {};
}

// One grant: the tree, or why not (reason set, no tree), or a hard error.
Result<UniqueFd> MapOneGrant(const CellSpec& spec, const MountSpec& m, const HostIds& host,
                             std::map<std::pair<std::uint32_t, std::uint32_t>, UniqueFd>* namespaces,
                             std::string* reason, bool* shared) {
  auto source = OpenCheckedBindSource(m);
  if (!source) return source.error();
  struct stat st{};
  if (::fstat(source->get(), &st) != 0) return ErrnoError("stat mount source", m.source);
  if (st.st_uid == host.uid) return UniqueFd();  // the cell's own already
  *shared = m.writable && S_ISDIR(st.st_mode) && !SharedDirectoryReason(st.st_mode).empty();
  if (!host.privileged) {
    // Someone else's files read as "other" are what a normal user expects;
    // only where the cell writes is the owner's identity at stake.
    if (m.writable) *reason = "only root can map ids; the cell writes as you (uid " + std::to_string(host.uid) + ")";
    return UniqueFd();
  }
  std::uint32_t gid = OwnerGroup(st);
  if (m.writable) {
    *reason = WritableGrantReason(spec, source->get(), st, gid);
    if (!reason->empty()) return UniqueFd();
  }
  auto key = std::make_pair(static_cast<std::uint32_t>(st.st_uid), gid);
  if (namespaces->count(key) == 0) {
    auto ns = IdmapUserns(key.first, key.second, host);
    if (!ns) {
      *reason = "no user namespace for the mapping (" + ns.error().Message() + ")";
      return UniqueFd();
    }
    (*namespaces)[key] = std::move(*ns);
  }
  auto tree = IdmappedTree(source->get(), m, (*namespaces)[key].get());
  if (!tree && (tree.error().err == EINVAL || tree.error().err == EPERM || tree.error().err == ENOSYS)) {
    *reason = "the kernel cannot idmap it (" + FilesystemName(source->get()) + ", or a mount below it: " +
              tree.error().Message() + "; idmapped mounts need Linux 5.12, tmpfs 6.3)";
    return UniqueFd();
  }
  return tree;
}

}  // namespace

std::string IdmapLines(std::uint32_t from, std::uint32_t to) {
  std::string out = std::to_string(from) + " " + std::to_string(to) + " 1\n";
  // Identity for every id but `from` (mapped above) and `to` (its host id is
  // taken): [0,lo) (lo,hi) (hi,2^32-1). 4294967295 is (uid_t)-1, never an id.
  std::uint64_t lo = std::min(from, to), hi = std::max(from, to);
  auto identity = [&out](std::uint64_t first, std::uint64_t end) {
    if (end > first) out += std::to_string(first) + " " + std::to_string(first) + " " + std::to_string(end - first) + "\n";
  };
  identity(0, lo);
  if (hi != lo) identity(lo + 1, hi);
  identity(hi + 1, 4294967295ULL);
  return out;
}

std::string SharedDirectoryReason(unsigned mode) {
  if ((mode & S_ISVTX) != 0 || (mode & S_IWOTH) != 0) {
    return "it is shared with every user (sticky or world-writable); as its owner the cell could delete or "
           "replace other users' files there";
  }
  return {};
}

namespace {

struct ScanState {
  std::uint32_t uid, gid;
  std::size_t left;
  std::string found;
};

// A setuid/setgid file, or a file with file capabilities
// (security.capability) of any mode: both keep their privilege through an
// mmap write, and chmod(2) by the owner keeps capabilities, so a 0644
// capability file becomes a capability program once the cell adds +x.
bool IsPrivileged(int dir, const std::string& name, const struct stat& st) {
  if ((st.st_mode & (S_ISUID | S_ISGID)) != 0) return true;
  return HasFileCapabilities("/proc/self/fd/" + std::to_string(dir) + "/" + name, false);
}

// What makes one entry below a writable grant a reason not to map it, in
// words for the note; empty: nothing.
std::string EntryReason(int dir, const std::string& name, const std::string& path, const struct stat& st,
                        const ScanState& s) {
  if (S_ISREG(st.st_mode) && (st.st_uid == s.uid || st.st_gid == s.gid) && IsPrivileged(dir, name, st)) {
    return "a setuid/setgid file or one with file capabilities of its owner (" + path + ")";
  }
  if (S_ISDIR(st.st_mode) && !SharedDirectoryReason(st.st_mode).empty()) {
    return "a shared (sticky or world-writable) directory (" + path + ")";
  }
  return {};
}

Status ScanDir(int dir, const std::string& rel, int depth, ScanState* s) {
  if (depth > kScanDepth) return MakeError("search for setuid files", rel, "deeper than 64 levels; grant a narrower directory");
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return ErrnoError("search for setuid files in", rel.empty() ? "." : rel);
  }
  Status out;
  for (;;) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (e == nullptr) {
      // readdir(3) ends with NULL on an error too, told apart only by errno.
      if (errno != 0) out = ErrnoError("search for setuid files: read", rel.empty() ? "." : rel);
      break;
    }
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (s->left-- == 0) {
      out = MakeError("search for setuid files", rel, "more than 200000 entries; grant a narrower directory");
      break;
    }
    std::string path = rel.empty() ? name : rel + "/" + name;
    // Fail closed: what cannot be looked at cannot be called clean; only an
    // entry removed meanwhile (ENOENT) is skipped.
    struct stat st{};
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      out = ErrnoError("search for setuid files: stat", path);
      break;
    }
    s->found = EntryReason(::dirfd(d), name, path, st, *s);
    if (!s->found.empty()) break;
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd sub(::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub) {
      out = ErrnoError("search for setuid files: open the directory", path);
      break;
    }
    out = ScanDir(sub.get(), path, depth + 1, s);
    if (!out || !s->found.empty()) break;
  }
  ::closedir(d);
  return out;
}

}  // namespace

Result<std::string> FindOwnersSetIdFile(int dir, std::uint32_t uid, std::uint32_t gid, std::size_t budget) {
  ScanState s{uid, gid, budget, {}};
  MCPCELL_TRY(ScanDir(dir, "", 0, &s));
  return s.found;
}

Result<IdmappedGrants> MapGrantsToOwners(const CellSpec& spec, const std::vector<MountSpec>& planned,
                                         const HostIds& host, std::vector<std::string>* notes) {
  IdmappedGrants out;
  out.trees.resize(planned.size());
  if (spec.idmap == CellSpec::Idmap::kOff) return out;
  std::map<std::pair<std::uint32_t, std::uint32_t>, UniqueFd> namespaces;  // one per (owner, group)
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const MountSpec& m = planned[i];
    if (m.kind != MountSpec::Kind::kBind || m.origin != MountSpec::Origin::kGrant) continue;
    std::string reason;
    bool shared = false;
    auto tree = MapOneGrant(spec, m, host, &namespaces, &reason, &shared);
    if (!tree) return tree.error();
    out.trees[i] = std::move(*tree);
    if (reason.empty()) continue;
    std::string what = std::string(m.writable ? "--write " : "--read ") + m.source;
    if (spec.idmap == CellSpec::Idmap::kOn) {
      return MakeError("--idmap=on", m.source,
                       "cannot mount it as its owner's: " + reason + "; use --idmap=auto to bind it as the cell's own id");
    }
    // A shared directory is writable by the cell's own id anyway, as it was
    // before idmapped mounts: nothing to say unless the user asked for them.
    if (shared) continue;
    notes->push_back(what + " is not mapped to its owner: " + reason +
                     "; the cell uses it as its own id (--idmap=on refuses instead)");
  }
  return out;
}

}  // namespace mcpcell
