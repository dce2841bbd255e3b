// The seccomp deny list as data (names, errnos, argument logic checked by a
// small evaluator with libseccomp's semantics), then the real filter loaded in
// forked children. Needs no privileges: the child sets no_new_privs itself.

#include "cell/native/seccomp.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <set>

#include "forked_child.h"

namespace mcpcell {
namespace {

using testing::ExpectErrno;
using testing::ExpectOk;
using testing::RunInChild;

using Args = std::array<std::uint64_t, 6>;

// Names neither this libseccomp (2.5.x) nor SyscallNumber's table resolves;
// ApplySeccomp skips them.
const std::set<std::string> kMayBeUnknown = {};

bool Holds(const SyscallArgCheck& c, const Args& a) {
  const std::uint64_t v = a[c.arg];
  switch (c.op) {
    case SyscallArgCheck::Op::kEq: return v == c.value;
    case SyscallArgCheck::Op::kMaskedEq: return (v & c.mask) == c.value;
    case SyscallArgCheck::Op::kNe: return v != c.value;
    case SyscallArgCheck::Op::kGe: return v >= c.value;
  }
  return false;
}

/// The errno the rules give `name(args)`, 0 when allowed (rules OR-ed, checks AND-ed).
int Verdict(const std::vector<SyscallRule>& rules, const std::string& name, const Args& a) {
  for (const auto& r : rules) {
    if (r.syscall != name) continue;
    if (std::all_of(r.checks.begin(), r.checks.end(), [&](const auto& c) { return Holds(c, a); })) {
      return r.errno_value;
    }
  }
  return 0;
}

const SyscallRule* Unconditional(const std::vector<SyscallRule>& rules, const std::string& name) {
  for (const auto& r : rules) {
    if (r.syscall == name && r.checks.empty()) return &r;
  }
  return nullptr;
}

TEST(SeccompRules, DeniesEveryRequiredSyscallOutright) {
  const auto rules = SeccompDenyRules();
  const char* required[] = {
      "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
      "fsmount", "fspick", "mount_setattr", "unshare", "setns", "clone3", "ptrace",
      "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "kexec_load",
      "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf", "perf_event_open",
      "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter",
      "io_uring_register", "open_by_handle_at", "name_to_handle_at", "reboot", "swapon", "swapoff",
      "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "syslog", "quotactl",
      "iopl", "ioperm", "uselib", "vhangup", "lookup_dcookie", "fanotify_init", "sethostname",
      "setdomainname"};
  for (const char* name : required) {
    EXPECT_NE(Unconditional(rules, name), nullptr) << name << " is not denied unconditionally";
  }
}

TEST(SeccompRules, ErrnoValues) {
  const auto rules = SeccompDenyRules();
  EXPECT_EQ(Unconditional(rules, "clone3")->errno_value, ENOSYS);
  EXPECT_EQ(Unconditional(rules, "io_uring_setup")->errno_value, ENOSYS);
  for (const char* name : {"mount", "unshare", "setns", "keyctl", "bpf", "ptrace", "reboot"}) {
    EXPECT_EQ(Unconditional(rules, name)->errno_value, EPERM) << name;
  }
  for (const auto& r : rules) {
    EXPECT_GT(r.errno_value, 0) << FormatRule(r);
    EXPECT_NE(strerrorname_np(r.errno_value), nullptr) << FormatRule(r);
  }
}

TEST(SeccompRules, EveryRuleIsExplainedAndWellFormed) {
  for (const auto& r : SeccompDenyRules()) {
    EXPECT_FALSE(r.why.empty()) << FormatRule(r);
    std::set<unsigned> args;
    for (const auto& c : r.checks) {
      EXPECT_LT(c.arg, 6u) << FormatRule(r);
      // libseccomp refuses two comparisons on one argument within a rule.
      EXPECT_TRUE(args.insert(c.arg).second) << FormatRule(r);
      if (c.op == SyscallArgCheck::Op::kMaskedEq) {
        EXPECT_EQ(c.value & ~c.mask, 0u) << "value outside mask can never match: " << FormatRule(r);
      }
    }
  }
}

TEST(SeccompRules, NoDuplicateRules) {
  const auto rules = SeccompDenyRules();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    for (std::size_t j = i + 1; j < rules.size(); ++j) {
      const bool same = rules[i].syscall == rules[j].syscall && rules[i].checks == rules[j].checks;
      EXPECT_FALSE(same) << FormatRule(rules[i]) << "\n" << FormatRule(rules[j]);
    }
  }
}

TEST(SeccompRules, EveryNameResolvesOnThisArchOrIsDocumentedAsSkipped) {
  ASSERT_EQ(seccomp_arch_native(), SCMP_ARCH_X86_64) << "these expectations are for x86_64";
  std::set<std::string> names;
  for (const auto& r : SeccompDenyRules()) names.insert(r.syscall);
  for (const auto& name : names) {
    if (kMayBeUnknown.count(name) != 0) continue;
    // >= 0: a real x86_64 number, not unknown (__NR_SCMP_ERROR) and not a
    // pseudo-syscall that libseccomp would silently drop on this arch.
    EXPECT_GE(SyscallNumber(name), 0) << name;
  }
  for (const auto& name : SeccompUnknownSyscalls(SeccompDenyRules())) {
    EXPECT_EQ(kMayBeUnknown.count(name), 1u) << name << " is skipped but not documented";
    std::printf("[ note ] skipped, unknown to this libseccomp: %s\n", name.c_str());
  }
}

TEST(SeccompRules, SocketFamilies) {
  const auto rules = SeccompDenyRules();
  for (std::uint64_t family = 0; family < 64; ++family) {
    const bool allowed = family == AF_UNIX || family == AF_INET || family == AF_INET6 ||
                         family == AF_NETLINK;
    EXPECT_EQ(Verdict(rules, "socket", {family, SOCK_STREAM, 0}), allowed ? 0 : EAFNOSUPPORT)
        << "family " << family;
  }
  // The kernel reads an int: high garbage must not turn AF_PACKET into "allowed".
  EXPECT_NE(Verdict(rules, "socket", {(1ULL << 32) | AF_PACKET, SOCK_RAW, 0}), 0);
  EXPECT_EQ(Verdict(rules, "socket", {AF_INET, SOCK_RAW, IPPROTO_ICMP}), EPERM);
  EXPECT_EQ(Verdict(rules, "socket", {AF_INET6, SOCK_RAW | SOCK_CLOEXEC, 0}), EPERM);
  EXPECT_EQ(Verdict(rules, "socket", {AF_INET, SOCK_PACKET, 0}), EPERM);
  EXPECT_EQ(Verdict(rules, "socket", {AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_ICMP}), 0);
  EXPECT_EQ(Verdict(rules, "socket", {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE}), 0);
  EXPECT_EQ(Verdict(rules, "socket", {AF_NETLINK, SOCK_RAW, NETLINK_AUDIT}), EPROTONOSUPPORT);
  EXPECT_EQ(Verdict(rules, "socket", {AF_UNIX, SOCK_RAW, 0}), 0);
}

TEST(SeccompRules, CloneNamespaceFlags) {
  const auto rules = SeccompDenyRules();
  const std::uint64_t thread_flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                     CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                                     CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
  EXPECT_EQ(Verdict(rules, "clone", {thread_flags}), 0);
  EXPECT_EQ(Verdict(rules, "clone", {SIGCHLD}), 0);
  for (std::uint64_t flag : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                             CLONE_NEWUTS, CLONE_NEWCGROUP}) {
    EXPECT_EQ(Verdict(rules, "clone", {flag | SIGCHLD}), EPERM) << std::hex << flag;
    EXPECT_EQ(Verdict(rules, "clone", {flag | thread_flags}), EPERM) << std::hex << flag;
  }
}

