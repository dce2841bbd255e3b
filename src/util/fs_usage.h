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

/// What may be taken of the disk holding a directory while untrusted work
/// writes there (install scripts, npm's unpacking of tarballs): `bytes` and
/// `inodes` above the lowest use seen since Start. The lowest, not the
/// first: what the work deletes (a file its own tarball shipped) is no
/// credit for what it writes next (adv19).
class DiskBudget {
 public:
  static Result<DiskBudget> Start(const std::string& dir, std::uint64_t bytes, std::uint64_t inodes);
  /// Looks now at the disk holding `dir` (the same disk as Start's); true
  /// once past the budget, or when the disk cannot be measured (the work
  /// is not let run unbounded).
  bool Over(const std::string& dir);
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t inodes() const { return inodes_; }

 private:
  std::uint64_t bytes_ = 0;
  std::uint64_t inodes_ = 0;
  FsUsage low_;
};

}  // namespace mcpcell
