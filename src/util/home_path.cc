#include "util/home_path.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace mcpcell {

std::string CallerHome() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (const struct passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  return {};
}

std::string AccountHome() {
  struct passwd pw{};
  struct passwd* found = nullptr;
  char buf[4096];
  if (::getpwuid_r(::geteuid(), &pw, buf, sizeof buf, &found) != 0 || found == nullptr) return {};
  if (pw.pw_dir == nullptr || pw.pw_dir[0] != '/') return {};
  return pw.pw_dir;
}

std::string ExpandHome(const std::string& path) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  std::string home = CallerHome();
  return home.empty() ? path : home + path.substr(1);
}

}  // namespace mcpcell
