#pragma once
// The names in a directory opened as an fd (an OpenStateDir fd, a cache
// directory), for the sweeps that list and prune what they keep there.

#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// Every name in directory `dir` but "." and "..", in readdir order. Read
/// through a duplicate of `dir` rewound to the start: a duplicate shares the
/// file offset (dup(2)), so without the rewind a second listing of the same
/// fd would see nothing. `dir` stays open and usable for openat/unlinkat.
/// Fails when the duplicate cannot be made or read (EMFILE, EBADF, ENOTDIR).
Result<std::vector<std::string>> DirNames(int dir);

}  // namespace mcpcell
