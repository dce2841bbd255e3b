#include "cell/native/seccomp.h"

#include "util/unique_fd.h"

#include <linux/seccomp.h>

#include <unistd.h>

#include <sys/syscall.h>

#include <sys/mman.h>

#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace mcpcell {
namespace {

using Op = SyscallArgCheck::Op;

constexpr std::uint64_t kLow32 = 0xffffffffULL;

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080  // linux/sched.h, Linux 5.6
#endif

SyscallRule Deny(std::string name, int err, std::string why) {
  return SyscallRule{std::move(name), err, {}, std::move(why)};
}

SyscallRule DenyIf(std::string name, int err, std::vector<SyscallArgCheck> checks,
                   std::string why) {
  return SyscallRule{std::move(name), err, std::move(checks), std::move(why)};
}

/// Exact match on a 32-bit (int / unsigned int) argument: the kernel ignores the
/// register's high half, so the filter must too.
SyscallArgCheck Low32Is(unsigned arg, std::uint64_t value) {
  return {arg, Op::kMaskedEq, kLow32, value & kLow32};
}

/// (arg & bits) == bits.
SyscallArgCheck BitsSet(unsigned arg, std::uint64_t bits) {
  return {arg, Op::kMaskedEq, bits, bits};
}

void Append(std::vector<SyscallRule>& to, std::vector<SyscallRule> from) {
  for (auto& r : from) to.push_back(std::move(r));
}

// Changing what the process sees as its filesystem is the cell's job, done
// before this filter; afterwards any of these is an escape attempt.
std::vector<SyscallRule> MountRules() {
  const char* why = "the cell's mounts are fixed before exec; a server must not remount its view";
  std::vector<SyscallRule> rules;
  for (const char* name : {"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
                           "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
                           // Linux 6.15; libseccomp 2.5 cannot name it yet, so it is skipped
                           // until libseccomp learns it (SeccompUnknownSyscalls lists it).
                           "open_tree_attr"}) {
    rules.push_back(Deny(name, EPERM, why));
  }
  return rules;
}

// New namespaces are where most recent kernel privilege escalations start
// (user namespaces expose root-only code paths to unprivileged users).
std::vector<SyscallRule> NamespaceRules() {
  std::vector<SyscallRule> rules{
      Deny("unshare", EPERM, "no new namespaces inside the cell (user ns opens root-only kernel code)"),
      Deny("setns", EPERM, "no joining other namespaces through inherited or found nsfs fds"),
      // clone3 takes its flags in a struct behind a pointer, which seccomp (classic
      // BPF) cannot read. ENOSYS makes glibc (>= 2.34) fall back to clone(), whose
      // flags are a register we filter below.
      Deny("clone3", ENOSYS, "flags are behind a pointer seccomp cannot read; libc falls back to clone"),
  };
  // One rule per flag: rules are OR-ed, so any one namespace flag matches.
  // clone(2) only reads the low 32 bits of flags; CLONE_NEWTIME (0x80) lies in
  // the exit-signal byte there, so clone rejects it anyway — kept to mirror unshare.
  const std::pair<std::uint64_t, const char*> flags[] = {
      {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWNS, "CLONE_NEWNS"},
      {CLONE_NEWPID, "CLONE_NEWPID"},   {CLONE_NEWNET, "CLONE_NEWNET"},
      {CLONE_NEWIPC, "CLONE_NEWIPC"},   {CLONE_NEWUTS, "CLONE_NEWUTS"},
      {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}, {CLONE_NEWTIME, "CLONE_NEWTIME"},
  };
  for (const auto& [flag, name] : flags) {
    rules.push_back(DenyIf("clone", EPERM, {BitsSet(0, flag)},
                           fmt::format("clone with {}: no new namespaces inside the cell", name)));
  }
  return rules;
}

// Reading or steering other processes, or the kernel itself.
std::vector<SyscallRule> KernelRules() {
  const std::pair<const char*, const char*> denied[] = {
      {"ptrace", "no tracing: it reads and writes other processes' memory and registers"},
      {"process_vm_readv", "reads another process's memory"},
      {"process_vm_writev", "writes another process's memory"},
      {"pidfd_getfd", "steals file descriptors from another process"},
      {"kcmp", "compares kernel pointers across processes (KASLR and fd probing)"},
      {"kexec_load", "replaces the running kernel"},
      {"kexec_file_load", "replaces the running kernel"},
      {"init_module", "loads kernel code"},
      {"finit_module", "loads kernel code"},
      {"delete_module", "unloads kernel code"},
      {"bpf", "eBPF verifier and maps are a large kernel attack surface"},
      {"perf_event_open", "kernel attack surface and side channels (CVE-2013-2094, CVE-2023-6931)"},
      {"keyctl", "the kernel keyring is not namespaced; it holds other users' secrets"},
      {"add_key", "the kernel keyring is not namespaced"},
      {"request_key", "the kernel keyring is not namespaced"},
      {"userfaultfd", "pauses kernel page faults at will, a classic race-widening exploit tool"},
      {"open_by_handle_at", "opens files by handle, bypassing the mount view (the 'shocker' escape)"},
      {"name_to_handle_at", "produces handles for open_by_handle_at"},
      {"reboot", "reboots the host or loads kexec kernels"},
      {"swapon", "host memory configuration"},
      {"swapoff", "host memory configuration"},
      {"acct", "host process accounting"},
      {"settimeofday", "the clock is host-wide"},
      {"clock_settime", "the clock is host-wide"},
      {"clock_adjtime", "the clock is host-wide"},
      {"adjtimex", "the clock is host-wide"},
      {"syslog", "the kernel log leaks addresses and other tenants' messages"},
      {"quotactl", "host disk quota configuration"},
      {"quotactl_fd", "host disk quota configuration"},
      {"iopl", "raw I/O port access"},
      {"ioperm", "raw I/O port access"},
      {"uselib", "obsolete a.out loader with a history of bugs"},
      {"vhangup", "hangs up the controlling terminal of others"},
      {"lookup_dcookie", "kernel profiling interface, leaks paths"},
      {"fanotify_init", "watches filesystems beyond the cell's view"},
      {"sethostname", "the host name belongs to the host (or the cell's setup)"},
      {"setdomainname", "the domain name belongs to the host (or the cell's setup)"},
  };
  std::vector<SyscallRule> rules;
  for (const auto& [name, why] : denied) rules.push_back(Deny(name, EPERM, why));
  // ENOSYS, not EPERM: runtimes (libuv in Node) probe io_uring and treat
  // "not implemented" as the cue to fall back to their thread pool.
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"}) {
    rules.push_back(Deny(name, ENOSYS, "io_uring has been a steady source of kernel exploits"));
  }
  return rules;
}

