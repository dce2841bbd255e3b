#include "util/dir_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace mcpcell {

Result<std::vector<std::string>> DirNames(int dir) {
  int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return ErrnoError("list directory fd", std::to_string(dir));
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    Error e = ErrnoError("list directory fd", std::to_string(dir));
    ::close(copy);
    return e;
  }
  ::rewinddir(d);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (e == nullptr) break;
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  // readdir(3) ends with NULL on an error too, told apart only by errno.
  Error failed = ErrnoError("list directory fd", std::to_string(dir));
  ::closedir(d);
  if (failed.err != 0) return failed;
  return names;
}

}  // namespace mcpcell
