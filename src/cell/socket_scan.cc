#include "cell/socket_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>

namespace mcpcell {

SocketScan FindSockets(const std::string& dir, std::size_t max_entries) {
  SocketScan out;
  std::deque<std::string> todo{dir};
  std::size_t seen = 0;
  while (!todo.empty()) {
    std::string d = std::move(todo.front());
    todo.pop_front();
    int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    DIR* dp = ::fdopendir(fd);
    if (dp == nullptr) {
      ::close(fd);
      continue;
    }
    while (auto* e = ::readdir(dp)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (++seen > max_entries) {
        out.truncated = true;
        ::closedir(dp);
        return out;
      }
      std::string path = d == "/" ? "/" + name : d + "/" + name;
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st{};
        if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISSOCK(st.st_mode) ? DT_SOCK : DT_REG;
      }
      if (type == DT_SOCK) out.sockets.push_back(path);
      else if (type == DT_DIR) todo.push_back(path);
    }
    ::closedir(dp);
  }
  return out;
}

}  // namespace mcpcell
