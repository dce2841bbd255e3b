#include "cell/dir_stamp.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

namespace mcpcell {
namespace {

// Linux 6.8: a 64-bit mount id never reused until reboot (the older
// STATX_MNT_ID is recycled as mounts come and go). Debian 12's headers predate it.
constexpr unsigned kStatxMntIdUnique = 0x00004000U;

std::optional<DirStamp> Statx(int dirfd, const char* path, int flags) {
  struct statx sx{};
  unsigned want = STATX_TYPE | STATX_INO | STATX_CTIME | STATX_MTIME | kStatxMntIdUnique;
  if (::statx(dirfd, path, flags | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, want, &sx) != 0) return std::nullopt;
  if ((sx.stx_mask & kStatxMntIdUnique) == 0 || (sx.stx_mask & (STATX_CTIME | STATX_MTIME | STATX_INO)) == 0 ||
      !S_ISDIR(sx.stx_mode)) {
    return std::nullopt;
  }
  DirStamp s;
  s.mnt = sx.stx_mnt_id;
  s.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  s.ino = sx.stx_ino;
  s.ctime_ns = sx.stx_ctime.tv_sec * 1'000'000'000LL + sx.stx_ctime.tv_nsec;
  s.mtime_ns = sx.stx_mtime.tv_sec * 1'000'000'000LL + sx.stx_mtime.tv_nsec;
  return s;
}

}  // namespace

std::optional<DirStamp> StampOf(int fd) { return Statx(fd, "", AT_EMPTY_PATH); }

std::optional<DirStamp> StampAt(const std::string& path) { return Statx(AT_FDCWD, path.c_str(), 0); }

bool StampsHoldOn(int fd) {
  struct statfs fs{};
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0xEF53UL:      // ext2/3/4
    case 0x58465342UL:  // xfs
    case 0x9123683EUL:  // btrfs
    case 0xF2F52010UL:  // f2fs
    case 0x01021994UL:  // tmpfs
      return true;
    default:
      return false;
  }
}

}  // namespace mcpcell
