#pragma once
// mcpcell's per-user state: the records of running cells (`mcpcell ps`) and
// the copies of their stderr (`mcpcell logs`). Each user has their own, in a
// directory nobody else can read, write or swap under us.

#include <string>
#include <vector>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Where the per-user state directories live: $XDG_STATE_HOME when that is
/// absolute; else /var/lib for root and $HOME/.local/state (passwd's home
/// without $HOME) for anyone else. Not $XDG_RUNTIME_DIR: MCP clients start
/// servers with a reduced environment (the SDK's stdio client passes HOME,
/// PATH, USER and a few more, never XDG_RUNTIME_DIR), and `mcpcell ps` in the
/// user's shell must find the records those runs wrote.
std::string StateBaseForThisUser();

/// $XDG_STATE_HOME when it is valid (absolute, no control byte), else "".
std::string StateHomeFromEnvironment();

/// StateBaseForThisUser() + "/mcpcell".
std::string StateDirForThisUser();

/// The account's own state directory, whatever this run's environment says:
/// /var/lib/mcpcell for root, else the passwd home's .local/state/mcpcell;
/// "" when the account has no home. It keeps the list of every other state
/// directory the account's launches used (KnownStateDirs).
std::string AccountStateDir();

/// The state directories launches of this account used under another
/// XDG_STATE_HOME or HOME, as they recorded themselves (RememberStateDir).
std::vector<std::string> KnownStateDirs();

/// For root: the state directories every other passwd account listed (its
/// own known-state-dirs), each a real directory of that account reached
/// through no symlink, at most 32 per account; empty for anyone else.
std::vector<std::string> OtherAccountsStateDirs();

/// Adds `dir` to the account's list (AccountStateDir()/known-state-dirs)
/// unless it is the account's own: a launch whose environment names another
/// state directory must still hide this one from its cells (adv22). Gone
/// directories are dropped from the list as it is rewritten.
Status RememberStateDir(const std::string& dir);

/// Every directory mcpcell keeps files of its own in (state: records, logs,
/// pins; cache: npx and uvx packages, compiled secret rules, grant scans),
/// as this run's environment names them AND as the account's defaults do
/// ($HOME and the passwd home, /var/lib for root): a run under another
/// XDG_CACHE_HOME, XDG_STATE_HOME or HOME must not grant its cell one that
/// a later run in the usual environment trusts; and every state directory in
/// KnownStateDirs(). Absolute, without duplicates.
struct OwnDir {
  std::string path;
  std::string what;  ///< "mcpcell's state directory (cell records, logs, tool pins)", or its cache's
  /// No cell may see it at all (the state directory: every cell's records and
  /// stderr copies, the pins): never granted, masked inside any grant above it.
  /// The cache is only kept from writing: a server runs from its packages.
  bool hidden = false;
  /// Another account's (root reads each account's list, OtherAccountsStateDirs):
  /// masked like ours, but never a reason to refuse root's writable grant
  /// above it (adv26: any account could block root's --write of a shared dir).
  bool others = false;
};
std::vector<OwnDir> McpcellOwnDirs();

/// Opens <base>/mcpcell/<leaf> as a directory fd, creating what is missing
/// (0700). The base is the user's choice and may be reached through
/// symlinks; below it, "mcpcell" and `leaf` are opened one at a time with
/// openat(O_NOFOLLOW) and each must be a directory of the effective uid with
/// no group or other bits (0700), else it is refused naming the path and the
/// fix. Every file below is then opened relative to the fd (openat,
/// O_NOFOLLOW): a symlink planted in our tree, or a parent another user can
/// rename, cannot redirect a read or a write.
Result<UniqueFd> OpenStateDir(const std::string& leaf);

/// Whether `pid` runs and started at `start_ticks` (proc(5), /proc/PID/stat
/// field 22): a recycled pid does not pass for the run that wrote a record.
bool ProcessIsAlive(int pid, unsigned long long start_ticks);

/// Field 22 of /proc/PID/stat (start time in clock ticks since boot); 0 when unknown.
unsigned long long ProcessStartTicks(int pid);

}  // namespace mcpcell