// Only the families an MCP server needs: unix, IPv4, IPv6 and netlink (route,
// for getifaddrs/libuv). Everything else is EAFNOSUPPORT, the kernel's own
// answer for a family it does not have.
std::vector<SyscallRule> SocketRules() {
  std::vector<SyscallRule> rules;
  const std::string why_family = "socket family outside unix/inet/inet6/netlink";
  for (std::uint64_t family = 0; family < AF_NETLINK; ++family) {
    if (family == AF_UNIX || family == AF_INET || family == AF_INET6) continue;
    rules.push_back(DenyIf("socket", EAFNOSUPPORT, {Low32Is(0, family)},
                           fmt::format("{} ({})", why_family, family)));
  }
  // Every family above AF_NETLINK, including ones newer kernels add. A 64-bit
  // >= also catches any value with high bits set, which is fine to refuse.
  rules.push_back(DenyIf("socket", EAFNOSUPPORT, {{0, Op::kGe, 0, AF_NETLINK + 1}},
                         why_family + " (>= 17: packet, vsock, alg, bluetooth, xdp, ...)"));
  // Raw and packet sockets forge traffic and sniff; EPERM as without CAP_NET_RAW.
  // The type argument carries SOCK_NONBLOCK/SOCK_CLOEXEC above the low 4 bits.
  constexpr std::uint64_t kSockTypeMask = 0xf;
  for (std::uint64_t family : {AF_INET, AF_INET6}) {
    for (std::uint64_t type : {SOCK_RAW, SOCK_PACKET}) {
      rules.push_back(DenyIf("socket", EPERM,
                             {Low32Is(0, family), {1, Op::kMaskedEq, kSockTypeMask, type}},
                             "raw/packet IP sockets forge and sniff traffic"));
    }
  }
  // Netlink beyond NETLINK_ROUTE reaches audit, netfilter, uevents, xfrm...
  // EPROTONOSUPPORT is what the kernel says for a netlink protocol it lacks.
  rules.push_back(DenyIf("socket", EPROTONOSUPPORT,
                         {Low32Is(0, AF_NETLINK), {2, Op::kNe, 0, NETLINK_ROUTE}},
                         "netlink other than NETLINK_ROUTE (audit, netfilter, xfrm, uevent...)"));
  return rules;
}

