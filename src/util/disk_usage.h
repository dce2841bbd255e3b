#pragma once
// The disk a directory tree takes: what an install-script cell has written
// into the package directory it may write (a bind of the host's disk, which
// no tmpfs size bounds; adv13: RLIMIT_FSIZE bounds one file, and many files
// filled the host's disk).

#include <cstdint>
#include <string>

namespace mcpcell {

/// Bytes allocated to the regular files below `dir` (st_blocks × 512; links
/// not followed, other filesystems not entered; a file with several names
/// counts once per name, which can only overstate). 0 when `dir` cannot be read.
std::uint64_t DiskBytesBelow(const std::string& dir);

}  // namespace mcpcell
