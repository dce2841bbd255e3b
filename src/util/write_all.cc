#include "util/write_all.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace mcpcell {

namespace {

Status WriteLoop(int fd, std::string_view data, bool wait_when_full, std::string_view what, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && wait_when_full) {
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, -1);
      continue;
    }
    if (n == 0) errno = EIO;  // write(2) never takes 0 of a non-empty buffer unless it cannot go on
    if (n <= 0) return ErrnoError(std::string(what), std::string(path));
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

Status WriteAll(int fd, std::string_view data, std::string_view what, std::string_view path) {
  return WriteLoop(fd, data, false, what, path);
}

Status WriteAllWaiting(int fd, std::string_view data, std::string_view what, std::string_view path) {
  return WriteLoop(fd, data, true, what, path);
}

}  // namespace mcpcell
