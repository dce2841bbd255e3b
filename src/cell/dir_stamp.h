#pragma once
// What a directory is at one moment, as far as its entries go: the mount it
// was reached through (statx's unique mount id: a disk swapped in at the same
// place, or the same disk mounted again, is another mount), its device and
// inode, and its ctime and mtime to the nanosecond (adding, removing or
// renaming an entry changes both; user space can set mtime but not ctime,
// short of setting the clock, which takes CAP_SYS_TIME). Used by the grant
// scan cache (grant_scan_cache.h) to tell an unchanged tree.

#include <cstdint>
#include <optional>
#include <string>

namespace mcpcell {

struct DirStamp {
  std::string rel;  ///< below the walked directory; "" for itself
  std::uint64_t mnt = 0, dev = 0, ino = 0;
  std::int64_t ctime_ns = 0, mtime_ns = 0;
  bool operator==(const DirStamp&) const = default;
};

/// The stamp of the directory open at `fd`; nullopt when it is none, or this
/// kernel gives no unique mount id (statx STATX_MNT_ID_UNIQUE, Linux 6.8).
std::optional<DirStamp> StampOf(int fd);

/// The same for `path`, not following a symlink in its last component.
std::optional<DirStamp> StampAt(const std::string& path);

/// Whether the filesystem of `fd` keeps a directory's stamp in step with its
/// entries: local ext4, xfs, btrfs, f2fs and tmpfs. Not FUSE, network,
/// overlay (a change in a lower layer leaves the merged directory's stamp as
/// it was) or vfat (no inodes, coarse times): their trees are walked every time.
bool StampsHoldOn(int fd);

}  // namespace mcpcell
