#pragma once
// The audit sink: one JSON object per line, appended to a file the user
// names with --audit-log. Schema: docs/AUDIT.md. Every event carries "ts"
// (UTC, RFC 3339 with milliseconds), "event" and "server".

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class AuditLog {
 public:
  /// Opens (creating with mode 0600) `path` for appending. Refuses a symlink
  /// (O_NOFOLLOW), anything but a regular file, and an existing file that
  /// group or others may read or write (the log holds paths and decisions).
  static Result<AuditLog> Open(const std::string& path);

  /// Appends `event` as one line with a single write(2) on an O_APPEND fd, so
  /// lines from concurrent mcpcell processes never interleave. Adds "ts" if
  /// the event has none.
  Status Write(const nlohmann::json& event);

  const std::string& path() const { return path_; }

 private:
  AuditLog(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::string path_;
};

/// Current time as "2026-09-01T12:34:56.789Z".
std::string AuditTimestamp();

}  // namespace mcpcell
