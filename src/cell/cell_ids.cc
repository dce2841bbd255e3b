#include "cell/cell_ids.h"

#include <dirent.h>
#include <fcntl.h>
#include <cstdio>
#include <cstdlib>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "util/pidfd_creds.h"

namespace mcpcell {
namespace {

bool ParseU32(std::string_view s, std::uint32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Adds the ids of a "Uid:\tr\te\ts\tfs" (or Gid:) line to `out`.
void AddIdsOfLine(std::string_view line, std::set<std::uint32_t>* out) {
  line.remove_prefix(4);
  while (!line.empty()) {
    std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) return;
    line.remove_prefix(start);
    std::size_t end = line.find_first_of(" \t");
    std::uint32_t id = 0;
    if (ParseU32(line.substr(0, end), &id)) out->insert(id);
    if (end == std::string_view::npos) return;
    line.remove_prefix(end);
  }
}

// The Uid: and Gid: lines of one /proc/PID/status (relative to /proc's fd).
// One read(2) into a stack buffer: both lines sit in the first 4 KiB
// (proc(5) prints them after Name, Umask, State, Tgid, Ngid, Pid, PPid,
// TracerPid). A stream per process cost 3 ms of a root launch's CPU with
// ~300 processes (issue 15).
void AddIdsOfProcess(int proc_fd, const char* pid, std::set<std::uint32_t>* ids) {
  char path[32];
  std::snprintf(path, sizeof path, "%s/status", pid);
  int fd = ::openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // exited meanwhile
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return;
  std::string_view text(buf, static_cast<std::size_t>(n));
  for (std::string_view key : {"\nUid:", "\nGid:"}) {
    std::size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view line = text.substr(at + 1);
    AddIdsOfLine(line.substr(0, line.find('\n')), ids);
  }
}

// /proc shows this process's pid namespace: a pidfd of one of its numbers
// is then the process /proc/NUMBER describes (a /proc of another namespace
// would name others by the same numbers).
bool ProcIsOurPidNamespace(int proc_fd) {
  char self[24] = {};
  ssize_t n = ::readlinkat(proc_fd, "self", self, sizeof self - 1);
  return n > 0 && std::to_string(::getpid()) == std::string_view(self, static_cast<std::size_t>(n));
}

// proc(5): every process's real, effective, saved and filesystem ids; a
// process that exits meanwhile is skipped. Through a pidfd where the kernel
// can (util/pidfd_creds.h, the same ids), else from its status file.
std::set<std::uint32_t> ProcessIds() {
  std::set<std::uint32_t> ids;
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return ids;
  bool by_pidfd = ProcIsOurPidNamespace(::dirfd(d));
  while (dirent* e = ::readdir(d)) {
    std::uint32_t pid = 0;
    if (!ParseU32(e->d_name, &pid)) continue;
    if (by_pidfd) {
      std::array<std::uint32_t, 8> creds{};
      PidfdCreds got = ReadPidfdCreds(static_cast<pid_t>(pid), &creds);
      if (got == PidfdCreds::kRead) ids.insert(creds.begin(), creds.end());
      if (got == PidfdCreds::kRead || got == PidfdCreds::kGone) continue;
      by_pidfd = got != PidfdCreds::kUnsupported;
    }
    AddIdsOfProcess(::dirfd(d), e->d_name, &ids);
  }
  ::closedir(d);
  return ids;
}

bool KnownToNss(std::uint32_t id) {
  // getpwuid_r/getgrgid_r: the thread-safe forms; a lookup error counts as known.
  char buf[16384];
  passwd pw{};
  passwd* pwp = nullptr;
  if (::getpwuid_r(id, &pw, buf, sizeof buf, &pwp) != 0 || pwp != nullptr) return true;
  group gr{};
  group* grp = nullptr;
  return ::getgrgid_r(id, &gr, buf, sizeof buf, &grp) != 0 || grp != nullptr;
}

std::uint32_t RandomOffset() {
  std::uint32_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r = static_cast<std::uint32_t>(::getpid());
  return r % kCellIdCount;
}

// Our own directory, not a symlink another user planted (lstat, then owner and mode).
Status EnsureOwnDir(const std::string& dir) {
  // Parents one by one (~/.local/state/mcpcell may not exist yet); 0700 for
  // those we create: nothing in them is for other users.
  for (std::size_t slash = dir.find('/', 1); slash != std::string::npos; slash = dir.find('/', slash + 1)) {
    (void)::mkdir(dir.substr(0, slash).c_str(), 0700);
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return ErrnoError("create the cell id directory", dir);
  struct stat st{};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoError("check the cell id directory", dir);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return MakeError("check the cell id directory", dir,
                     "it must be a directory of uid " + std::to_string(::geteuid()) +
                         " with mode 0700; remove it and run again");
  }
  return {};
}

// Locks dir/<id> without waiting; -1 when another claim holds it. After the
// lock, the path must still name the locked file: a reaper or a releasing
// holder may have unlinked it between our open and our flock.
int TryLock(const std::string& path) {
  for (;;) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return -1;
    }
    struct stat a{};
    struct stat b{};
    if (::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
      return fd;
    }
    ::close(fd);  // unlinked under us: try the path afresh
  }
}

}  // namespace