// Pushing bytes into a terminal's input queue runs commands in the shell that
// owns it (CVE-2017-5226 in bubblewrap). ioctl's cmd is an unsigned int: match
// the low 32 bits only (flatpak CVE-2019-10063 bypassed a full 64-bit match).
std::vector<SyscallRule> TerminalRules() {
  return {
      DenyIf("ioctl", EPERM, {Low32Is(1, TIOCSTI)}, "TIOCSTI injects input into a terminal"),
      DenyIf("ioctl", EPERM, {Low32Is(1, TIOCLINUX)}, "TIOCLINUX can inject input via selection"),
  };
}

// personality(2): allow what Docker's default profile allows — PER_LINUX (0),
// PER_LINUX32 (8), UNAME26 (0x20000), both (0x20008) and the query 0xffffffff —
// and deny the rest (READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ADDR_NO_RANDOMIZE...).
// libseccomp allows one comparison per argument in a rule, so "not one of five
// values" is written as a union of masked matches on the low 32 bits:
//  * Call bits 3 and 17 "free to vary" and the other 30 "strict". A value whose
//    strict bits are neither all 0 nor all 1 has, going round the strict bits in
//    a circle, some bit that is 1 followed by one that is 0: 30 rules
//    (bit k set, next strict bit clear).
//  * Strict bits all 0 gives exactly 0, 8, 0x20000, 0x20008: allowed.
//  * Strict bits all 1 gives 0xffffffff (allowed) and three values denied
//    exactly (bit 3 and/or bit 17 clear).
std::vector<SyscallRule> PersonalityRules() {
  constexpr std::uint64_t kFree = std::uint64_t{PER_LINUX32} | std::uint64_t{UNAME26};
  std::vector<unsigned> strict;
  for (unsigned bit = 0; bit < 32; ++bit) {
    if ((kFree & (1ULL << bit)) == 0) strict.push_back(bit);
  }
  const std::string why = "personality other than 0, 8, 0x20000, 0x20008 or the query 0xffffffff";
  std::vector<SyscallRule> rules;
  for (std::size_t i = 0; i < strict.size(); ++i) {
    const std::uint64_t one = 1ULL << strict[i];
    const std::uint64_t zero = 1ULL << strict[(i + 1) % strict.size()];
    rules.push_back(
        DenyIf("personality", EPERM, {{0, Op::kMaskedEq, one | zero, one}}, why));
  }
  for (std::uint64_t v : {kLow32 & ~kFree, kLow32 & ~std::uint64_t{PER_LINUX32},
                          kLow32 & ~std::uint64_t{UNAME26}}) {
    rules.push_back(DenyIf("personality", EPERM, {Low32Is(0, v)}, why));
  }
  return rules;
}

scmp_compare ToScmp(Op op) {
  switch (op) {
    case Op::kEq: return SCMP_CMP_EQ;
    case Op::kMaskedEq: return SCMP_CMP_MASKED_EQ;
    case Op::kNe: return SCMP_CMP_NE;
    case Op::kGe: return SCMP_CMP_GE;
  }
  return SCMP_CMP_EQ;
}

scmp_arg_cmp ToScmp(const SyscallArgCheck& c) {
  // For MASKED_EQ libseccomp takes the mask as datum_a and the value as datum_b.
  if (c.op == Op::kMaskedEq) return scmp_arg_cmp{c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.value};
  return scmp_arg_cmp{c.arg, ToScmp(c.op), c.value, 0};
}

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using FilterPtr = std::unique_ptr<void, FilterDeleter>;

