#pragma once
// What a filesystem has in use: how an install-script cell's writes into the
// package directory are bounded (a bind of the host's disk, which no tmpfs
// size bounds; RLIMIT_FSIZE bounds one file, and many files filled the
// host's disk, adv13).
//
// The filesystem's own count (statfs(2)), not a walk of the package
// directory: a walk misses what it cannot reach — a directory chain past
// PATH_MAX, a directory of mode 0300, a file unlinked while held open — and
// counts only what it recognises (adv18: 1.5 GiB hidden each way, 1.3 GiB
// in symlinks). The count sees every block and inode taken, wherever in the
// filesystem and by whom: other writers to the same disk count too, which
// can only stop a cell early.

#include <cstdint>
#include <string>

#include "util/error.h"

namespace mcpcell {

struct FsUsage {
  std::uint64_t bytes = 0;   ///< blocks in use × the fragment size
  std::uint64_t inodes = 0;  ///< inodes in use (0 on a filesystem that does not count them)
};

/// The use of the filesystem holding `path`.
Result<FsUsage> FsUsageOf(const std::string& path);

}  // namespace mcpcell
