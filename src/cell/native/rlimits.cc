// rlimits and scheduling for the cell's server, set in the server process
// (a vfork child of PID 1) before exec. No allocation on the success path.
//
// Every rlimit is set, none inherited: a caller's raised limits (a desktop
// user's RLIMIT_RTPRIO 95 and unlimited MEMLOCK for audio, a service's huge
// SIGPENDING) would otherwise pass into the cell. Each value is clamped to
// the caller's hard limit: raising a hard limit needs CAP_SYS_RESOURCE in the
// initial user namespace (setrlimit(2)), which the cell never has and even
// root may lack (this machine's root does); a lower limit is still a limit.

#include <linux/ioprio.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "cell/native/cgroup.h"

namespace mcpcell {
namespace {

constexpr rlim_t kUnlimited = RLIM_INFINITY;

struct RlimitDefault {
  int resource;
  const char* name;
  rlim_t soft;
  rlim_t hard;
};

// What a server gets when the spec says nothing (NOFILE, CORE and NPROC come
// from the spec). Unlimited where a cgroup, a tmpfs size or --timeout is the
// bound (CPU, FSIZE, DATA, AS, RSS) or the limit is dead (LOCKS); Linux's own
// defaults for MEMLOCK (8 MiB since 5.16), MSGQUEUE and STACK (8 MiB soft, not
// unlimited: that switches the mmap layout to legacy); no real-time priority
// and no raised nice at all; a modest SIGPENDING (queued signals are counted
// per user through the user namespaces, so the cell's share stays small).
constexpr RlimitDefault kDefaults[] = {
    {RLIMIT_CPU, "RLIMIT_CPU", kUnlimited, kUnlimited},
    {RLIMIT_FSIZE, "RLIMIT_FSIZE", kUnlimited, kUnlimited},
    {RLIMIT_DATA, "RLIMIT_DATA", kUnlimited, kUnlimited},
    {RLIMIT_STACK, "RLIMIT_STACK", 8 << 20, kUnlimited},
    {RLIMIT_RSS, "RLIMIT_RSS", kUnlimited, kUnlimited},
    {RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 8 << 20, 8 << 20},
    {RLIMIT_AS, "RLIMIT_AS", kUnlimited, kUnlimited},
    {RLIMIT_LOCKS, "RLIMIT_LOCKS", kUnlimited, kUnlimited},
    {RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", 4096, 4096},
    {RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 819200, 819200},
    {RLIMIT_NICE, "RLIMIT_NICE", 0, 0},
    {RLIMIT_RTPRIO, "RLIMIT_RTPRIO", 0, 0},
    {RLIMIT_RTTIME, "RLIMIT_RTTIME", kUnlimited, kUnlimited},
};

// hard = min(want, current hard); soft = min(want soft, that hard).
Status Set(int resource, const char* name, rlim_t soft, rlim_t hard) {
  struct rlimit cur {};
  if (::getrlimit(resource, &cur) != 0) return ErrnoError("getrlimit", name);
  struct rlimit next {};
  next.rlim_max = cur.rlim_max == RLIM_INFINITY ? hard : std::min(hard, cur.rlim_max);
  next.rlim_cur = std::min(soft, next.rlim_max);
  if (::setrlimit(resource, &next) != 0) {
    Error e = ErrnoError("setrlimit", name);
    e.detail = "value " + std::to_string(next.rlim_cur) + "/" + std::to_string(next.rlim_max);
    return e;
  }
  return {};
}

}  // namespace

Status ApplyRlimits(const Limits& limits) {
  for (const auto& d : kDefaults) MCPCELL_TRY(Set(d.resource, d.name, d.soft, d.hard));
  MCPCELL_TRY(Set(RLIMIT_NOFILE, "RLIMIT_NOFILE", limits.nofile, limits.nofile));
  MCPCELL_TRY(Set(RLIMIT_CORE, "RLIMIT_CORE", limits.core_bytes, limits.core_bytes));
  if (limits.file_bytes != 0) MCPCELL_TRY(Set(RLIMIT_FSIZE, "RLIMIT_FSIZE", limits.file_bytes, limits.file_bytes));
  // A fallback for when the pids cgroup is unavailable. Since Linux 5.14
  // RLIMIT_NPROC is counted in ucounts per (user namespace, uid), so in the
  // cell's own user namespace it bounds the cell's processes, not every
  // process the host uid owns (kernel/ucount.c, is_rlimit_overlimit). The
  // check at fork is skipped only for tasks with CAP_SYS_RESOURCE or
  // CAP_SYS_ADMIN in the initial namespace, or init's own ucounts (host
  // root), which a cell never has.
  rlim_t nproc = limits.pids.value ? static_cast<rlim_t>(*limits.pids.value) : kUnlimited;
  MCPCELL_TRY(Set(RLIMIT_NPROC, "RLIMIT_NPROC", nproc, nproc));
  return {};
}

Status ResetScheduling() {
  // sched(7): policy and nice are inherited across fork and execve. A caller
  // running SCHED_FIFO (chrt, a real-time audio session) would lend it to the
  // server, and RLIMIT_RTPRIO 0 only stops *raising* a priority. Dropping to
  // SCHED_OTHER is always allowed, as is raising nice.
  int policy = ::sched_getscheduler(0);
  if (policy >= 0 && (policy & ~SCHED_RESET_ON_FORK) != SCHED_OTHER && (policy & ~SCHED_RESET_ON_FORK) != SCHED_BATCH &&
      (policy & ~SCHED_RESET_ON_FORK) != SCHED_IDLE) {
    struct sched_param p {};
    if (::sched_setscheduler(0, SCHED_OTHER, &p) != 0) return ErrnoError("reset the scheduling policy to SCHED_OTHER");
  }
  errno = 0;
  int nice = ::getpriority(PRIO_PROCESS, 0);
  if (errno == 0 && nice < 0 && ::setpriority(PRIO_PROCESS, 0, 0) != 0) return ErrnoError("reset nice to 0");
  // ioprio_set(2): the real-time I/O class needs CAP_SYS_ADMIN or CAP_SYS_NICE
  // to set, but is inherited like the rest. "None" follows the nice value.
  long prio = ::syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
  if (prio >= 0 && IOPRIO_PRIO_CLASS(prio) == IOPRIO_CLASS_RT &&
      ::syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0)) != 0) {
    return ErrnoError("reset the real-time I/O priority");
  }
  return {};
}

}  // namespace mcpcell
