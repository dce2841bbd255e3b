#include "util/work_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>

namespace mcpcell {
namespace {

UniqueFd OpenDir(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

}  // namespace

UniqueFd HoldWorkDir(const std::string& dir) {
  UniqueFd fd = OpenDir(dir);
  if (!fd) return fd;
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return UniqueFd();
  }
  return fd;
}

bool WorkDirHeld(const std::string& dir) {
  UniqueFd fd = OpenDir(dir);
  if (!fd) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

}  // namespace mcpcell
