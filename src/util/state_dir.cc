#include "util/state_dir.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <cstdio>
#include <sstream>
#include <utility>

#include "util/cache_dir.h"
#include "util/resolved_path.h"

namespace mcpcell {

std::string StateHomeFromEnvironment() {
  const char* state = std::getenv("XDG_STATE_HOME");
  // Relative: invalid (XDG base directory spec). A control byte (a newline)
  // is no path of a state directory either: the list keeps one per line (adv24).
  if (state == nullptr || state[0] != '/' || HasControlByte(state)) return "";
  return state;
}

std::string StateBaseForThisUser() {
  if (std::string state = StateHomeFromEnvironment(); !state.empty()) return state;
  if (::geteuid() == 0) return "/var/lib";
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && home[0] == '/' ? home : "/nonexistent";
  if (home == nullptr || home[0] != '/') {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) base = pw->pw_dir;
  }
  return base + "/.local/state";
}

std::string StateDirForThisUser() { return StateBaseForThisUser() + "/mcpcell"; }

std::string AccountStateDir() {
  if (::geteuid() == 0) return "/var/lib/mcpcell";
  const passwd* pw = ::getpwuid(::geteuid());
  if (pw == nullptr || pw->pw_dir == nullptr || pw->pw_dir[0] != '/') return "";
  return (std::filesystem::path(pw->pw_dir) / ".local/state/mcpcell").lexically_normal().string();
}

namespace {

constexpr const char* kKnownList = "known-state-dirs";
constexpr const char* kKnownListNew = "known-state-dirs.new";
constexpr const char* kKnownListLock = "known-state-dirs.lock";
// Paths of ~100 bytes: a few hundred state directories. A list grown past
// this after its gone directories are dropped is refused, not cut.
constexpr std::size_t kKnownListMax = 64 * 1024;

// Absolute, normalized, no control byte, and named "mcpcell" (a state
// directory is <base>/mcpcell, never a symlink): a line injected some other
// way (adv24: a newline in XDG_STATE_HOME) names no directory to hide.
bool IsStateDirPath(const std::string& p) {
  if (p.size() < 2 || p[0] != '/' || HasControlByte(p)) return false;
  std::filesystem::path path(p);
  return path.lexically_normal().string() == p && path.filename() == "mcpcell";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    // What RememberStateDir writes: absolute, resolved, normalized. Any
    // other line is no entry of ours.
    if (IsStateDirPath(line)) {
      out.push_back(line);
    }
  }
  return out;
}