/// libseccomp returns -errno; turn it into our Error.
Error SeccompError(std::string what, std::string name, int rc, std::string detail = {}) {
  return Error{std::move(what), std::move(name), -rc, std::move(detail)};
}

Status SetAttr(scmp_filter_ctx ctx, scmp_filter_attr attr, std::uint32_t value, const char* name) {
  int rc = seccomp_attr_set(ctx, attr, value);
  if (rc != 0) return SeccompError("seccomp_attr_set", name, rc);
  return {};
}

Status AddRule(scmp_filter_ctx ctx, int nr, const SyscallRule& rule) {
  std::vector<scmp_arg_cmp> cmps;
  cmps.reserve(rule.checks.size());
  for (const auto& c : rule.checks) cmps.push_back(ToScmp(c));
  int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(static_cast<std::uint32_t>(rule.errno_value)),
                                  nr, static_cast<unsigned>(cmps.size()), cmps.data());
  if (rc != 0) return SeccompError("seccomp_rule_add", FormatRule(rule), rc);
  return {};
}

Result<FilterPtr> BuildFilter(const std::vector<SyscallRule>& rules) {
  FilterPtr ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return MakeError("seccomp_init", {}, "libseccomp could not allocate a filter");
  // A syscall entered through another ABI (int 0x80 as i386, or the x32 bit on
  // x86_64) has different numbers and would miss every rule: kill the process.
  MCPCELL_TRY(SetAttr(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS, "ACT_BADARCH"));
  // Apply to every thread, not just the caller (seccomp(2) SECCOMP_FILTER_FLAG_TSYNC).
  MCPCELL_TRY(SetAttr(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1, "CTL_TSYNC"));
  // Do not set no_new_privs behind the caller's back: the cell's recipe does it
  // explicitly (SetNoNewPrivs) so the order of steps is visible in one place.
  MCPCELL_TRY(SetAttr(ctx.get(), SCMP_FLTATR_CTL_NNP, 0, "CTL_NNP"));
  // Report the kernel's real errno from seccomp_load, not libseccomp's -ECANCELED.
  (void)seccomp_attr_set(ctx.get(), SCMP_FLTATR_API_SYSRAWRC, 1);
  for (const auto& rule : rules) {
    int nr = SyscallNumber(rule.syscall);
    if (nr < 0) continue;  // unknown to this libseccomp: listed by SeccompUnknownSyscalls
    MCPCELL_TRY(AddRule(ctx.get(), nr, rule));
  }
  return ctx;
}

const char* OpText(Op op) {
  switch (op) {
    case Op::kEq: return "==";
    case Op::kMaskedEq: return "==";
    case Op::kNe: return "!=";
    case Op::kGe: return ">=";
  }
  return "?";
}

}  // namespace

std::vector<SyscallRule> PreallocationRules() {
  // EOPNOTSUPP, as a filesystem without it answers: glibc's posix_fallocate
  // falls back to writing the blocks, which the disk budget sees.
  std::vector<SyscallRule> rules{Deny("fallocate", EOPNOTSUPP,
                                      "an allocation takes the disk at once; an install script's writes are "
                                      "bounded by a look at them")};
  // The same allocation through ioctl (adv18): fs/ioctl.c hands the
  // RESVSP family to vfs_fallocate on any filesystem (seen on ext4: 100 MiB
  // in one call), XFS also ZERO_RANGE and, before 5.17, ALLOCSP. _IOW('X', nr,
  // struct space_resv) (48 bytes); the kernel's own header, not userspace's.
  constexpr std::uint64_t kSpaceResvIoctl = 0x40305800;
  const std::pair<std::uint64_t, const char*> allocating[] = {
      {10, "XFS_IOC_ALLOCSP"},   {36, "XFS_IOC_ALLOCSP64"},  {40, "FS_IOC_RESVSP"},
      {42, "FS_IOC_RESVSP64"},   {57, "XFS_IOC_ZERO_RANGE"},
  };
  for (const auto& [nr, name] : allocating) {
    rules.push_back(DenyIf("ioctl", EOPNOTSUPP, {Low32Is(1, kSpaceResvIoctl | nr)},
                           std::string(name) + " allocates disk at once, as fallocate does"));
  }
  return rules;
}

