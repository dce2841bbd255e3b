#pragma once
// The cell's seccomp filter (libseccomp): default allow, deny what an MCP
// server has no business doing, each with a clear errno. Applied last, just
// before execve, after no_new_privs.

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

#include "util/error.h"

namespace mcpcell {

/// One argument comparison (maps onto scmp_arg_cmp). Comparisons see all 64
/// bits of the register; the kernel truncates `int`/`unsigned int` arguments to
/// 32, so an exact match on such an argument must be kMaskedEq with mask
/// 0xffffffff, or high bits slip past it (flatpak CVE-2019-10063, TIOCSTI).
/// libseccomp allows one comparison per argument index within a rule.
struct SyscallArgCheck {
  unsigned arg = 0;          ///< argument index 0..5
  enum class Op { kEq, kMaskedEq, kNe, kGe } op = Op::kEq;
  std::uint64_t mask = 0;    ///< for kMaskedEq: (arg & mask) == value
  std::uint64_t value = 0;

  bool operator==(const SyscallArgCheck&) const = default;
};

/// A syscall denied with `errno_value`, optionally only when all `checks` hold.
/// Several rules for one syscall are OR-ed, as in libseccomp.
struct SyscallRule {
  std::string syscall;       ///< name as libseccomp knows it
  int errno_value = 0;       ///< EPERM, ENOSYS (clone3: libc falls back to clone), EAFNOSUPPORT...
  std::vector<SyscallArgCheck> checks;
  std::string why;           ///< one line: the reason, shown by `mcpcell doctor --seccomp`/tests

  bool operator==(const SyscallRule&) const = default;
};

/// The deny list as data, so it can be unit tested and printed.
std::vector<SyscallRule> SeccompDenyRules();

/// fallocate refused with EOPNOTSUPP (CellSpec::refuse_preallocation).
std::vector<SyscallRule> PreallocationRules();

/// Part of the deny list: no S_ISUID/S_ISGID in any mode a cell sets or
/// creates with, openat2 (mode unreadable) and xattr sets (file capabilities)
/// refused (seccomp_setid.cc; issue 14 item 5).
std::vector<SyscallRule> SetIdBitRules();

/// The syscall's number for the native architecture: libseccomp's, else, for
/// a call newer than this libseccomp on x86_64/aarch64, its number from the
/// kernel's shared table (>= 424 is the same on both). -1: unknown.
int SyscallNumber(const std::string& name);

/// Names in `rules` that this libseccomp cannot resolve for the native
/// architecture; ApplySeccomp skips them (they stay allowed), doctor lists them.
std::vector<std::string> SeccompUnknownSyscalls(const std::vector<SyscallRule>& rules);

/// One line for a human: "socket(a0&0xffffffff==17) -> EAFNOSUPPORT  # why".
std::string FormatRule(const SyscallRule& rule);

/// Loads the filter for the calling process (all threads). Requires no_new_privs
/// (or CAP_SYS_ADMIN). Foreign architectures (i386/x32 on x86_64) are killed.
Status ApplySeccomp(const std::vector<SyscallRule>& rules);

/// The filter compiled to classic BPF once, in the supervisor, so the process
/// that loads it only makes one syscall (no libseccomp work per launch in the cell).
using SeccompProgram = std::vector<sock_filter>;
Result<SeccompProgram> CompileSeccomp(const std::vector<SyscallRule>& rules);

/// Loads a compiled program for the calling thread (seccomp(2)). Needs no_new_privs.
Status LoadSeccompProgram(const SeccompProgram& program);

}  // namespace mcpcell
