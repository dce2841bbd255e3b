#pragma once
// Landlock as defence in depth: mirrors the cell's mounts so that even a
// mount escape would find the same read/write boundaries. Best effort by ABI.

#include <string>
#include <vector>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// A path inside the cell (after pivot_root) and what may be done beneath it.
struct LandlockPath {
  std::string path;
  bool write = false;    ///< write/create/remove/truncate beneath it
  bool execute = true;   ///< run programs from it
  bool device = false;   ///< ioctl on device files (ABI 5), for /dev/pts ttys
  bool list_only = false;  ///< only list directories beneath it (READ_DIR): for "/", so
                           ///< `ls /` works without granting every file below
};

/// What was enforced, for the report on stderr / doctor.
struct LandlockReport {
  int abi = 0;                 ///< 0 = Landlock unavailable
  bool enforced = false;
  bool scoped_signals = false; ///< ABI 6: no signals to processes outside the domain
  bool scoped_abstract_unix = false;
  std::string note;            ///< why not enforced, or what was left out for this ABI
};

/// The kernel's Landlock ABI version, 0 if unavailable or disabled.
int LandlockAbi();

/// A ruleset built ahead of time, so the process that applies it only makes
/// one syscall (it may be a vfork child that must not allocate).
struct PreparedLandlock {
  UniqueFd ruleset;  ///< invalid when Landlock is unavailable
  LandlockReport report;
};

/// Builds the ruleset for `paths` (paths as the restricted process will see them).
Result<PreparedLandlock> PrepareLandlock(const std::vector<LandlockPath>& paths);

/// landlock_restrict_self with a prepared ruleset; a no-op when none. Needs no_new_privs.
Status RestrictLandlock(const PreparedLandlock& prepared);

/// Restricts the calling thread (and its future children) to `paths`; everything
/// else in the filesystem is denied for the access rights this ABI handles.
/// Requires no_new_privs. When Landlock is unavailable returns a report with
/// enforced=false (not an error): it is defence in depth, reported, not required.
Result<LandlockReport> ApplyLandlock(const std::vector<LandlockPath>& paths);

}  // namespace mcpcell