// The list file's text; "" when there is none. Read through O_NOFOLLOW: the
// account's state directory is one no cell can write (it is hidden), so
// the list is the account's own.
std::string ReadAll(int fd) {
  std::string text;
  char buf[8192];
  for (ssize_t n; text.size() <= kKnownListMax && (n = ::read(fd, buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}


// The list in `account_dir`; with `owner` set, only a regular file of that
// uid and only entries that uid owns (another account's list, read by root).
// Another account's entries root takes: at most this many each (one mask
// per entry in a grant above them: adv26 listed 1,400).
constexpr std::size_t kOtherAccountMax = 32;

// The list in `account_dir`. Another account's (`owner` set: root reads it)
// only as a regular file of that uid, and only entries that are a real
// directory of that uid (named mcpcell, Lines) reached through no symlink:
// an account cannot make root hide anything but its own (adv26: a link of
// the account's to /usr/lib made every root launch fail), and what it lists
// is masked, never a reason to refuse root's grant (OwnDir::others).
std::vector<std::string> ReadList(const std::string& account_dir, std::optional<uid_t> owner) {
  // O_NONBLOCK: a FIFO planted in another account's directory does not stall root's launch.
  UniqueFd fd(::open((account_dir + "/" + kKnownList).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st{};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || (owner && st.st_uid != *owner)) return {};
  std::vector<std::string> lines = Lines(ReadAll(fd.get()));
  if (owner) {
    std::erase_if(lines, [&](const std::string& l) {
      return ::lstat(l.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != *owner ||
             ResolvedAsFarAsExists(l) != l;
    });
    if (lines.size() > kOtherAccountMax) lines.resize(kOtherAccountMax);
  }
  return lines;
}

}  // namespace

// Root's cells see other accounts' homes id-mapped (their 0700 is no bar):
// each account's own list names state directories under its own
// XDG_STATE_HOME that root's list does not (adv24). Read from /etc/passwd
// (fgetpwent_r: thread-safe; an account only in a network directory keeps
// its default, masked by name).
std::vector<std::string> OtherAccountsStateDirs() {
  std::vector<std::string> out;
  if (::geteuid() != 0) return out;
  std::FILE* f = std::fopen("/etc/passwd", "re");
  if (f == nullptr) return out;
  passwd pw{};
  passwd* got = nullptr;
  std::vector<char> buf(4096);
  for (;;) {
    int err = ::fgetpwent_r(f, &pw, buf.data(), buf.size(), &got);
    // A line longer than the buffer: a bigger one, the same line again (adv26:
    // a 5,000-byte GECOS ended the scan and the accounts after it were not read).
    if (err == ERANGE && buf.size() < (1U << 20)) {
      buf.resize(buf.size() * 4);
      continue;
    }
    if (err != 0 || got == nullptr) break;
    if (pw.pw_uid == 0 || pw.pw_dir == nullptr || pw.pw_dir[0] != '/') continue;
    std::string dir = (std::filesystem::path(pw.pw_dir) / ".local/state/mcpcell").lexically_normal().string();
    for (auto& l : ReadList(dir, pw.pw_uid)) out.push_back(std::move(l));
  }
  std::fclose(f);
  return out;
}

std::vector<std::string> KnownStateDirs() {
  std::string account = AccountStateDir();
  return account.empty() ? std::vector<std::string>{} : ReadList(account, std::nullopt);
}


std::vector<OwnDir> McpcellOwnDirs() {
  static const std::string kState = "mcpcell's state directory (cell records, logs, tool pins)";
  static const std::string kCache = "mcpcell's cache (npx and uvx packages, compiled secret rules, grant scans)";
  std::vector<OwnDir> out;
  // One entry per directory (adv22: two masks on one target refused every launch).
  auto keep = [&out](OwnDir d) {
    if (std::none_of(out.begin(), out.end(), [&](const OwnDir& o) { return o.path == d.path; })) {
      out.push_back(std::move(d));
    }
  };
  auto add = [&keep](const std::string& base, const std::string& what) {
    if (base.empty() || base[0] != '/') return;
    // Resolved as far as it exists: where the directory is or would be made
    // (adv24: "$H/link/../s" is below link's target), one spelling of it
    // ("~/.local/state/" and "~/.local/state" are one).
    keep({ResolvedAsFarAsExists(base + "/mcpcell"), what, &what == &kState});
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
  // Every state directory a launch of this account used under another
  // XDG_STATE_HOME or HOME (adv22): this run's environment does not name it.
  for (const auto& dir : KnownStateDirs()) keep({dir, kState, true});
  for (const auto& dir : OtherAccountsStateDirs()) keep({dir, "another account's mcpcell state directory", true, true});
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

// <base>/mcpcell, made with the base's missing parents (~/.local/state may
// not exist yet): 0700.
Result<UniqueFd> OpenStateRoot(const std::string& base) {
  if (base.empty() || base[0] != '/') return MakeError("open the state directory", base, "not an absolute path");
  for (std::size_t slash = base.find('/', 1); slash != std::string::npos; slash = base.find('/', slash + 1)) {
    (void)::mkdir(base.substr(0, slash).c_str(), 0700);
  }
  (void)::mkdir(base.c_str(), 0700);
  UniqueFd base_fd(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!base_fd) return ErrnoError("open the state directory", base);
  return OpenOwnSubdir(base_fd.get(), "mcpcell", base + "/mcpcell");
}

bool PathExists(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

Status RememberStateDir(const std::string& dir) {
  if (HasControlByte(dir)) return MakeError("record the state directory", dir, "a path with a control byte (a newline)");
  std::string account = AccountStateDir();
  // As it lies on disk: the directory a later launch must find below its grants.
  std::string real = ResolvedAsFarAsExists(dir);
  if (!account.empty() && real == ResolvedAsFarAsExists(account)) return {};
  if (!IsStateDirPath(real)) return MakeError("record the state directory", real, "not a directory named mcpcell");
  if (account.empty()) {
    return MakeError("record the state directory", real,
                     "this account has no home in the password database to keep the list of its state directories "
                     "in; unset XDG_STATE_HOME");
  }
  auto root = OpenStateRoot(std::filesystem::path(account).parent_path().string());
  if (!root) return root.error();
  const std::string list = account + "/" + kKnownList;
  // Writers take turns on a lock file of their own; readers take no lock:
  // the list is replaced whole by rename(2), so a reader sees the old one or
  // the new one (adv24: a reader during truncate-and-write saw none).
  UniqueFd lock(::openat(root->get(), kKnownListLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return ErrnoError("lock", list);
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("lock", list);
  }
  std::vector<std::string> known;
  if (UniqueFd fd(::openat(root->get(), kKnownList, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)); fd) known = Lines(ReadAll(fd.get()));
  if (std::find(known.begin(), known.end(), real) != known.end()) return {};
  std::string text;
  for (const auto& k : known) {
    if (PathExists(k)) text += k + "\n";  // a removed one hides nothing; its launch adds it again
  }
  text += real + "\n";
  if (text.size() > kKnownListMax) {
    return MakeError("record the state directory in", list,
                     "lists more than " + std::to_string(kKnownListMax) +
                         " bytes of existing state directories; remove the ones no longer used");
  }
  UniqueFd tmp(::openat(root->get(), kKnownListNew, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!tmp || ::write(tmp.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::renameat(root->get(), kKnownListNew, root->get(), kKnownList) != 0) {
    return ErrnoError("record the state directory in", list);
  }
  return {};
}

Result<UniqueFd> OpenStateDir(const std::string& leaf) {
  std::string base = StateBaseForThisUser();
  auto own = OpenStateRoot(base);
  if (!own) return own.error();
  // Listed, as the directory opened lies on disk, before anything is
  // written in it: a launch under another XDG_STATE_HOME hides this one
  // only if it knows of it.
  char buf[PATH_MAX];
  ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(own->get())).c_str(), buf, sizeof buf - 1);
  MCPCELL_TRY(RememberStateDir(n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : base + "/mcpcell"));
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
