// rlimits for the cell, set in the cell's first process before exec.

#include <sys/resource.h>

#include <algorithm>
#include <string>

#include "cell/native/cgroup.h"

namespace mcpcell {
namespace {

// Sets soft = hard = min(want, current hard). Raising a hard limit needs
// CAP_SYS_RESOURCE (setrlimit(2)), which even root may lack (this machine's
// root does); a lower limit than asked is still a limit, so clamp, don't fail.
Status SetBoth(int resource, const char* name, std::uint64_t want) {
  struct rlimit cur {};
  if (::getrlimit(resource, &cur) != 0) return ErrnoError("getrlimit", name);
  rlim_t value = static_cast<rlim_t>(want);
  if (cur.rlim_max != RLIM_INFINITY) value = std::min(value, cur.rlim_max);
  struct rlimit next {value, value};
  if (::setrlimit(resource, &next) != 0) {
    Error e = ErrnoError("setrlimit", name);
    e.detail = "value " + std::to_string(value);
    return e;
  }
  return {};
}

}  // namespace

Status ApplyRlimits(const Limits& limits) {
  MCPCELL_TRY(SetBoth(RLIMIT_NOFILE, "RLIMIT_NOFILE", limits.nofile));
  MCPCELL_TRY(SetBoth(RLIMIT_CORE, "RLIMIT_CORE", limits.core_bytes));
  if (limits.pids.value) {
    // A fallback for when the pids cgroup is unavailable. Since Linux 5.14
    // RLIMIT_NPROC is counted in ucounts per (user namespace, uid), so in the
    // cell's own user namespace it bounds the cell's processes, not every
    // process the host uid owns (kernel/ucount.c, is_rlimit_overlimit). The
    // check at fork is skipped only for tasks with CAP_SYS_RESOURCE or
    // CAP_SYS_ADMIN in the initial namespace, or init's own ucounts (host
    // root), which a cell never has.
    MCPCELL_TRY(SetBoth(RLIMIT_NPROC, "RLIMIT_NPROC", *limits.pids.value));
  }
  return {};
}

}  // namespace mcpcell
