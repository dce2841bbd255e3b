#include "cell/bind_source.h"

#include "cell/cell_ids.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace mcpcell {
namespace {

Error SwapError(const std::string& path, const std::string& detail) {
  return MakeError("refusing mount source", path,
                   detail + "; it changed after mcpcell checked it (another process — maybe a cell with --write "
                            "on a parent directory — replaced it). Launch again; grant the real directory, not "
                            "one a cell can rewrite");
}

}  // namespace

// Fallback for kernels without openat2 (before 5.6): each component opened
// with O_NOFOLLOW below the previous one, so no symlink is ever followed.
Result<UniqueFd> OpenNoSymlinksByWalk(const std::string& path) {
  UniqueFd cur(::open("/", O_PATH | O_CLOEXEC | O_DIRECTORY));
  if (!cur) return ErrnoError("open", "/");
  std::size_t pos = 1;
  while (pos < path.size()) {
    std::size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    std::string name = path.substr(pos, end - pos);
    pos = end + 1;
    if (name.empty() || name == ".") continue;
    if (name == "..") return MakeError("open mount source", path, "contains '..'");
    UniqueFd next(::openat(cur.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return ErrnoError("open mount source", path);
    struct stat st{};
    if (::fstat(next.get(), &st) != 0) return ErrnoError("stat mount source", path);
    // O_PATH|O_NOFOLLOW opens a symlink itself instead of failing (open(2)).
    if (S_ISLNK(st.st_mode)) return SwapError(path, "component " + path.substr(0, end) + " is a symbolic link");
    cur = std::move(next);
  }
  return cur;
}

Result<UniqueFd> OpenNoSymlinks(const std::string& path) {
  if (path.empty() || path.front() != '/') return MakeError("open mount source", path, "must be an absolute path");
  struct open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long raw = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (raw >= 0) {
    UniqueFd fd(static_cast<int>(raw));
    // With O_PATH|O_NOFOLLOW a symlink as the last component is opened
    // itself, not refused (openat2(2), RESOLVE_NO_SYMLINKS).
    struct stat st{};
    if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat mount source", path);
    if (S_ISLNK(st.st_mode)) return SwapError(path, "it is now a symbolic link");
    return fd;
  }
  if (errno == ENOSYS) return OpenNoSymlinksByWalk(path);
  // openat2(2): ELOOP when a component is a symlink under RESOLVE_NO_SYMLINKS.
  if (errno == ELOOP) return SwapError(path, "a component is now a symbolic link");
  return ErrnoError("open mount source", path);
}

Status RecordSourceIdentity(MountSpec* m) {
  struct stat st{};
  if (::stat(m->source.c_str(), &st) != 0) return ErrnoError("stat mount source (" + m->why + ")", m->source);
  m->source_dev = st.st_dev;
  m->source_ino = st.st_ino;
  return {};
}

Result<UniqueFd> OpenCheckedBindSource(const MountSpec& m) {
  auto fd = OpenNoSymlinks(m.source);
  if (!fd) return fd.error();
  struct stat st{};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError("stat mount source", m.source);
  if (m.source_ino != 0 && (st.st_dev != m.source_dev || st.st_ino != m.source_ino)) {
    return SwapError(m.source, "it is no longer the directory or file that was checked (device/inode differ)");
  }
  // Where the opened object lives now: a rename after the open shows here.
  char buf[PATH_MAX];
  std::string link = "/proc/self/fd/" + std::to_string(fd->get());
  ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n > 0 && std::string(buf, static_cast<std::size_t>(n)) != m.source) {
    return SwapError(m.source, "the opened object is now at " + std::string(buf, static_cast<std::size_t>(n)));
  }
  return fd;
}

Status CheckBindSource(const MountSpec& m) {
  auto fd = OpenCheckedBindSource(m);
  if (!fd) return fd.error();
  return {};
}

namespace {

// Whether `uid` (not root, in none of the directory's groups but nogroup)
// may create, rename or remove entries in directory `st` (path_resolution(7)).
bool WritableBy(const struct stat& st, uid_t uid) {
  if (st.st_uid == uid) return (st.st_mode & S_IWUSR) != 0;
  if (st.st_gid == uid) return (st.st_mode & S_IWGRP) != 0;  // nobody's group is nogroup (65534)
  return (st.st_mode & S_IWOTH) != 0;
}

}  // namespace

namespace {

/// Walks `path` from the source up to /, refusing the first component whose
/// parent `can_write(dir, entry)` says a cell could change; `who` names it.
template <typename CanSwap>
Status CheckComponents(const std::string& path, const std::string& who, CanSwap can_swap) {
  for (std::string child = path; child.size() > 1;) {
    std::string parent = child.substr(0, child.rfind('/'));
    if (parent.empty()) parent = "/";
    struct stat dir{}, entry{};
    if (::stat(parent.c_str(), &dir) != 0 || ::lstat(child.c_str(), &entry) != 0) {
      return ErrnoError("check mount source", child);
    }
    if (can_swap(dir, entry)) {
      return MakeError("refusing mount source", path,
                       parent + " is writable by " + who + ": another cell could swap " + child +
                           " for a symlink after mcpcell's check, and the engine binds by path. Grant a "
                           "directory no cell can change, or use a native cell (it binds by fd)");
    }
    child = parent;
  }
  return {};
}

bool InCellIdBlock(std::uint32_t id) { return id >= kCellIdFirst && id - kCellIdFirst < kCellIdCount; }

}  // namespace

Status CheckNotSwappableBy(const std::string& path, uid_t cell_uid) {
  return CheckComponents(path, "uid " + std::to_string(cell_uid), [cell_uid](const struct stat& dir, const struct stat& entry) {
    // A sticky directory (/tmp) lets only an entry's owner rename it.
    return WritableBy(dir, cell_uid) && (!(dir.st_mode & S_ISVTX) || entry.st_uid == cell_uid);
  });
}

Status CheckNotSwappableByCells(const std::string& path) {
  // Root's cells run as per-run uids from one block (cell_ids.h): a directory
  // another cell can write is one it owns (or its group), or one open to all.
  return CheckComponents(path, "the cells root starts (per-run uids, or any uid)",
                         [](const struct stat& dir, const struct stat& entry) {
    bool writable = (InCellIdBlock(dir.st_uid) && (dir.st_mode & S_IWUSR)) ||
                    (InCellIdBlock(dir.st_gid) && (dir.st_mode & S_IWGRP)) || (dir.st_mode & S_IWOTH);
    return writable && (!(dir.st_mode & S_ISVTX) || InCellIdBlock(entry.st_uid));
  });
}

}  // namespace mcpcell
