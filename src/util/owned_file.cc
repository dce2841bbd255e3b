#include "util/owned_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace mcpcell {

Status CheckOwned(int fd, OwnedKind kind, const std::string& path, const OwnedRules& rules) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return ErrnoError(rules.what, path);
  bool directory = kind == OwnedKind::kDirectory;
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
    return MakeError(rules.what, path, directory ? "is not a directory" : "is not a regular file");
  }
  if (st.st_uid != ::geteuid()) {
    return MakeError(rules.what, path,
                     fmt::format("is owned by uid {}, not by you (uid {}): {}; {}", st.st_uid, ::geteuid(), rules.risk,
                                 rules.not_yours_fix));
  }
  if ((st.st_mode & 022) != 0) {
    return MakeError(rules.what, path,
                     fmt::format("is writable by group or others (mode {:o}): {}; {}", st.st_mode & 07777, rules.risk,
                                 rules.writable_fix));
  }
  if (!directory && static_cast<std::uint64_t>(st.st_size) > rules.max_bytes) {
    return MakeError(rules.what, path, fmt::format("is {} bytes, more than {}", st.st_size, rules.max_bytes));
  }
  return {};
}

Result<UniqueFd> OpenOwnedFileAt(int dir, const std::string& name, int flags, const std::string& open_what,
                                 const std::string& path, const OwnedRules& rules) {
  UniqueFd fd(::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd) return ErrnoError(open_what, path);
  MCPCELL_TRY(CheckOwned(fd.get(), OwnedKind::kFile, path, rules));
  return fd;
}

Result<UniqueFd> OpenOwnedDirAt(int dir, const std::string& name, const std::string& open_what,
                                const std::string& path, const OwnedRules& rules) {
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return ErrnoError(open_what, path);
  MCPCELL_TRY(CheckOwned(fd.get(), OwnedKind::kDirectory, path, rules));
  return fd;
}

Result<std::string> ReadOwnedFile(int fd, const std::string& read_what, const std::string& path,
                                  const OwnedRules& rules) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(read_what, path);
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    // The file may have grown since CheckOwned looked at its size.
    if (out.size() > rules.max_bytes) return MakeError(read_what, path, "too large");
  }
}

}  // namespace mcpcell
