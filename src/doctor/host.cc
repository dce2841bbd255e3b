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

std::string FindOnPath(const std::string& name) {
  const char* path_env = std::getenv("PATH");
  std::string_view path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = path.find(':');
    std::string_view dir = path.substr(0, colon);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory (execvp(3))
    std::string candidate = fmt::format("{}/{}", dir, name);
    struct stat st {};
    // A directory named like the program is searchable (X_OK) but not a program.
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return {};
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