TEST(SeccompRules, TerminalInjection) {
  const auto rules = SeccompDenyRules();
  EXPECT_EQ(Verdict(rules, "ioctl", {0, TIOCSTI, 0}), EPERM);
  EXPECT_EQ(Verdict(rules, "ioctl", {0, (1ULL << 32) | TIOCSTI, 0}), EPERM);  // CVE-2019-10063
  EXPECT_EQ(Verdict(rules, "ioctl", {0, TIOCLINUX, 0}), EPERM);
  EXPECT_EQ(Verdict(rules, "ioctl", {0, TCGETS, 0}), 0);
  EXPECT_EQ(Verdict(rules, "ioctl", {0, FIONREAD, 0}), 0);
}

// The personality rules are a union of masked matches; check the union is
// exactly "low 32 bits not in the allowed set" on many values.
TEST(SeccompRules, PersonalityAllowsExactlyDockersSet) {
  const auto rules = SeccompDenyRules();
  const std::set<std::uint64_t> allowed = {0, 8, 0x20000, 0x20008, 0xffffffff};
  auto expect = [&](std::uint64_t v) {
    const bool ok = allowed.count(v & 0xffffffffULL) != 0;
    EXPECT_EQ(Verdict(rules, "personality", {v}), ok ? 0 : EPERM) << std::hex << v;
  };
  for (std::uint64_t v : allowed) {
    expect(v);
    expect(v | (0xdeadULL << 32));  // the kernel ignores the high half
  }
  for (unsigned bit = 0; bit < 32; ++bit) {
    expect(1ULL << bit);
    expect(0xffffffffULL & ~(1ULL << bit));
    expect((1ULL << bit) | 8);
    expect((1ULL << bit) | 0x20000);
  }
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;  // deterministic pseudo-random values
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    expect(x);
    expect(x & 0x00ffffffULL);
    expect(x & 0x0000ffffULL);
  }
}

