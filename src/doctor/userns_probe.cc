// User namespaces, tried for real: a forked child builds what a native cell
// needs (user namespace, id maps, the other namespaces, a mount) and reports
// the first step that failed. Sysctls explain why it might.

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "doctor/checks.h"
#include "doctor/host.h"
#include "doctor/parse.h"
#include "util/unique_fd.h"

namespace mcpcell::doctor {
namespace {

using S = Probe::Status;

constexpr uid_t kNobody = 65534;

// The steps a trial child takes, in order; the child reports the first that failed.
enum Step : int { kDone = 0, kDropIds, kUnshareUser, kSetgroups, kUidMap, kGidMap, kUnshareOthers, kMount };

const char* StepName(int step) {
  switch (step) {
    case kDropIds: return "setresuid/setresgid to 65534";
    case kUnshareUser: return "unshare(CLONE_NEWUSER)";
    case kSetgroups: return "write /proc/self/setgroups";
    case kUidMap: return "write /proc/self/uid_map";
    case kGidMap: return "write /proc/self/gid_map";
    case kUnshareOthers: return "unshare(mount, pid, net, ipc, uts) inside it";
    case kMount: return "mount tmpfs inside it";
    default: return "trial child";
  }
}

struct Trial {
  int step = kDone;  ///< first failed step, kDone on success
  int err = 0;
};

// Async-signal-safe only (we forked): raw syscalls, no allocation.
bool WriteProcFile(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t len = static_cast<ssize_t>(std::strlen(text));
  bool ok = ::write(fd, text, static_cast<size_t>(len)) == len;
  int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

[[noreturn]] void ChildReport(int fd, int step) {
  Trial t{step, step == kDone ? 0 : errno};
  (void)!::write(fd, &t, sizeof t);
  ::_exit(0);
}

[[noreturn]] void RunTrialChild(int fd, bool drop_to_nobody, const char* uid_map, const char* gid_map) {
  if (drop_to_nobody) {
    // Groups first: once uid is 65534 we may no longer change them.
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      ChildReport(fd, kDropIds);
    }
    // Changing credentials cleared the dumpable flag (prctl(2)), which makes our
    // /proc/self files root-owned and the id-map writes below fail with EACCES. A
    // process started as an ordinary user is dumpable; be like it.
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) ChildReport(fd, kDropIds);
  }
  if (::unshare(CLONE_NEWUSER) != 0) ChildReport(fd, kUnshareUser);
  // user_namespaces(7): an unprivileged writer must deny setgroups before writing gid_map.
  if (!WriteProcFile("/proc/self/setgroups", "deny")) ChildReport(fd, kSetgroups);
  if (!WriteProcFile("/proc/self/uid_map", uid_map)) ChildReport(fd, kUidMap);
  if (!WriteProcFile("/proc/self/gid_map", gid_map)) ChildReport(fd, kGidMap);
  // AppArmor's unprivileged_userns restriction lets the unshare succeed but strips
  // the capabilities in it, so only these later steps reveal it.
  if (::unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
    ChildReport(fd, kUnshareOthers);
  }
  // Private first so nothing propagates back to the host's mount namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/", "tmpfs", 0, "size=64k") != 0) {
    ChildReport(fd, kMount);
  }
  ChildReport(fd, kDone);
}

Trial TryUserNamespace(bool drop_to_nobody) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, errno};
  UniqueFd rd(fds[0]), wr(fds[1]);
  uid_t uid = drop_to_nobody ? kNobody : ::geteuid();
  gid_t gid = drop_to_nobody ? kNobody : ::getegid();
  // Formatted before fork: the child may not allocate.
  std::string uid_map = "0 " + std::to_string(uid) + " 1";
  std::string gid_map = "0 " + std::to_string(gid) + " 1";
  pid_t pid = ::fork();
  if (pid < 0) return {-1, errno};
  if (pid == 0) RunTrialChild(wr.get(), drop_to_nobody, uid_map.c_str(), gid_map.c_str());
  wr.reset();
  Trial t{-1, 0};
  ssize_t n;
  do n = ::read(rd.get(), &t, sizeof t); while (n < 0 && errno == EINTR);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof t)) return {-1, 0};  // child died before reporting
  return t;
}

std::string TrialText(const Trial& t) {
  if (t.step == kDone) return "works (user, mount, pid, net, ipc, uts namespaces and a mount)";
  if (t.step < 0) return t.err != 0 ? "could not start the trial child: " + ErrnoText(t.err) : "trial child died";
  return std::string(StepName(t.step)) + ": " + ErrnoText(t.err);
}

std::optional<long> Sysctl(const char* path) {
  auto text = ReadHostFile(path);
  return text ? ParseSysctlInt(*text) : std::nullopt;
}

std::string AppArmorFix() {
  return "allow user namespaces for mcpcell with an AppArmor profile: put\n"
         "         abi <abi/4.0>, include <tunables/global>\n"
         "         profile mcpcell " + SelfExePath() + " flags=(unconfined) { userns, }\n"
         "       in /etc/apparmor.d/mcpcell and run apparmor_parser -r /etc/apparmor.d/mcpcell\n"
         "       (or, machine-wide: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)";
}

