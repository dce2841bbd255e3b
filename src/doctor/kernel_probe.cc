// Kernel features the native backend builds on, each tried with the syscall itself.

#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>

#include "doctor/checks.h"
#include "doctor/host.h"
#include "doctor/parse.h"
#include "util/unique_fd.h"

namespace mcpcell::doctor {
namespace {

using S = Probe::Status;

Probe KernelVersionProbe() {
  struct utsname u {};
  if (::uname(&u) != 0) return {"kernel", S::kWarn, "unknown", "uname: " + ErrnoText(errno), ""};
  std::string value = std::string(u.release) + " " + u.machine;
  auto v = ParseKernelRelease(u.release);
  if (!v) return {"kernel", S::kWarn, value, "could not parse the release", ""};
  // 5.12 brings mount_setattr; 5.13 Landlock. Older kernels still run cells, with less.
  if (!v->AtLeast(5, 13)) {
    return {"kernel", S::kWarn, value,
            "older than 5.13: Landlock, mount_setattr or pidfd features may be missing (see below)",
            "a 5.13 or newer kernel gives every layer mcpcell uses"};
  }
  return {"kernel", S::kOk, value, "", ""};
}

Probe NamespacesProbe() {
  // Present in /proc/self/ns means the kernel was built with that namespace type
  // (namespaces(7)); whether the caller may create them is the user namespace check.
  const char* required[] = {"mnt", "pid", "net", "ipc", "uts"};
  const char* optional[] = {"cgroup", "time"};
  std::string present, missing_required, missing_optional;
  auto has = [](const char* ns) { return ::access((std::string("/proc/self/ns/") + ns).c_str(), F_OK) == 0; };
  for (const char* ns : required) (has(ns) ? present : missing_required) += std::string(ns) + " ";
  for (const char* ns : optional) (has(ns) ? present : missing_optional) += std::string(ns) + " ";
  auto trim = [](std::string s) { if (!s.empty()) s.pop_back(); return s; };
  Probe p{"namespaces", S::kOk, trim(present), "", ""};
  if (!missing_required.empty()) {
    p.status = S::kMissing;
    p.detail = "kernel lacks " + trim(missing_required) + " namespaces, which native cells need";
    p.fix = "use a kernel built with CONFIG_NAMESPACES and all of UTS/IPC/PID/NET namespaces, "
            "or the docker backend";
  } else if (!missing_optional.empty()) {
    p.status = S::kWarn;
    p.detail = "no " + trim(missing_optional) + " namespace: cells see the host's view of it";
  }
  return p;
}

Probe SeccompProbe() {
  auto status = ReadHostFile("/proc/self/status");
  auto mode = status ? StatusField(*status, "Seccomp") : std::nullopt;
  if (!mode) {
    return {"seccomp", S::kMissing, "no Seccomp field in /proc/self/status",
            "the kernel was built without CONFIG_SECCOMP", "use a kernel with CONFIG_SECCOMP_FILTER"};
  }
  auto actions = ReadHostFile("/proc/sys/kernel/seccomp/actions_avail");
  std::vector<std::string> words = actions ? SplitWords(*actions) : std::vector<std::string>{};
  auto has = [&words](const std::string& a) {
    for (const auto& w : words) if (w == a) return true;
    return false;
  };
  std::string value = "actions:";
  for (const auto& w : words) value += " " + w;
  if (!actions) value = "actions_avail unreadable";
  Probe p{"seccomp", S::kOk, value, "", ""};
  if (*mode == "2") p.detail = "mcpcell itself runs under a seccomp filter; cell filters stack on it";
  if (!has("errno") || !has("kill_process")) {
    p.status = S::kWarn;
    p.detail = "the kernel does not offer the errno and kill_process filter actions";
    p.fix = "a 4.14 or newer kernel with CONFIG_SECCOMP_FILTER";
  }
  return p;
}

Probe LandlockProbe() {
  // landlock_create_ruleset(2): with LANDLOCK_CREATE_RULESET_VERSION it returns the
  // highest supported ABI. EOPNOTSUPP means built in but not enabled by lsm=.
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi >= 1) return {"landlock", S::kOk, "ABI " + std::to_string(abi), "", ""};
  int err = errno;
  Probe p{"landlock", S::kMissing, ErrnoText(err),
          "Landlock is defence in depth behind the mount namespace; cells run without it", ""};
  if (err == EOPNOTSUPP) {
    p.fix = "add landlock to the lsm= kernel command line (e.g. lsm=landlock,lockdown,yama,apparmor,bpf)";
  } else {
    p.fix = "a 5.13 or newer kernel with CONFIG_SECURITY_LANDLOCK=y";
  }
  return p;
}

Probe NoNewPrivsProbe() {
  // PR_GET_NO_NEW_PRIVS exists since 3.5; EINVAL means the kernel predates it.
  int nnp = ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (nnp < 0) {
    return {"no_new_privs", S::kMissing, ErrnoText(errno), "setuid binaries in a cell could gain privileges",
            "a 3.5 or newer kernel"};
  }
  return {"no_new_privs", S::kOk, nnp == 1 ? "supported (already set on mcpcell)" : "supported", "", ""};
}

// A syscall is there unless it says ENOSYS; container runtimes' seccomp profiles
// also answer ENOSYS for syscalls they block (clone3 in Docker's default profile),
// which is exactly what we want to report.
Probe SyscallProbe(const char* name, long rc, int err, const char* since) {
  if (rc >= 0 || err != ENOSYS) return {name, S::kOk, "present", "", ""};
  return {name, S::kMissing, ErrnoText(err),
          std::string("not available: kernel older than ") + since + " or blocked by a seccomp filter",
          std::string("a ") + since + " or newer kernel, outside a container that filters it"};
}

Probe PidfdProbe() {
  long fd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  int err = errno;
  if (fd >= 0) UniqueFd close_it(static_cast<int>(fd));
  return SyscallProbe("pidfd_open", fd, err, "5.3");
}

Probe Clone3Probe() {
  // A NULL args pointer with size 0 is rejected (EINVAL) before anything is created.
  long rc = ::syscall(SYS_clone3, nullptr, 0);
  return SyscallProbe("clone3", rc, errno, "5.3");
}

Probe FsopenProbe() {
  // Without CAP_SYS_ADMIN: EPERM; with it: EFAULT for the NULL name. Either way it exists.
  long rc = ::syscall(SYS_fsopen, nullptr, 0);
  int err = errno;
  if (rc >= 0) UniqueFd close_it(static_cast<int>(rc));
  return SyscallProbe("fsopen (mount API)", rc, err, "5.2");
}

Probe MountSetattrProbe() {
  // size 0 is below MOUNT_ATTR_SIZE_VER0: EINVAL without touching any mount.
  long rc = ::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0);
  return SyscallProbe("mount_setattr", rc, errno, "5.12");
}

}  // namespace

std::vector<Probe> ProbeKernel() {
  return {KernelVersionProbe(), NamespacesProbe(), SeccompProbe(),  LandlockProbe(),
          NoNewPrivsProbe(),    PidfdProbe(),      Clone3Probe(),   FsopenProbe(),
          MountSetattrProbe()};
}

}  // namespace mcpcell::doctor