std::vector<SyscallRule> SeccompDenyRules() {
  std::vector<SyscallRule> rules;
  Append(rules, MountRules());
  Append(rules, NamespaceRules());
  Append(rules, KernelRules());
  Append(rules, SocketRules());
  Append(rules, TerminalRules());
  Append(rules, PersonalityRules());
  Append(rules, SetIdBitRules());
  return rules;
}

int SyscallNumber(const std::string& name) {
  int nr = seccomp_syscall_resolve_name(name.c_str());
  if (nr != __NR_SCMP_ERROR) return nr;
#if defined(__x86_64__) || defined(__aarch64__)
  // Debian 12's libseccomp 2.5.4 does not know these; skipping a rule would
  // leave the call allowed (setxattrat sets security.capability).
  const std::pair<const char*, int> newer[] = {{"fchmodat2", 452}, {"setxattrat", 463}, {"open_tree_attr", 467}};
  for (const auto& [n, number] : newer) {
    if (name == n) return number;
  }
#endif
  return -1;
}

std::vector<std::string> SeccompUnknownSyscalls(const std::vector<SyscallRule>& rules) {
  std::vector<std::string> unknown;
  for (const auto& rule : rules) {
    if (SyscallNumber(rule.syscall) >= 0) continue;
    if (std::find(unknown.begin(), unknown.end(), rule.syscall) == unknown.end()) {
      unknown.push_back(rule.syscall);
    }
  }
  return unknown;
}

std::string FormatRule(const SyscallRule& rule) {
  std::string args;
  for (const auto& c : rule.checks) {
    if (!args.empty()) args += " && ";
    if (c.op == Op::kMaskedEq) {
      args += fmt::format("a{}&{:#x}=={:#x}", c.arg, c.mask, c.value);
    } else {
      args += fmt::format("a{}{}{:#x}", c.arg, OpText(c.op), c.value);
    }
  }
  const char* err = strerrorname_np(rule.errno_value);
  return fmt::format("{}({}) -> {}  # {}", rule.syscall, args, err != nullptr ? err : "?", rule.why);
}

Status ApplySeccomp(const std::vector<SyscallRule>& rules) {
  auto filter = BuildFilter(rules);
  if (!filter.ok()) return filter.error();
  int rc = seccomp_load(filter->get());
  if (rc != 0) {
    return SeccompError("seccomp_load", {}, rc,
                        "loading a filter needs no_new_privs (SetNoNewPrivs) or CAP_SYS_ADMIN; "
                        "ESRCH means another thread has a different filter (TSYNC)");
  }
  return {};
}

Result<SeccompProgram> CompileSeccomp(const std::vector<SyscallRule>& rules) {
  auto filter = BuildFilter(rules);
  if (!filter.ok()) return filter.error();
  // libseccomp 2.5 exports BPF only to an fd; a memfd keeps it off the disk.
  UniqueFd mem(static_cast<int>(::syscall(SYS_memfd_create, "mcpcell-seccomp", MFD_CLOEXEC)));
  if (!mem) return ErrnoError("memfd_create for the seccomp program");
  int rc = seccomp_export_bpf(filter->get(), mem.get());
  if (rc != 0) return SeccompError("seccomp_export_bpf", {}, rc, "");
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    return MakeError("export seccomp program", "", "unexpected size " + std::to_string(size));
  }
  SeccompProgram program(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.get(), program.data(), static_cast<std::size_t>(size), 0) != size) {
    return ErrnoError("read the seccomp program back");
  }
  return program;
}

Status LoadSeccompProgram(const SeccompProgram& program) {
  sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    Error e = ErrnoError("load the seccomp filter");
    e.detail = "needs no_new_privs (SetNoNewPrivs) or CAP_SYS_ADMIN";
    return e;
  }
  return {};
}

}  // namespace mcpcell
