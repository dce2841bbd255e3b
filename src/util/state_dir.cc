#include "util/state_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "util/cache_dir.h"

namespace mcpcell {

std::string StateBaseForThisUser() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return state;
  if (::geteuid() == 0) return "/var/lib";
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && home[0] == '/' ? home : "/nonexistent";
  if (home == nullptr || home[0] != '/') {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) base = pw->pw_dir;
  }
  return base + "/.local/state";
}

std::string StateDirForThisUser() { return StateBaseForThisUser() + "/mcpcell"; }

std::vector<OwnDir> McpcellOwnDirs() {
  static const std::string kState = "mcpcell's state directory (cell records, logs, tool pins)";
  static const std::string kCache = "mcpcell's cache (npx and uvx packages, compiled secret rules, grant scans)";
  std::vector<OwnDir> out;
  auto add = [&out](const std::string& base, const std::string& what) {
    bool hidden = &what == &kState;
    if (base.empty() || base[0] != '/') return;
    // Normalized: "~/.local/state/" and "~/.local/state" are one directory,
    // masked once (adv22: two masks on one target refused every launch).
    std::string dir = (std::filesystem::path(base) / "mcpcell").lexically_normal().string();
    if (std::none_of(out.begin(), out.end(), [&](const OwnDir& d) { return d.path == dir; })) {
      out.push_back({dir, what, hidden});
    }
  };
  add(StateBaseForThisUser(), kState);
  add(UserCacheBase(), kCache);
  std::vector<std::string> homes;
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] == '/') homes.emplace_back(h);
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) homes.emplace_back(pw->pw_dir);
  for (const auto& home : homes) {
    add(home + "/.cache", kCache);
    add(home + "/.local/state", kState);  // the pin directory's default, for root too
  }
  if (::geteuid() == 0) add("/var/lib", kState);
  return out;
}

namespace {

// <parent>/<name>: created 0700 when missing, opened without following a
// symlink, ours and 0700.
Result<UniqueFd> OpenOwnSubdir(int parent, const std::string& name, const std::string& path) {
  if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("create the state directory", path);
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return MakeError("open the state directory", path, "it is a symlink or not a directory; remove it and run again");
    }
    return ErrnoError("open the state directory", path);
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("check the state directory", path);
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return MakeError("check the state directory", path,
                     "it must belong to uid " + std::to_string(::geteuid()) +
                         " with mode 0700 (others could read or plant records and logs); fix it with 'chmod 700 " +
                         path + "' if it is yours, else remove it");
  }
  return fd;
}

}  // namespace

Result<UniqueFd> OpenStateDir(const std::string& leaf) {
  std::string base = StateBaseForThisUser();
  if (base.empty() || base[0] != '/') return MakeError("open the state directory", base, "not an absolute path");
  // The base's missing parents (~/.local/state may not exist yet): 0700.
  for (std::size_t slash = base.find('/', 1); slash != std::string::npos; slash = base.find('/', slash + 1)) {
    (void)::mkdir(base.substr(0, slash).c_str(), 0700);
  }
  (void)::mkdir(base.c_str(), 0700);
  UniqueFd base_fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!base_fd) return ErrnoError("open the state directory", base);
  auto own = OpenOwnSubdir(base_fd.get(), "mcpcell", base + "/mcpcell");
  if (!own) return own.error();
  return OpenOwnSubdir(own->get(), leaf, base + "/mcpcell/" + leaf);
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
