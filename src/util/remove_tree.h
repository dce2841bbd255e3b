#pragma once
// Removing a directory tree that a cell wrote (an install's package
// directory, a run's scratch directories), however it was made: by handle,
// one directory open at a time, so a chain of directories past PATH_MAX is
// removed (std::filesystem::remove_all stops at ENAMETOOLONG), and with the
// owner's bits given back to a directory of ours whose mode keeps us out
// (0300 lets a script write a directory nobody can list; 0500 keeps a
// secrets directory's entries). adv18: both kinds left 1.5 GiB behind.

#include <string>

namespace mcpcell {

/// Removes `path` (a directory and all below it, or a file or link) and
/// says whether it is gone. What cannot be removed (another user's
/// directory, a mount point) is left, with the rest removed.
bool RemoveTree(const std::string& path);

}  // namespace mcpcell
