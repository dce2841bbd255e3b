#pragma once
// mcpcell's per-user state: the records of running cells (`mcpcell ps`) and
// the copies of their stderr (`mcpcell logs`). Each user has their own, in a
// directory nobody else can read, write or swap under us.

#include <string>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// $XDG_STATE_HOME/mcpcell when that is absolute; else /var/lib/mcpcell for
/// root and $HOME/.local/state/mcpcell (passwd's home without $HOME) for
/// anyone else. Not $XDG_RUNTIME_DIR: MCP clients start servers with a
/// reduced environment (the SDK's stdio client passes HOME, PATH, USER and a
/// few more, never XDG_RUNTIME_DIR), and `mcpcell ps` in the user's shell
/// must find the records those runs wrote.
std::string StateDirForThisUser();

/// Opens `dir` (creating it and missing parents 0700) as an O_PATH-free
/// directory fd, refusing it unless it is a real directory (O_NOFOLLOW: no
/// symlink in its last component), owned by the effective uid, with no group
/// or other bits (0700). Every file below is then opened relative to the fd
/// (openat, O_NOFOLLOW), so a parent another user can rename cannot redirect
/// a write: what we checked is where we write.
Result<UniqueFd> OpenPrivateDir(const std::string& dir);

/// Whether `pid` runs and started at `start_ticks` (proc(5), /proc/PID/stat
/// field 22): a recycled pid does not pass for the run that wrote a record.
bool ProcessIsAlive(int pid, unsigned long long start_ticks);

/// Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 when unknown.
unsigned long long ProcessStartTicks(int pid);

}  // namespace mcpcell