// --- the real filter, in forked children -------------------------------------

std::string LoadFilter() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS) failed\n";
  auto st = ApplySeccomp(SeccompDenyRules());
  if (!st.ok()) return "ApplySeccomp: " + st.error().Message() + "\n";
  return {};
}

long CloneWith(unsigned long flags) {
  long rc = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
  if (rc == 0) _exit(0);  // only if the filter let it through
  if (rc > 0) waitpid(static_cast<pid_t>(rc), nullptr, 0);
  return rc;
}

TEST(SeccompFilter, DeniesInTheKernel) {
  auto out = RunInChild([]() -> std::string {
    std::string r = LoadFilter();
    if (!r.empty()) return r;
    r += ExpectErrno("unshare(CLONE_NEWUSER)", [] { return unshare(CLONE_NEWUSER); }, EPERM);
    r += ExpectErrno("setns(-1)", [] { return setns(-1, 0); }, EPERM);
    r += ExpectErrno("clone(CLONE_NEWUSER)", [] { return CloneWith(CLONE_NEWUSER); }, EPERM);
    r += ExpectErrno("clone(CLONE_NEWNET)", [] { return CloneWith(CLONE_NEWNET); }, EPERM);
    r += ExpectErrno("clone3", [] { return syscall(SYS_clone3, nullptr, 0); }, ENOSYS);
    r += ExpectErrno("mount", [] {
      return mount("none", "/nonexistent-mcpcell", "tmpfs", 0, nullptr);
    }, EPERM);
    r += ExpectErrno("keyctl", [] { return syscall(SYS_keyctl, 0, -3, 0); }, EPERM);
    r += ExpectErrno("bpf", [] { return syscall(SYS_bpf, 0, nullptr, 0); }, EPERM);
    r += ExpectErrno("ptrace(TRACEME)", [] { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); },
                     EPERM);
    r += ExpectErrno("io_uring_setup", [] { return syscall(SYS_io_uring_setup, 0, nullptr); },
                     ENOSYS);
    r += ExpectErrno("socket(AF_PACKET)", [] { return socket(AF_PACKET, SOCK_RAW, 0); },
                     EAFNOSUPPORT);
    r += ExpectErrno("socket(AF_VSOCK)", [] { return socket(AF_VSOCK, SOCK_STREAM, 0); },
                     EAFNOSUPPORT);
    r += ExpectErrno("socket(high bits|AF_PACKET)", [] {
      return syscall(SYS_socket, (1UL << 32) | AF_PACKET, SOCK_RAW, 0);
    }, EAFNOSUPPORT);
    r += ExpectErrno("socket(AF_INET, SOCK_RAW)", [] {
      return socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
    }, EPERM);
    r += ExpectErrno("socket(NETLINK_AUDIT)", [] {
      return socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
    }, EPROTONOSUPPORT);
    int p[2];
    if (pipe(p) != 0) return r + "pipe failed\n";
    char c = 'x';
    r += ExpectErrno("ioctl(TIOCSTI)", [&] { return ioctl(p[0], TIOCSTI, &c); }, EPERM);
    r += ExpectErrno("ioctl(high bits|TIOCSTI)", [&] {
      return syscall(SYS_ioctl, p[0], (1UL << 32) | TIOCSTI, &c);
    }, EPERM);
    r += ExpectErrno("personality(READ_IMPLIES_EXEC)", [] {
      return personality(READ_IMPLIES_EXEC);
    }, EPERM);
    return r;
  });
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
}

