#pragma once
// uid/gid maps of the cell's user namespace, written by the supervisor.

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "util/error.h"

namespace mcpcell {

/// Who the cell's user is on the host. An unprivileged caller can only map
/// itself: the cell is then the caller's own processes, which the caller
/// could ptrace or signal anyway, so sharing its uid gives nobody anything new.
/// Root maps the cell user to an unprivileged host id instead of root (a cell
/// user that is host root would pass DAC checks on host files such as
/// /proc/sys entries even without capabilities), and to one claimed for this
/// run alone (cell_ids.h), not nobody: every host process running as nobody
/// could otherwise signal the cell and, with ptrace access, read its memory
/// and /proc/PID/root.
struct HostIds {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  bool privileged = false;  ///< caller is root: may keep setgroups and drop supplementary groups
};

/// The caller's ids, or for root `root_cell_id` (a claimed id) as uid and gid.
HostIds CellHostIds(std::uint32_t root_cell_id);

/// Writes /proc/<pid>/{setgroups,uid_map,gid_map}: one line each, cell id → host id.
Status WriteIdMaps(pid_t pid, std::uint32_t cell_uid, std::uint32_t cell_gid, const HostIds& host);

/// Explains when `path` (a --write dir) is not writable by the cell's host ids.
Status CheckCellCanWrite(const std::string& path, const HostIds& host);

}  // namespace mcpcell
