#pragma once
// The audit sink: one JSON object per line, appended to a file the user
// names with --audit-log. Schema: docs/AUDIT.md. Every event carries "ts"
// (UTC, RFC 3339 with milliseconds), "event" and "server".
//
// Tamper evidence: the file is one hash chain. Each record carries "run"
// (this process's random id), "seq" (its place in the file, from 0), "prev"
// (the previous record's hash; 64 zeros for the first) and, as its last
// member, "hash": SHA-256 of the line without that member. The log appends
// "ts" (unless the event has one), "run", "seq" and "prev" after the event's
// own members, in that order: verify hashes the line as it stands, so the
// order is free, and appending spares a copy of the event. Writers of
// several mcpcell runs take flock(2) on the file, read the last record's
// hash and seq, append, unlock — so concurrent runs extend the same chain.
// `mcpcell audit verify` (audit_verify.h) checks it.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <string>

#include <sys/stat.h>

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

  /// Appends `event` as one chained line (see above) with a single write(2)
  /// on an O_APPEND fd under flock. Adds "ts" if the event has none.
  /// Thread-safe: the egress proxy and the relay write from their threads.
  /// Fails (and writes nothing: a partly written record is cut off again)
  /// when the write fails (ENOSPC, EIO, ...) or the file is no longer the
  /// one at `path` (removed, renamed, replaced) — the caller decides what
  /// may still happen unrecorded (the relay: nothing, see mcp_relay.h).
  Status Write(const nlohmann::json& event);

  /// Write for an event the caller has dumped already (the relay dumps each
  /// record to scan it for secrets): `object` is one compact JSON object as
  /// nlohmann::json::dump() writes it with invalid UTF-8 replaced, without
  /// "ts", "run", "seq", "prev" or "hash" members (all five are appended).
  /// Refuses text that is not one line between braces.
  Status WriteObject(std::string_view object);

  const std::string& path() const { return path_; }
  const std::string& run_id() const { return run_; }

 private:
  AuditLog(UniqueFd fd, std::string path, const struct stat& st);
  Status Append(std::string_view object, bool add_ts);
  Result<struct stat> StatStillAtPath() const;
  Status ChainTail(std::uint64_t size, std::string* prev, std::uint64_t* seq, bool* needs_newline);

  UniqueFd fd_;
  std::string path_;
  std::string run_;
  dev_t dev_;  ///< the opened file's, to tell it from another file put at `path_`
  ino_t ino_;
  std::unique_ptr<std::mutex> mu_;
  // The chain's end as this writer left it: valid while the file's size is
  // still `end_` (no other writer appended since).
  std::uint64_t end_ = UINT64_MAX;
  std::string last_hash_;
  std::uint64_t last_seq_ = 0;
};

/// Current time as "2026-09-01T12:34:56.789Z".
std::string AuditTimestamp();

/// The SHA-256 of a chained record line (without newline): of the line with
/// its trailing `,"hash":"…"` member removed; nullopt if it has none.
std::optional<std::string> ChainedRecordHash(std::string_view line, std::string* stated);

}  // namespace mcpcell