std::vector<IdRange> ParseSubIdRanges(std::string_view text) {
  std::vector<IdRange> out;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    std::size_t a = line.find(':');
    std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos || line.front() == '#') continue;
    IdRange r;
    if (ParseU32(line.substr(a + 1, b - a - 1), &r.first) && ParseU32(line.substr(b + 1), &r.count)) out.push_back(r);
  }
  return out;
}

bool IdIsFree(std::uint32_t id, const IdFacts& facts) {
  if (id < kCellIdFirst || id - kCellIdFirst >= kCellIdCount) return false;
  for (const auto& r : facts.subordinate) {
    if (id >= r.first && static_cast<std::uint64_t>(id) < static_cast<std::uint64_t>(r.first) + r.count) return false;
  }
  if (facts.process_ids.count(id) != 0) return false;
  return !facts.known || !facts.known(id);
}

IdFacts HostIdFacts() {
  IdFacts f;
  f.subordinate = ParseSubIdRanges(ReadWhole("/etc/subuid"));
  auto gids = ParseSubIdRanges(ReadWhole("/etc/subgid"));
  f.subordinate.insert(f.subordinate.end(), gids.begin(), gids.end());
  f.process_ids = ProcessIds();
  f.known = KnownToNss;
  return f;
}

IdFacts WithFirstCandidateLookedUp(IdFacts facts) {
  std::uint32_t offset = RandomOffset();
  facts.first_offset = offset;
  if (!facts.known) return facts;
  std::uint32_t id = kCellIdFirst + offset;
  bool known = facts.known(id);
  facts.known = [id, known, rest = std::move(facts.known)](std::uint32_t asked) {
    return asked == id ? known : rest(asked);
  };
  return facts;
}

Result<CellIdClaim> CellIdClaim::Claim(const std::string& dir, const IdFacts& facts, int attempts) {
  MCPCELL_TRY(EnsureOwnDir(dir));
  std::uint32_t offset = facts.first_offset ? *facts.first_offset % kCellIdCount : RandomOffset();
  for (int i = 0; i < attempts; ++i) {
    std::uint32_t id = kCellIdFirst + (offset + static_cast<std::uint32_t>(i)) % kCellIdCount;
    if (!IdIsFree(id, facts)) continue;
    std::string path = dir + "/" + std::to_string(id);
    int fd = TryLock(path);
    if (fd < 0) continue;
    CellIdClaim c;
    c.fd_ = fd;
    c.id_ = id;
    c.path_ = path;
    return c;
  }
  return MakeError("claim a host uid for the cell", dir,
                   "no free id among " + std::to_string(attempts) + " tried in " + std::to_string(kCellIdFirst) +
                       ".." + std::to_string(kCellIdFirst + kCellIdCount - 1) +
                       " (each must be unknown to passwd/group, outside /etc/subuid and /etc/subgid, and unused by "
                       "any process); run 'mcpcell gc' to remove stale claims");
}

// A normal user's claims live where no other user can create the name first
// (the adversary review squatted /dev/shm/mcpcell-ids-UID, a predictable name
// in a world-writable directory, and every container cell of that user was
// refused): $XDG_RUNTIME_DIR when it is the user's own 0700 directory, else
// the user's XDG state directory under $HOME.
std::string CellIdDirForThisUser() {
  if (::geteuid() == 0) return kRootCellIdDir;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  struct stat st{};
  if (runtime != nullptr && runtime[0] == '/' && ::lstat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::geteuid() && (st.st_mode & 077) == 0) {
    return std::string(runtime) + "/mcpcell-ids";
  }
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/mcpcell/cell-ids";
  const char* home = std::getenv("HOME");
  std::string base = home != nullptr && home[0] == '/' ? home : "/nonexistent";
  if (home == nullptr || home[0] != '/') {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr) base = pw->pw_dir;
  }
  return base + "/.local/state/mcpcell/cell-ids";
}

Result<CellIdClaim> CellIdClaim::ClaimForThisUser() { return Claim(CellIdDirForThisUser(), HostIdFacts()); }

void CellIdClaim::Release() {
  if (fd_ < 0) return;
  // Unlink while still holding the lock: a claimer that opened the file
  // before sees, after its flock, that the path is gone (TryLock).
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

int ReapCellIdClaims(const std::string& dir, int* checked) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return 0;
  int removed = 0;
  while (dirent* e = ::readdir(d)) {
    std::uint32_t id = 0;
    if (!ParseU32(e->d_name, &id)) continue;
    if (checked != nullptr) ++*checked;
    std::string path = dir + "/" + e->d_name;
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::unlink(path.c_str()) == 0) ++removed;
    ::close(fd);
  }
  ::closedir(d);
  return removed;
}

}  // namespace mcpcell
