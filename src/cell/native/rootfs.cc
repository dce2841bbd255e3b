#include "cell/native/rootfs.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>

#include "cell/bind_source.h"
#include "egress/cell_net.h"
#include "util/phase_trace.h"

namespace mcpcell {
namespace {

// Where the new root is assembled inside the child's private mount namespace.
// Mounting over the namespace's /tmp hides nothing on the host.
constexpr const char* kBuildDir = "/tmp";

std::string Rel(const std::string& cell_path) { return "." + cell_path; }

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

Status MkdirP(const std::string& rel, mode_t mode = 0755) {
  std::string cur;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = rel.find('/', pos + 1);
    cur = rel.substr(0, pos);
    if (cur == ".") continue;
    if (::mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) return ErrnoError("mkdir", cur.substr(1));
  }
  return {};
}

Status MakeMountPoint(const std::string& rel, bool dir) {
  // Already there (a masked file or socket inside a read-only bind): mount
  // over it as it is; creating would fail with EROFS or ENXIO.
  struct stat st{};
  if (::lstat(rel.c_str(), &st) == 0 && S_ISDIR(st.st_mode) == dir) return {};
  auto slash = rel.rfind('/');
  MCPCELL_TRY(MkdirP(rel.substr(0, slash)));
  if (dir) {
    if (::mkdir(rel.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoError("mkdir", rel.substr(1));
    return {};
  }
  int fd = ::open(rel.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create mount point", rel.substr(1));
  ::close(fd);
  return {};
}

// mount_setattr(2) applies flags to a whole bind tree at once; a plain
// MS_REMOUNT would leave submounts (/usr/... ) writable.
Status SetAttrs(const std::string& rel, std::uint64_t set, bool recursive) {
  struct mount_attr attr{};
  attr.attr_set = set;
  long r = ::syscall(SYS_mount_setattr, AT_FDCWD, rel.c_str(), recursive ? AT_RECURSIVE : 0, &attr, sizeof attr);
  if (r != 0) return ErrnoError("set mount attributes on", rel.substr(1));
  return {};
}

Status MountTmpfs(const std::string& rel, std::uint64_t size, mode_t mode, const CellSpec& spec,
                  unsigned long flags = MS_NOSUID | MS_NODEV) {
  char opts[128];
  std::snprintf(opts, sizeof opts, "size=%llu,mode=%04o,uid=%u,gid=%u",
                static_cast<unsigned long long>(size == 0 ? (64ULL << 20) : size), mode, spec.uid, spec.gid);
  if (::mount("tmpfs", rel.c_str(), "tmpfs", flags, opts) != 0) return ErrnoError("mount tmpfs on", rel.substr(1));
  return {};
}

Status BindFd(int fd, const std::string& rel, std::uint64_t attrs) {
  if (::mount(FdPath(fd).c_str(), rel.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    return ErrnoError("bind mount onto", rel.substr(1));
  }
  return SetAttrs(rel, attrs, true);
}

// The supervisor's idmapped copy of a grant (idmap_mount.h), flags already
// set (read-only unless --write, nosuid, nodev, private): attached, not bound.
Status AttachIdmappedTree(int tree, const std::string& rel, const MountSpec& m) {
  if (::syscall(SYS_move_mount, tree, "", AT_FDCWD, rel.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    return ErrnoError("attach the idmapped mount of " + m.source + " onto", m.target);
  }
  return {};
}

Status WriteFile(const std::string& rel, const std::string& content, mode_t mode) {
  int fd = ::open(rel.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return ErrnoError("create", rel.substr(1));
  bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  ::close(fd);
  if (!ok) return ErrnoError("write", rel.substr(1));
  return {};
}

// A masked path, opened below the directory being assembled (the cwd)
// without following symlinks: it lies inside a bind another cell may write,
// which could have put a symlink on the way since the scan (openat2(2)
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS). Never created: a masked path that is
// gone or changed type changed after the scan, and the launch stops.
Result<UniqueFd> OpenMaskTarget(const std::string& rel, bool want_dir) {
  struct open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long raw = ::syscall(SYS_openat2, AT_FDCWD, rel.c_str(), &how, sizeof how);
  if (raw < 0 && errno == ENOSYS) raw = ::open(rel.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);  // before 5.6
  if (raw < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOENT || errno == ENOTDIR)) {
    return MakeError("mask", rel.substr(1),
                     std::string(errno == ENOENT || errno == ENOTDIR ? "it is gone"
                                                                     : "a symbolic link is now on the way to it") +
                         "; it changed after mcpcell scanned the grant (another process — maybe a cell with "
                         "--write on it — moved it). Launch again");
  }
  if (raw < 0) return ErrnoError("open the path to mask (as the cell user)", rel.substr(1));
  UniqueFd fd(static_cast<int>(raw));
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat mask target", rel.substr(1));
  if (S_ISDIR(st.st_mode) != want_dir || S_ISLNK(st.st_mode)) {
    return MakeError("mask", rel.substr(1), "changed type after mcpcell scanned the grant; launch again");
  }
  return fd;
}

// Masks are mounted on the opened object (/proc/self/fd/N), never the path.
Status MountMask(const CellSpec& spec, const MountSpec& m, int source_fd, const std::string& rel) {
  bool dir = m.kind == MountSpec::Kind::kTmpfs;
  auto at = OpenMaskTarget(rel, dir);
  if (!at) return at.error();
  if (dir) return MountTmpfs(FdPath(at->get()), 4096, 0, spec, MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY);
  if (::mount(FdPath(source_fd).c_str(), FdPath(at->get()).c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return ErrnoError("mask", m.target);
  }
  // The bind now sits on top: open it again (same rules) to make it read-only.
  auto top = OpenMaskTarget(rel, false);
  if (!top) return top.error();
  struct mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC;
  if (::syscall(SYS_mount_setattr, top->get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    return ErrnoError("set mount attributes on mask", m.target);
  }
  return {};
}

bool IsGrantBind(const MountSpec& m) { return m.kind == MountSpec::Kind::kBind && m.origin == MountSpec::Origin::kGrant; }

bool StrictlyBelow(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && (dir == "/" || path[dir.size()] == '/');
}

// A read-only grant inside a writable one (--write D --read D/a/sub) is a
// mount point, which the cell cannot rename or remove (rename(2), rmdir(2):
// EBUSY), but its parents are plain directories of the writable grant: `mv
// D/a D/b` carries the read-only mount along with its dentry, and the cell
// could then make a new D/a/sub of its own on the host. Bind-mounting each
// directory between the two grants onto itself makes it a mount point in
// the cell's namespace too, so none of them can be moved or removed. MS_REC
// keeps the mounts below (the read-only grant) and the clone keeps the
// idmap and the nosuid/nodev/rdonly flags of the mount it copies.
Status PinNestedReadOnlyGrants(const std::vector<MountSpec>& planned) {
  std::set<std::string> targets, pins;
  for (const auto& m : planned) targets.insert(m.target);
  for (const auto& ro : planned) {
    if (!IsGrantBind(ro) || ro.writable) continue;
    for (const auto& w : planned) {
      if (!IsGrantBind(w) || !w.writable || !StrictlyBelow(ro.target, w.target)) continue;
      for (auto slash = ro.target.find('/', w.target.size() + 1); slash != std::string::npos;
           slash = ro.target.find('/', slash + 1)) {
        std::string dir = ro.target.substr(0, slash);
        if (targets.count(dir) == 0) pins.insert(dir);
      }
    }
  }
  // std::set orders a parent before its children: a child's pin lands in
  // the copy its parent's pin made (the visible one), so none is hidden.
  for (const auto& dir : pins) {
    if (::mount(Rel(dir).c_str(), Rel(dir).c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      return ErrnoError("pin the directory above a read-only grant", dir);
    }
  }
  return {};
}

Status MountPlanned(const CellSpec& spec, const std::vector<MountSpec>& planned, RootfsSources& src) {
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const MountSpec& m = planned[i];
    auto& e = src.mounts[i];
    std::string rel = Rel(m.target);
    if (!e.link_target.empty()) {
      MCPCELL_TRY(MkdirP(rel.substr(0, rel.rfind('/'))));
      if (::symlink(e.link_target.c_str(), rel.c_str()) != 0 && errno != EEXIST) {
        return ErrnoError("symlink", m.target);
      }
      continue;
    }
    if (IsMask(m)) {
      MCPCELL_TRY(MountMask(spec, m, e.fd.get(), rel));
      continue;
    }
    if (m.kind == MountSpec::Kind::kTmpfs) {
      MCPCELL_TRY(MakeMountPoint(rel, true));
      mode_t mode = m.origin == MountSpec::Origin::kTmp ? 01777 : IsMask(m) ? 0 : 0700;
      MCPCELL_TRY(MountTmpfs(rel, m.size_bytes, mode, spec));
      if (!m.writable) MCPCELL_TRY(SetAttrs(rel, MOUNT_ATTR_RDONLY, false));
      continue;
    }
    MCPCELL_TRY(MakeMountPoint(rel, e.is_dir));
    if (e.idmapped_tree >= 0) {
      MCPCELL_TRY(AttachIdmappedTree(e.idmapped_tree, rel, m));
      continue;
    }
    // nosuid everywhere: a setuid binary must not raise privileges even if
    // no_new_privs were somehow missing. nodev except the /dev/null masks.
    std::uint64_t attrs = MOUNT_ATTR_NOSUID | (IsMask(m) ? 0 : MOUNT_ATTR_NODEV);
    if (!m.writable) attrs |= MOUNT_ATTR_RDONLY;
    auto st = BindFd(e.fd.get(), rel, attrs);
    if (!st) return MakeError(st.error().what, m.target, st.error().Message() + " (from " + m.source + ", " + m.why + ")");
  }
  return PinNestedReadOnlyGrants(planned);
}

// A fresh procfs for the cell's pid namespace, with the kernel-wide files a
// server has no use for masked, as container runtimes do (runc's maskedPaths).
Status MountProc() {
  MCPCELL_TRY(MkdirP("./proc"));
  unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  // hidepid=invisible hides processes of other uids (there are none but PID 1,
  // which is the same uid; kept for the day there are).
  if (::mount("proc", "./proc", "proc", flags, "hidepid=invisible") != 0 &&
      ::mount("proc", "./proc", "proc", flags, nullptr) != 0) {
    return ErrnoError("mount proc on", "/proc");
  }
  for (const char* f : {"./proc/kcore", "./proc/keys", "./proc/timer_list", "./proc/sysrq-trigger",
                        "./proc/kallsyms", "./proc/kmsg"}) {
    if (::access(f, F_OK) != 0) continue;
    if (::mount("./dev/null", f, nullptr, MS_BIND, nullptr) != 0) return ErrnoError("mask", f + 1);
  }
  for (const char* d : {"./proc/sys", "./proc/irq", "./proc/bus", "./proc/fs", "./proc/sysvipc"}) {
    if (::access(d, F_OK) != 0) continue;
    if (::mount(d, d, nullptr, MS_BIND | MS_REC, nullptr) != 0) return ErrnoError("bind", d + 1);
    MCPCELL_TRY(SetAttrs(d, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true));
  }
  return {};
}

Status MountDev(const CellSpec& spec, RootfsSources& src) {
  MCPCELL_TRY(MkdirP("./dev"));
  MCPCELL_TRY(MountTmpfs("./dev", 1 << 20, 0755, spec, MS_NOSUID | MS_NOEXEC));
  std::size_t i = 0;
  for (const char* name : kDeviceNodes) {
    std::string rel = std::string("./dev/") + name;
    MCPCELL_TRY(MakeMountPoint(rel, false));
    MCPCELL_TRY(BindFd(src.devices[i++].get(), rel, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
  }
  // A private devpts instance: the cell's ptys are its own.
  MCPCELL_TRY(MkdirP("./dev/pts"));
  if (::mount("devpts", "./dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
    return ErrnoError("mount devpts on", "/dev/pts");
  }
  MCPCELL_TRY(MkdirP("./dev/shm"));
  MCPCELL_TRY(MountTmpfs("./dev/shm", spec.limits.tmp_bytes, 01777, spec));
  for (auto [link, target] : {std::pair{"./dev/ptmx", "pts/ptmx"}, {"./dev/fd", "/proc/self/fd"},
                              {"./dev/stdin", "/proc/self/fd/0"}, {"./dev/stdout", "/proc/self/fd/1"},
                              {"./dev/stderr", "/proc/self/fd/2"}}) {
    if (::symlink(target, link) != 0) return ErrnoError("symlink", link + 1);
  }
  return SetAttrs("./dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false);
}

// /etc/passwd and /etc/group naming the cell user (Node's os.userInfo(), ssh,
// git want one), /etc/hosts for localhost, /etc/hostname.
Status WriteIdentityFiles(const CellSpec& spec) {
  MCPCELL_TRY(MkdirP("./etc"));
  std::string u = std::to_string(spec.uid);
  std::string g = std::to_string(spec.gid);
  MCPCELL_TRY(WriteFile("./etc/passwd",
                        "root:x:0:0:root:/root:/usr/sbin/nologin\nmcp:x:" + u + ":" + g + ":mcpcell:" + spec.home +
                            ":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                        0644));
  MCPCELL_TRY(WriteFile("./etc/group", "root:x:0:\nmcp:x:" + g + ":\nnogroup:x:65534:\n", 0644));
  // With host loopback ports (egress/host_loopback.h) localhost is
  // 127.0.0.1 only: the redirect to the host is IPv4, and a client trying
  // ::1 first would find the cell's own empty loopback there.
  const char* v6_localhost = spec.network.host_ports.empty() ? "::1\tlocalhost\n" : "::1\tip6-localhost\n";
  MCPCELL_TRY(WriteFile("./etc/hosts",
                        std::string("127.0.0.1\tlocalhost\n") + v6_localhost + "127.0.1.1\t" + spec.hostname + "\n",
                        0644));
  // An allow-list cell asks the DNS stub (src/egress/cell_net.h). UDP to
  // port 53 anywhere is redirected to the stub too, so a user-mounted
  // resolv.conf (kept as it is) or a hard-coded resolver changes nothing.
  // A cell without network asks the stub too: it answers NXDOMAIN and
  // reports the name (issue 14 item 8).
  bool stub = spec.network.mode == NetworkSpec::Mode::kAllowList || spec.network.mode == NetworkSpec::Mode::kNone;
  if (stub && ::access("./etc/resolv.conf", F_OK) != 0) {
    MCPCELL_TRY(WriteFile("./etc/resolv.conf", std::string("nameserver ") + kCellDnsAddress + "\n", 0644));
  }
  return WriteFile("./etc/hostname", spec.hostname + "\n", 0644);
}

// Secrets: files on their own tmpfs, 0400 and owned by the cell user, then the
// tmpfs is made read-only. Never in the environment or argv.
Status WriteSecrets(const CellSpec& spec, RootfsSources& src) {
  if (spec.secrets.empty()) return {};
  MCPCELL_TRY(MkdirP("./run/secrets"));
  MCPCELL_TRY(MountTmpfs("./run/secrets", 4 << 20, 0500, spec, MS_NOSUID | MS_NODEV | MS_NOEXEC));
  for (std::size_t i = 0; i < spec.secrets.size(); ++i) {
    std::string content;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(src.secrets[i].get(), buf, sizeof buf)) > 0) content.append(buf, static_cast<std::size_t>(n));
    if (n < 0) return ErrnoError("read secret", spec.secrets[i].host_file);
    MCPCELL_TRY(WriteFile("./run/secrets/" + spec.secrets[i].name, content, 0400));
    ::explicit_bzero(content.data(), content.size());
  }
  return SetAttrs("./run/secrets", MOUNT_ATTR_RDONLY, false);
}

}  // namespace

Result<RootfsSources> OpenRootfsSources(const CellSpec& spec, const std::vector<MountSpec>& planned,
                                        const std::vector<int>& idmapped_trees) {
  RootfsSources src;
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const MountSpec& m = planned[i];
    RootfsSources::Entry e;
    if (i < idmapped_trees.size() && idmapped_trees[i] >= 0) {
      // Opened and checked by the supervisor (idmap_mount.cc), which made the tree from it.
      struct stat st{};
      if (::fstat(idmapped_trees[i], &st) != 0) return ErrnoError("stat idmapped mount of", m.source);
      e.idmapped_tree = idmapped_trees[i];
      e.is_dir = S_ISDIR(st.st_mode);
    } else if (m.kind == MountSpec::Kind::kBind) {
      struct stat st{};
      if (::lstat(m.source.c_str(), &st) != 0) return ErrnoError("open mount source (" + m.why + ")", m.source);
      if (S_ISLNK(st.st_mode) && (m.origin == MountSpec::Origin::kSystem || m.origin == MountSpec::Origin::kServerLink)) {
        // Merged-/usr systems have /bin -> usr/bin; pipx puts ~/.local/bin/tool
        // -> a venv: keep it a link (resolved inside the cell) so paths agree.
        char buf[4096];
        ssize_t n = ::readlink(m.source.c_str(), buf, sizeof buf - 1);
        if (n > 0) e.link_target.assign(buf, static_cast<std::size_t>(n));
      }
      if (e.link_target.empty() && m.origin == MountSpec::Origin::kSystem) {
        // The host's own system dirs: root's, no cell can change them.
        e.fd.reset(::open(m.source.c_str(), O_PATH | O_CLOEXEC));
        if (!e.fd) return ErrnoError("open mount source (" + m.why + ")", m.source);
      } else if (e.link_target.empty()) {
        // Everything else is opened once without following symlinks and
        // bound by fd, so a swap after the checks cannot redirect the bind.
        auto fd = OpenCheckedBindSource(m);
        if (!fd) {
          Error err = fd.error();
          err.what += " (" + m.why + ")";
          return err;
        }
        e.fd = std::move(*fd);
      }
      if (e.fd) {
        if (::fstat(e.fd.get(), &st) != 0) return ErrnoError("stat mount source", m.source);
        e.is_dir = S_ISDIR(st.st_mode);
      }
    }
    src.mounts.push_back(std::move(e));
  }
  for (const char* name : kDeviceNodes) {
    std::string p = std::string("/dev/") + name;
    UniqueFd fd(::open(p.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) return ErrnoError("open device", p);
    src.devices.push_back(std::move(fd));
  }
  for (const auto& s : spec.secrets) {
    // O_NOCTTY: PID 1 leads its session; a terminal named as a secret must not become its controlling tty.
    UniqueFd fd(::open(s.host_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
    if (!fd) return ErrnoError("open secret file", s.host_file);
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return MakeError("open secret file", s.host_file, "not a regular file (any more)");
    }
    src.secrets.push_back(std::move(fd));
  }
  return src;
}

Status BuildRootfs(const CellSpec& spec, const std::vector<MountSpec>& planned, RootfsSources& src) {
  // Nothing we mount may propagate back to the host (mount_namespaces(7)).
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return ErrnoError("make / private");
  MCPCELL_TRY(MountTmpfs(kBuildDir, 8 << 20, 0755, spec));
  if (::chdir(kBuildDir) != 0) return ErrnoError("chdir", kBuildDir);
  MCPCELL_TRY(MountPlanned(spec, planned, src));
  TracePhase("rootfs-binds");
  MCPCELL_TRY(MountDev(spec, src));
  TracePhase("rootfs-dev");
  MCPCELL_TRY(MountProc());
  TracePhase("rootfs-proc");
  MCPCELL_TRY(WriteIdentityFiles(spec));
  MCPCELL_TRY(WriteSecrets(spec, src));
  TracePhase("rootfs-files");
  // pivot_root(".", ".") stacks the old root under the new one; detaching it
  // leaves no path back to the host's filesystem (pivot_root(2), NOTES).
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return ErrnoError("pivot_root");
  if (::umount2(".", MNT_DETACH) != 0) return ErrnoError("detach the host root");
  if (::chdir("/") != 0) return ErrnoError("chdir", "/");
  MCPCELL_TRY(SetAttrs("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false));
  if (::chdir(spec.workdir.c_str()) != 0 && ::chdir(spec.home.c_str()) != 0) return ErrnoError("chdir", spec.workdir);
  return {};
}

}  // namespace mcpcell
