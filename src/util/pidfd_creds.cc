#include "util/pidfd_creds.h"

#include <linux/ioctl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "util/unique_fd.h"

namespace mcpcell {
namespace {

// PIDFD_INFO_SIZE_VER0 (64 bytes) of include/uapi/linux/pidfd.h, which this
// build's kernel headers predate. The kernel copies what both sizes share.
struct PidfdInfo {
  std::uint64_t mask;
  std::uint64_t cgroupid;
  std::uint32_t pid, tgid, ppid;
  std::uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  std::uint32_t spare0[1];
};
static_assert(sizeof(PidfdInfo) == 64);

constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, PidfdInfo);
constexpr std::uint64_t kPidfdInfoCreds = 1U << 1;

}  // namespace

PidfdCreds ReadPidfdCreds(pid_t pid, std::array<std::uint32_t, 8>* ids) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0U)));
  if (!fd) {
    if (errno == ESRCH) return PidfdCreds::kGone;
    return errno == ENOSYS ? PidfdCreds::kUnsupported : PidfdCreds::kUnavailable;
  }
  PidfdInfo info{};
  info.mask = kPidfdInfoCreds;
  if (::ioctl(fd.get(), kPidfdGetInfo, &info) != 0) {
    if (errno == ESRCH) return PidfdCreds::kGone;
    // Before 6.13 a pidfd answers no such ioctl (ENOTTY; EINVAL from older pidfs).
    return errno == ENOTTY || errno == EINVAL ? PidfdCreds::kUnsupported : PidfdCreds::kUnavailable;
  }
  if ((info.mask & kPidfdInfoCreds) == 0) return PidfdCreds::kUnsupported;
  *ids = {info.ruid, info.euid, info.suid, info.fsuid, info.rgid, info.egid, info.sgid, info.fsgid};
  return PidfdCreds::kRead;
}

}  // namespace mcpcell
