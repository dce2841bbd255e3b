#pragma once
// mcpcell's seccomp deny list (cell/native/seccomp.h) as a Docker seccomp
// profile, so container cells deny exactly what native cells deny. Docker's
// built-in default profile (20.10) still allows ptrace and io_uring, which the
// attack battery counts as escapes; this profile replaces it.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cell/native/seccomp.h"

namespace mcpcell::docker {

/// The profile: default allow; each rule an SCMP_ACT_ERRNO entry with its
/// errno and argument checks (Docker/runc conditions: MASKED_EQ takes the mask
/// in "value" and the datum in "valueTwo"). Only the native architecture is
/// listed, so foreign-ABI (i386/x32) syscalls get runc's bad-arch action
/// instead of bypassing the list by number.
nlohmann::json SeccompProfile(const std::vector<SyscallRule>& rules);

}  // namespace mcpcell::docker
