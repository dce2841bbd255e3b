#pragma once
// A process's credentials through a pidfd (PIDFD_GET_INFO, Linux 6.13,
// include/uapi/linux/pidfd.h): the real, effective, saved and filesystem
// uids and gids that /proc/PID/status prints on its Uid: and Gid: lines, as
// the caller's user namespace sees them, without the kernel rendering the
// rest of that file (signal masks, memory, cpusets): half the CPU of a
// status read (bench/RESULTS.md, launch fourth pass).

#include <sys/types.h>

#include <array>
#include <cstdint>

namespace mcpcell {

enum class PidfdCreds {
  kRead,         ///< `ids` filled
  kGone,         ///< the process exited
  kUnavailable,  ///< this process cannot be asked so: read its status instead
  kUnsupported,  ///< the kernel has no PIDFD_GET_INFO: read every status
};

/// `ids`: ruid, euid, suid, fsuid, rgid, egid, sgid, fsgid of `pid`, a
/// process of the caller's pid namespace.
PidfdCreds ReadPidfdCreds(pid_t pid, std::array<std::uint32_t, 8>* ids);

}  // namespace mcpcell
