#include "util/remove_tree.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "util/dir_names.h"
#include "util/unique_fd.h"

namespace mcpcell {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/// Gives a directory of ours that keeps us out (0300: no listing; 0500: no
/// unlinking) its owner's bits, through an O_PATH fd of the directory
/// itself: chmod by name follows a symlink swapped in for it (adv19).
void OwnerBitsBack(int parent, const char* name) {
  UniqueFd dir(::openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir) (void)::chmod(("/proc/self/fd/" + std::to_string(dir.get())).c_str(), 0700);
}

// The names in `dir`; none when it cannot be listed (then it is not
// emptied, and the removal reports the tree as left).
std::vector<std::string> NamesIn(int dir) {
  auto names = DirNames(dir);
  return names.ok() ? std::move(*names) : std::vector<std::string>{};
}

UniqueFd OpenDirAt(int parent, const char* name) {
  UniqueFd fd(::openat(parent, name, kDirFlags));
  if (!fd && errno == EACCES) {
    OwnerBitsBack(parent, name);
    fd.reset(::openat(parent, name, kDirFlags));
  }
  if (fd) (void)::fchmod(fd.get(), 0700);  // ours: a 0500 directory cannot lose entries otherwise
  return fd;
}

/// Moves `name` (a directory in `from`) to `top` under a name of its own.
/// A directory moved to another parent must be writable itself (its ".."
/// changes): one of ours that is not (0500, 0000) gets its owner's bits
/// first (adv20: a normal user's failed install left a 0500 directory two
/// levels down for good).
bool MoveUp(int from, const std::string& name, int top, unsigned* serial) {
  bool bits_given = false;
  for (int tries = 0; tries < 100; ++tries) {
    std::string to = ".rm-" + std::to_string((*serial)++);
    if (::renameat2(from, name.c_str(), top, to.c_str(), RENAME_NOREPLACE) == 0) return true;
    if ((errno == EACCES || errno == EPERM) && !bits_given) {
      OwnerBitsBack(from, name.c_str());
      bits_given = true;
      continue;
    }
    if (errno != EEXIST) return false;
  }
  return false;
}

}  // namespace

// Flattening, never climbing: every directory found inside a directory
// being emptied is moved up to the top directory, and the top directory is
// emptied again until it is. At most two directories are open, none is
// reached through "..", and no path is longer than the top's: a tree
// changed while it is removed (a cell renaming inside its package, adv19:
// a climb by ".." after such a move left the tree and emptied its
// ancestors) stays the tree, on the top's filesystem.
bool RemoveTree(const std::string& path) {
  struct stat top_st{};
  if (::lstat(path.c_str(), &top_st) != 0) return errno == ENOENT;
  if (!S_ISDIR(top_st.st_mode)) return ::unlink(path.c_str()) == 0 || errno == ENOENT;
  std::size_t end = path.find_last_not_of('/');
  std::size_t slash = end == std::string::npos ? std::string::npos : path.rfind('/', end);
  std::string parent_path = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1, end == std::string::npos ? 1 : end - slash);
  UniqueFd parent(::open(parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent) return false;
  UniqueFd top = OpenDirAt(parent.get(), base.c_str());
  if (!top) return false;
  unsigned serial = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (const std::string& name : NamesIn(top.get())) {
      struct stat st{};
      if (::fstatat(top.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(st.st_mode)) {
        progress |= ::unlinkat(top.get(), name.c_str(), 0) == 0;
        continue;
      }
      if (::unlinkat(top.get(), name.c_str(), AT_REMOVEDIR) == 0) {
        progress = true;
        continue;
      }
      if (st.st_dev != top_st.st_dev) continue;  // a mount point: not ours to empty
      UniqueFd dir = OpenDirAt(top.get(), name.c_str());
      if (!dir) continue;
      for (const std::string& inner : NamesIn(dir.get())) {
        struct stat ist{};
        if (::fstatat(dir.get(), inner.c_str(), &ist, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(ist.st_mode) && ::unlinkat(dir.get(), inner.c_str(), AT_REMOVEDIR) != 0) {
          progress |= MoveUp(dir.get(), inner, top.get(), &serial);
        } else if (!S_ISDIR(ist.st_mode)) {
          progress |= ::unlinkat(dir.get(), inner.c_str(), 0) == 0;
        } else {
          progress = true;
        }
      }
      progress |= ::unlinkat(top.get(), name.c_str(), AT_REMOVEDIR) == 0;
    }
  }
  return ::unlinkat(parent.get(), base.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace mcpcell
