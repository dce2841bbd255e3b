#pragma once
// What `mcpcell ps` lists: each running mcpcell writes a small JSON record
// into its user's state directory (util/state_dir.h), <state>/cells/<id>.json,
// 0600, and removes it at exit. A record whose pid is gone (or recycled: the
// start time differs) is stale: ps ignores it and `mcpcell gc` removes it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

struct CellRecord {
  std::string id;               ///< 12 hex digits, random; also names the log
  int pid = 0;                  ///< the mcpcell supervising the cell
  unsigned long long pid_start = 0;  ///< its start time (/proc/PID/stat field 22)
  int client_pid = 0;           ///< mcpcell's parent when it started: the MCP client
  std::int64_t started = 0;     ///< unix seconds
  std::string server;           ///< what was asked for (npx://..., a registry name, a command)
  std::string backend;          ///< native | docker | podman | gvisor
  std::string network;          ///< none | allow-list | open
  std::string log;              ///< the stderr copy's path ("" when none)
  std::string npx_cache_dir;    ///< the npx package directory the cell runs from ("" when none)
};

nlohmann::json ToJson(const CellRecord& r);
/// Parses a record; nullopt for anything that is not one (a half-written or foreign file).
std::optional<CellRecord> CellRecordFromJson(const nlohmann::json& j);

/// A fresh id: 12 lowercase hex digits from getrandom(2).
std::string NewRunRecordId();

/// <state>/cells.
std::string CellRecordDir(const std::string& state_dir);

/// The record of this run, on disk while the object lives. Move-only.
class LiveCellRecord {
 public:
  LiveCellRecord() = default;
  LiveCellRecord(LiveCellRecord&&) noexcept = default;
  LiveCellRecord& operator=(LiveCellRecord&& o) noexcept;
  LiveCellRecord(const LiveCellRecord&) = delete;
  LiveCellRecord& operator=(const LiveCellRecord&) = delete;
  ~LiveCellRecord() { Remove(); }

  /// Writes `record` as <dir>/<id>.json (0600; a temporary name, then
  /// renameat, so a reader never sees half a record). `dir` is an
  /// OpenStateDir fd, kept to remove the record by name relative to it.
  static Result<LiveCellRecord> Write(UniqueFd dir, const CellRecord& record);

 private:
  void Remove();
  UniqueFd dir_;
  std::string name_;
};

struct ListedRecord {
  CellRecord record;
  std::string file;  ///< name in the directory
  bool alive = false;
};

/// Every record file in `dir` (an OpenStateDir fd): regular files of ours
/// only, opened with O_NOFOLLOW, at most 64 KiB each; others are skipped.
std::vector<ListedRecord> ListCellRecords(int dir);

/// The npx/uvx install directories this user's running cells run from
/// (their records' npx_cache_dir): never pruned nor removed under them.
std::vector<std::string> CacheDirsInUse();

/// Whether `dir` is one of CacheDirsInUse().
bool CacheDirInUse(const std::string& dir);

struct SweepCount {
  int checked = 0;
  int removed = 0;
};

/// Removes the records in `dir` whose mcpcell is gone, and files there that
/// are no record (half-written temporaries of a killed run).
SweepCount ReapCellRecords(int dir);

}  // namespace mcpcell
