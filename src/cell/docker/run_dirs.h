#pragma once
// Per-run directories on /dev/shm (FIFOs, secrets) are named
// <prefix><supervisor pid>-XXXXXX; a supervisor killed with -9 cannot remove
// its own, so later runs and `mcpcell gc` reap those of dead supervisors.

#include <string>

namespace mcpcell::docker {

/// Removes directories in `parent` named `prefix`<pid>-* that we own and
/// whose pid no longer runs. Returns how many were removed.
int ReapDeadRunDirs(const std::string& parent, const std::string& prefix);

}  // namespace mcpcell::docker