// The most likely reason a trial failed, from the sysctls and the step.
std::string TrialFix(const Trial& t) {
  auto max_ns = Sysctl("/proc/sys/user/max_user_namespaces");
  auto debian = Sysctl("/proc/sys/kernel/unprivileged_userns_clone");
  auto apparmor = Sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  if (t.step == kUnshareUser && max_ns && *max_ns == 0) {
    return "sysctl -w user.max_user_namespaces=15000 (it is 0)";
  }
  if (t.step == kUnshareUser && t.err == ENOSPC) {
    // The limit applies in every ancestor user namespace too: a container or
    // `bwrap --disable-userns` can set it to 0 above us where we cannot see it.
    return "the user namespace limit is reached here or in an enclosing namespace (a container, "
           "bwrap --disable-userns): raise user.max_user_namespaces there, or run mcpcell outside it";
  }
  if (t.step == kUnshareUser && debian && *debian == 0) {
    return "sysctl -w kernel.unprivileged_userns_clone=1 (Debian's switch is off)";
  }
  if (t.step > kUnshareUser && apparmor && *apparmor == 1) return AppArmorFix();
  if (t.step == kUnshareUser && t.err == EPERM) {
    return "inside a container, the runtime's seccomp profile blocks unshare: run mcpcell on the "
           "host, or use the docker/podman backend";
  }
  return "use the docker or podman backend, or run on a kernel that allows unprivileged user namespaces";
}

Probe TrialProbe(const std::string& name, const Trial& t) {
  if (t.step == kDropIds) {
    // Not a verdict on user namespaces: uid 65534 is not available to switch to
    // (e.g. mcpcell already runs in a user namespace that maps only root).
    return {name, S::kWarn, "could not test: " + TrialText(t), "uid 65534 is not usable here", ""};
  }
  Probe p{name, t.step == kDone ? S::kOk : S::kMissing, TrialText(t), "", ""};
  if (t.step != kDone) {
    p.detail = "native cells start in a new user namespace";
    p.fix = TrialFix(t);
  }
  return p;
}

void AddSysctlProbes(std::vector<Probe>* out) {
  auto max_ns = Sysctl("/proc/sys/user/max_user_namespaces");
  if (max_ns) {
    Probe p{"user.max_user_namespaces", *max_ns > 0 ? S::kOk : S::kMissing, std::to_string(*max_ns), "", ""};
    if (*max_ns == 0) p.fix = "sysctl -w user.max_user_namespaces=15000";
    out->push_back(p);
  }
  // Debian/older Ubuntu only; absent on mainline kernels.
  if (auto v = Sysctl("/proc/sys/kernel/unprivileged_userns_clone")) {
    Probe p{"kernel.unprivileged_userns_clone", *v == 1 ? S::kOk : S::kWarn, std::to_string(*v), "", ""};
    if (*v != 1) {
      p.detail = "users other than root cannot create user namespaces";
      p.fix = "sysctl -w kernel.unprivileged_userns_clone=1";
    }
    out->push_back(p);
  }
  // Ubuntu 23.10+: unprivileged user namespaces get no capabilities unless an
  // AppArmor profile grants `userns`.
  if (auto v = Sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")) {
    Probe p{"kernel.apparmor_restrict_unprivileged_userns", *v == 0 ? S::kOk : S::kWarn,
            std::to_string(*v), "", ""};
    if (*v != 0) {
      p.detail = "AppArmor gives unprivileged user namespaces no capabilities";
      p.fix = AppArmorFix();
    }
    out->push_back(p);
  }
}

}  // namespace

std::vector<Probe> ProbeUserNamespaces(UsernsFacts* facts) {
  std::vector<Probe> out;
  uid_t euid = ::geteuid();
  Trial caller = TryUserNamespace(/*drop_to_nobody=*/false);
  out.push_back(TrialProbe("user namespaces", caller));
  out.back().value += " (as uid " + std::to_string(euid) + ")";
  facts->caller_ok = caller.step == kDone;
  facts->why = caller.step == kDone ? "user namespaces work for uid " + std::to_string(euid)
                                    : "user namespaces: " + TrialText(caller);
  if (euid == 0) {
    // Root can usually do this anyway; what an ordinary user gets is what matters for
    // anyone running mcpcell from their own account.
    Probe p = TrialProbe("user namespaces (non-root)", TryUserNamespace(/*drop_to_nobody=*/true));
    p.value += " (as uid 65534)";
    if (p.status != S::kOk) p.status = S::kWarn;  // root itself is fine; ordinary users are not
    out.push_back(p);
  } else {
    out.push_back({"user namespaces (non-root)", out.front().status, "same as above: the caller is not root",
                   "", ""});
  }
  AddSysctlProbes(&out);
  return out;
}

}  // namespace mcpcell::doctor
