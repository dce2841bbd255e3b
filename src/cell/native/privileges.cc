#include "cell/native/privileges.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <string>

namespace mcpcell {
namespace {

/// The three capability sets as capget/capset see them (version 3: two u32 words).
using CapData = std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3>;

// Raw syscalls (capget(2)/capset(2)) so the cell needs no libcap.
Result<CapData> CapGet() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapData data{};
  if (syscall(SYS_capget, &header, data.data()) != 0) return ErrnoError("capget");
  return data;
}

Status CapSet(const CapData& data, const char* what) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  if (syscall(SYS_capset, &header, data.data()) != 0) return ErrnoError(what);
  return {};
}

/// Makes every permitted capability effective (needed for CAP_SETPCAP below;
/// the kernel clears the effective set when the euid leaves 0).
Status RaiseEffective() {
  auto caps = CapGet();
  if (!caps.ok()) return caps.error();
  for (auto& word : *caps) word.effective = word.permitted;
  return CapSet(*caps, "capset (raise effective to permitted)");
}

/// The highest capability number this kernel knows. /proc may not be mounted
/// yet inside the cell, so fall back to probing: PR_CAPBSET_READ fails with
/// EINVAL past the last capability (prctl(2)).
int LastCap() {
  // Plain read(2), no allocation: this may run in a vfork child.
  int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[16] = {};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    int last = n > 0 ? std::atoi(buf) : -1;
    if (last > 0 && last < 64) return last;
  }
  int cap = 0;
  while (cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0) ++cap;
  return cap - 1;
}

Status DropBoundingSet(int last) {
  for (int cap = 0; cap <= last; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 0) continue;  // already gone
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      Error e = ErrnoError("drop capability from the bounding set", "cap " + std::to_string(cap));
      e.detail = "needs CAP_SETPCAP: drop capabilities while still root in the cell's user namespace";
      return e;
    }
  }
  return {};
}

Status ClearAmbient() {
  // EINVAL: a kernel before 4.3 has no ambient set, so there is nothing to clear.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return ErrnoError("clear ambient capabilities");
  }
  return {};
}

Status VerifyNoCapabilities(int last) {
  auto caps = CapGet();
  if (!caps.ok()) return caps.error();
  for (const auto& word : *caps) {
    if (word.effective != 0 || word.permitted != 0 || word.inheritable != 0) {
      return MakeError("verify capabilities", {}, "capability sets are not empty after capset");
    }
  }
  for (int cap = 0; cap <= last; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0) {
      return MakeError("verify bounding set", "cap " + std::to_string(cap), "still in the bounding set");
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1) {
      return MakeError("verify ambient set", "cap " + std::to_string(cap), "still ambient");
    }
  }
  return {};
}

Status VerifyIds(std::uint32_t uid, std::uint32_t gid) {
  uid_t ru = 0, eu = 0, su = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (getresuid(&ru, &eu, &su) != 0) return ErrnoError("getresuid");
  if (getresgid(&rg, &eg, &sg) != 0) return ErrnoError("getresgid");
  if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid) {
    return MakeError("verify user switch", {},
                     "uids " + std::to_string(ru) + "/" + std::to_string(eu) + "/" +
                         std::to_string(su) + ", gids " + std::to_string(rg) + "/" +
                         std::to_string(eg) + "/" + std::to_string(sg) + " after switching to " +
                         std::to_string(uid) + ":" + std::to_string(gid));
  }
  return {};
}

Status SetIds(std::uint32_t uid, std::uint32_t gid, bool can_setgroups) {
  if (can_setgroups) {
    const gid_t groups[] = {gid};
    if (setgroups(1, groups) != 0) {
      Error e = ErrnoError("setgroups", std::to_string(gid));
      e.detail = "in a user namespace where setgroups is \"deny\", pass can_setgroups=false";
      return e;
    }
  }
  // Group before user: after setresuid to a non-root uid we could no longer change it.
  if (setresgid(gid, gid, gid) != 0) {
    Error e = ErrnoError("setresgid", std::to_string(gid));
    e.detail = "EINVAL means the gid is not mapped in this user namespace (gid_map)";
    return e;
  }
  if (setresuid(uid, uid, uid) != 0) {
    Error e = ErrnoError("setresuid", std::to_string(uid));
    e.detail = "EINVAL means the uid is not mapped in this user namespace (uid_map)";
    return e;
  }
  return {};
}

}  // namespace

Status SwitchUser(std::uint32_t uid, std::uint32_t gid, bool can_setgroups) {
  auto before = CapGet();
  if (!before.ok()) return before.error();
  // Leaving uid 0 would otherwise empty the permitted set (capabilities(7),
  // "Effect of user ID changes on capabilities"). Fails only if
  // SECBIT_KEEP_CAPS_LOCKED is set; then the kernel's rules apply as they are.
  const int keep_before = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
  const bool keep_set = prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == 0;
  Status ids = SetIds(uid, gid, can_setgroups);
  if (keep_set) prctl(PR_SET_KEEPCAPS, keep_before > 0 ? 1 : 0, 0, 0, 0);
  MCPCELL_TRY(ids);
  MCPCELL_TRY(VerifyIds(uid, gid));
  // The kernel clears the effective set when the euid leaves 0; restore what
  // was effective and is still permitted.
  auto after = CapGet();
  if (!after.ok()) return after.error();
  for (std::size_t i = 0; i < after->size(); ++i) {
    (*after)[i].effective = (*before)[i].effective & (*after)[i].permitted;
  }
  return CapSet(*after, "capset (restore effective after user switch)");
}

Status DropAllCapabilities() {
  const int last = LastCap();
  if (last < 0) return MakeError("find the last capability", "/proc/sys/kernel/cap_last_cap");
  MCPCELL_TRY(RaiseEffective());
  // Bounding set first: it needs CAP_SETPCAP, which the capset below removes.
  // With it empty, even uid 0 gains nothing at execve (capabilities(7)).
  MCPCELL_TRY(DropBoundingSet(last));
  MCPCELL_TRY(ClearAmbient());
  MCPCELL_TRY(CapSet(CapData{}, "capset (clear effective, permitted, inheritable)"));
  return VerifyNoCapabilities(last);
}

Status SetNoNewPrivs() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return ErrnoError("prctl(PR_SET_NO_NEW_PRIVS)");
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
    return MakeError("verify no_new_privs", {}, "PR_GET_NO_NEW_PRIVS does not report 1");
  }
  return {};
}

}  // namespace mcpcell
