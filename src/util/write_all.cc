#include "util/write_all.h"

#include <unistd.h>

#include <cerrno>

namespace mcpcell {

Status WriteAll(int fd, std::string_view data, std::string_view what, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // write(2) never takes 0 of a non-empty buffer unless it cannot go on
    if (n <= 0) return ErrnoError(std::string(what), std::string(path));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace mcpcell
