#include "util/state_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace mcpcell {

std::string StateDirForThisUser() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/mcpcell";
  if (::geteuid() == 0) return "/var/lib/mcpcell";
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && home[0] == '/' ? home : "/nonexistent";
  if (home == nullptr || home[0] != '/') {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) base = pw->pw_dir;
  }
  return base + "/.local/state/mcpcell";
}

Result<UniqueFd> OpenPrivateDir(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return MakeError("open the state directory", dir, "not an absolute path");
  for (std::size_t slash = dir.find('/', 1); slash != std::string::npos; slash = dir.find('/', slash + 1)) {
    (void)::mkdir(dir.substr(0, slash).c_str(), 0700);
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("create the state directory", dir);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return MakeError("open the state directory", dir, "it is a symlink or not a directory; remove it and run again");
    }
    return ErrnoError("open the state directory", dir);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("check the state directory", dir);
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return MakeError("check the state directory", dir,
                     "it must belong to uid " + std::to_string(::geteuid()) +
                         " with mode 0700 (others could read or plant records and logs); fix it with 'chmod 700 " + dir +
                         "' if it is yours, else remove it");
  }
  return fd;
}

unsigned long long ProcessStartTicks(int pid) {
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return 0;
  char buf[1024];
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  std::string text(buf, static_cast<std::size_t>(n));
  // comm (field 2) may hold spaces and ')': the fields after it start after the last ')'.
  std::size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

bool ProcessIsAlive(int pid, unsigned long long start_ticks) {
  return pid > 0 && start_ticks != 0 && ProcessStartTicks(pid) == start_ticks;
}

}  // namespace mcpcell
