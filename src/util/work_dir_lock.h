#pragma once
// A launch's working directory in a shared cache (an install in progress,
// npm's config snapshot) is held by an flock(2) for its life, and a sweep of
// abandoned ones leaves a held one alone, whatever its owner's pid says
// from this pid namespace and however old it is (adv19: an install past an
// hour, or an mcpcell of another pid namespace sharing the cache, was swept
// while its scripts ran).

#include <string>

#include "util/unique_fd.h"

namespace mcpcell {

/// Holds `dir` (an exclusive flock on it) while the fd lives; an invalid
/// fd when it cannot be opened or locked.
UniqueFd HoldWorkDir(const std::string& dir);

/// Whether a live process holds `dir` (HoldWorkDir).
bool WorkDirHeld(const std::string& dir);

}  // namespace mcpcell
