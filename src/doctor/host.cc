#include "doctor/host.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "util/unique_fd.h"

namespace mcpcell::doctor {

std::optional<std::string> ReadHostFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string ErrnoText(int err) {
  // fmt rather than operator+ chains: GCC 12 reports a false -Wrestrict on those.
  const char* name = strerrorname_np(err);
  if (name == nullptr) return std::strerror(err);
  return fmt::format("{} ({})", std::strerror(err), name);
}

std::string SelfExePath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "mcpcell";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace mcpcell::doctor
