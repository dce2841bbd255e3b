#include "util/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <utility>
#include <vector>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

using DirId = std::pair<dev_t, ino_t>;

/// `name` below `parent` opened as a directory; one of ours that keeps us
/// out (mode 0300) is given its owner's bits first.
UniqueFd OpenDirAt(int parent, const char* name) {
  UniqueFd fd(::openat(parent, name, kDirFlags));
  if (!fd && errno == EACCES && ::fchmodat(parent, name, 0700, 0) == 0) fd.reset(::openat(parent, name, kDirFlags));
  return fd;
}

std::vector<std::string> EntryNames(int dir) {
  std::vector<std::string> names;
  UniqueFd copy(::openat(dir, ".", kDirFlags));
  if (!copy) return names;
  DIR* d = ::fdopendir(copy.release());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

/// Removes every entry of `dir` it can; the name of the first directory
/// that stays because it is not empty and is not `stuck` ("" when none).
std::string EmptyOnce(int dir, const std::set<DirId>& stuck) {
  (void)::fchmod(dir, 0700);  // ours: a 0500 directory cannot lose entries otherwise
  for (const std::string& name : EntryNames(dir)) {
    struct stat st{};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      (void)::unlinkat(dir, name.c_str(), 0);
      continue;
    }
    if (stuck.count({st.st_dev, st.st_ino}) != 0 || ::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0) continue;
    return name;
  }
  return "";
}

}  // namespace

bool RemoveTree(const std::string& path) {
  struct stat top{};
  if (::lstat(path.c_str(), &top) != 0) return errno == ENOENT;
  if (!S_ISDIR(top.st_mode)) return ::unlink(path.c_str()) == 0 || errno == ENOENT;
  std::size_t slash = path.find_last_not_of('/');
  slash = slash == std::string::npos ? std::string::npos : path.rfind('/', slash);
  std::string parent_path = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  UniqueFd parent(::open(parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent) return false;
  UniqueFd cur = OpenDirAt(parent.get(), base.c_str());
  if (!cur) return false;
  // Down into the first directory that is not empty, up when one is
  // emptied: one fd at a time, the names on the way kept. A directory that
  // cannot be emptied is `stuck` and not entered again, so this ends.
  std::vector<std::string> down;
  std::set<DirId> stuck;
  for (;;) {
    std::string sub = EmptyOnce(cur.get(), stuck);
    if (!sub.empty()) {
      if (UniqueFd next = OpenDirAt(cur.get(), sub.c_str())) {
        down.push_back(std::move(sub));
        cur = std::move(next);
      } else {
        struct stat st{};
        if (::fstatat(cur.get(), sub.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        stuck.insert({st.st_dev, st.st_ino});
      }
      continue;
    }
    if (down.empty()) break;
    struct stat here{};
    if (::fstat(cur.get(), &here) != 0) return false;
    UniqueFd up(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!up) return false;
    cur = std::move(up);
    if (::unlinkat(cur.get(), down.back().c_str(), AT_REMOVEDIR) != 0) stuck.insert({here.st_dev, here.st_ino});
    down.pop_back();
  }
  return ::unlinkat(parent.get(), base.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace mcpcell
