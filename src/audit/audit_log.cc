#include "audit/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mcpcell {

Result<AuditLog> AuditLog::Open(const std::string& path) {
  // O_NOFOLLOW: a symlink planted at the log path must not redirect our
  // writes (open(2): fails with ELOOP). O_APPEND: each write lands at the end
  // atomically with respect to other appenders. 0600: decisions and paths are
  // nobody else's business; the umask can only narrow it.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    Error e = ErrnoError("open audit log", path);
    if (e.err == ELOOP) e.detail = "the path is a symbolic link; name the real file";
    return e;
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoError("stat audit log", path);
  if (!S_ISREG(st.st_mode)) {
    return MakeError("open audit log", path, "not a regular file; name a file, not a directory or device");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return MakeError("open audit log", path,
                     fmt::format("the file is readable or writable by others (mode {:o}); run chmod 600 on it",
                                 st.st_mode & 07777));
  }
  return AuditLog(std::move(owned), path);
}

Status AuditLog::Write(const nlohmann::json& event) {
  nlohmann::json e = event;
  if (!e.contains("ts")) e["ts"] = AuditTimestamp();
  // dump() escapes control characters, so the line cannot contain a raw newline;
  // replace invalid UTF-8 rather than throwing on a hostile server name.
  std::string line = e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd_.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write audit log", path_);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return {};
}

std::string AuditTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm {};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, ms);
}

}  // namespace mcpcell