void* Nothing(void*) { return nullptr; }

TEST(SeccompFilter, OrdinaryWorkStillWorks) {
  auto out = RunInChild([]() -> std::string {
    errno = 0;
    const bool have_inet6 = [] {
      int fd = socket(AF_INET6, SOCK_STREAM, 0);
      if (fd >= 0) close(fd);
      return fd >= 0;
    }();
    std::string r = LoadFilter();
    if (!r.empty()) return r;
    r += ExpectOk("getpid", [] { return getpid(); });
    r += ExpectOk("open", [] { return open("/proc/self/status", O_RDONLY | O_CLOEXEC); });
    r += ExpectOk("socket(AF_INET, SOCK_STREAM)", [] { return socket(AF_INET, SOCK_STREAM, 0); });
    if (have_inet6) {
      r += ExpectOk("socket(AF_INET6, SOCK_DGRAM)", [] { return socket(AF_INET6, SOCK_DGRAM, 0); });
    }
    r += ExpectOk("socket(AF_UNIX)", [] { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); });
    r += ExpectOk("socket(NETLINK_ROUTE)", [] {
      return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    });
    r += ExpectOk("personality(query)", [] { return personality(0xffffffff); });
    r += ExpectOk("personality(PER_LINUX)", [] { return personality(PER_LINUX); });
    pthread_t t;
    if (int e = pthread_create(&t, nullptr, Nothing, nullptr); e != 0) {
      r += std::string("pthread_create: ") + strerrorname_np(e) + "\n";
    } else {
      pthread_join(t, nullptr);
    }
    r += ExpectOk("fork", [] { return CloneWith(0); });
    return r;
  });
  EXPECT_TRUE(out.exited_ok()) << "status " << out.status;
  EXPECT_EQ(out.report, "");
}

TEST(SeccompFilter, LoadingWithoutNoNewPrivsIsAnErrorNotACrash) {
  if (geteuid() == 0) GTEST_SKIP() << "root has CAP_SYS_ADMIN, so loading succeeds without no_new_privs";
  auto out = RunInChild([]() -> std::string {
    auto st = ApplySeccomp(SeccompDenyRules());
    if (st.ok()) return "loaded without no_new_privs or CAP_SYS_ADMIN\n";
    if (st.error().err != EACCES) return "unexpected: " + st.error().Message() + "\n";
    return {};
  });
  EXPECT_EQ(out.report, "");
}

#if defined(__x86_64__)
long I386Getpid() {
  long ret = 20;  // __NR_getpid on i386
  asm volatile("int $0x80" : "+a"(ret) : : "memory");
  return ret;
}

// A syscall made through another ABI has other numbers and would miss every
// rule; the filter must kill the process instead (bad-arch action).
TEST(SeccompFilter, I386EntryIsKilled) {
  auto bare = RunInChild([] { return std::to_string(I386Getpid()); });
  if (!bare.exited_ok()) {
    GTEST_SKIP() << "int 0x80 dies even without a filter (status " << bare.status
                 << "): this kernel has no IA32 emulation, so there is no i386 entry to guard";
  }
  auto i386 = RunInChild([]() -> std::string {
    std::string r = LoadFilter();
    if (!r.empty()) return r;
    return "int 0x80 returned " + std::to_string(I386Getpid()) + "\n";
  });
  EXPECT_TRUE(i386.killed_by(SIGSYS)) << i386.report << " status " << i386.status;
}

// x32 calls enter as x86_64 with bit 30 set in the number; libseccomp's x86_64
// filter sends them to the bad-arch action unless x32 was added on purpose.
TEST(SeccompFilter, X32EntryIsKilled) {
  auto x32 = RunInChild([]() -> std::string {
    std::string r = LoadFilter();
    if (!r.empty()) return r;
    constexpr long kX32Bit = 0x40000000;
    return "x32 getpid returned " + std::to_string(syscall(kX32Bit | SYS_getpid)) + "\n";
  });
  EXPECT_TRUE(x32.killed_by(SIGSYS)) << x32.report << " status " << x32.status;
}
#endif

}  // namespace
}  // namespace mcpcell
