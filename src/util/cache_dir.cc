#include "util/cache_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace mcpcell {

std::string UserCacheBase() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return xdg;
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home) + "/.cache";
  return "";
}

std::string AccountCacheBase() {
  const passwd* pw = ::getpwuid(::geteuid());
  if (pw == nullptr || pw->pw_dir == nullptr || pw->pw_dir[0] != '/') return "";
  return std::string(pw->pw_dir) + "/.cache";
}

std::string CacheDirPath(const std::string& base, std::string_view leaf) {
  return base + "/mcpcell/" + std::string(leaf);
}

Result<UniqueFd> OpenCacheDir(const std::string& base, std::string_view leaf, bool create, const OwnedRules& rules) {
  if (base.empty() || base[0] != '/') return MakeError(rules.what, base, "not an absolute path");
  if (create) {
    for (std::size_t slash = base.find('/', 1); slash != std::string::npos; slash = base.find('/', slash + 1)) {
      (void)::mkdir(base.substr(0, slash).c_str(), 0700);
    }
    (void)::mkdir(base.c_str(), 0700);
  }
  // The base is the user's choice and may be a symlink; below it, nothing is followed.
  UniqueFd fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return ErrnoError(rules.what, base);
  std::string path = base;
  for (std::string name : {std::string("mcpcell"), std::string(leaf)}) {
    path += "/" + name;
    if (create && ::mkdirat(fd.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError(rules.what, path);
    auto sub = OpenOwnedDirAt(fd.get(), name, rules.what, path, rules);
    if (!sub.ok()) return sub.error();
    fd = std::move(*sub);
  }
  return fd;
}

}  // namespace mcpcell
