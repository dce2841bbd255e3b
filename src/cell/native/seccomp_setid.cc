// The rules that keep setuid/setgid bits and file capabilities from ever
// being created by a cell (issue 14 item 5). A granted directory is mounted
// as its owner's (idmap_mount.h): a file the cell makes there is the owner's
// on the host — root's for a root-owned directory. nosuid on the cell's mount
// does not protect the host: a host user who runs the file later runs it
// through the host's own mount, where the bits count. So the bits must never
// reach the disk, through any call that sets a mode.

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "cell/native/seccomp.h"

namespace mcpcell {
namespace {

using Op = SyscallArgCheck::Op;

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000  // asm-generic/fcntl.h: O_TMPFILE is this | O_DIRECTORY
#endif

// The mode arguments are umode_t (16 bits): the syscall wrappers truncate
// the register (include/linux/syscalls.h __SC_CAST). A one-bit mask below
// bit 16 sees exactly the bit the kernel keeps, whatever the high bits hold.
constexpr std::uint64_t kSetIdBits[] = {S_ISUID, S_ISGID};

SyscallArgCheck HasBit(unsigned arg, std::uint64_t bit) { return {arg, Op::kMaskedEq, bit, bit}; }

// chmod(path, mode), mkdir(path, mode) ...: refused when `mode_arg` holds
// S_ISUID or S_ISGID (one rule per bit: rules are OR-ed, checks AND-ed).
void DenyModeBits(std::vector<SyscallRule>* rules, const char* name, unsigned mode_arg) {
  for (std::uint64_t bit : kSetIdBits) {
    rules->push_back(SyscallRule{name, EPERM, {HasBit(mode_arg, bit)},
                                 bit == S_ISUID ? "no setuid bit on a file the host keeps (S_ISUID in the mode)"
                                                : "no setgid bit on a file the host keeps (S_ISGID in the mode)"});
  }
}

// open(2) reads the mode only when it creates: O_CREAT or O_TMPFILE
// (fs/open.c build_open_how: WILL_CREATE). Matching the flag too keeps an
// open of an existing file with a stray mode argument working.
void DenyCreateModeBits(std::vector<SyscallRule>* rules, const char* name, unsigned flags_arg, unsigned mode_arg) {
  for (std::uint64_t create : {std::uint64_t{O_CREAT}, std::uint64_t{__O_TMPFILE}}) {
    for (std::uint64_t bit : kSetIdBits) {
      rules->push_back(SyscallRule{name, EPERM, {HasBit(flags_arg, create), HasBit(mode_arg, bit)},
                                   "no setuid/setgid bit on a file created in the cell (mode of O_CREAT/O_TMPFILE)"});
    }
  }
}

}  // namespace

std::vector<SyscallRule> SetIdBitRules() {
  std::vector<SyscallRule> rules;
  DenyModeBits(&rules, "chmod", 1);
  DenyModeBits(&rules, "fchmod", 1);
  DenyModeBits(&rules, "fchmodat", 2);
  DenyModeBits(&rules, "fchmodat2", 2);  // Linux 6.6
  DenyModeBits(&rules, "creat", 1);
  DenyModeBits(&rules, "mkdir", 1);
  DenyModeBits(&rules, "mkdirat", 2);
  DenyModeBits(&rules, "mknod", 1);
  DenyModeBits(&rules, "mknodat", 2);
  DenyCreateModeBits(&rules, "open", 1, 2);
  DenyCreateModeBits(&rules, "openat", 2, 3);
  // openat2 takes flags and mode in a struct behind a pointer, which classic
  // BPF cannot read; ENOSYS makes callers fall back to openat (above).
  rules.push_back(SyscallRule{"openat2", ENOSYS, {},
                              "its mode is behind a pointer seccomp cannot read; callers fall back to openat"});
  // File capabilities are a setuid bit by another name. The xattr's name is a
  // string seccomp cannot read, so every set is refused, as a filesystem
  // without xattrs answers (ACLs and user.* included: copy tools go on).
  // The kernel wants CAP_SETFCAP too, which the server never has; this holds
  // even if that ever changed.
  for (const char* name : {"setxattr", "lsetxattr", "fsetxattr", "setxattrat"}) {
    rules.push_back(SyscallRule{name, EOPNOTSUPP, {},
                                "no extended attributes: security.capability would be a setuid bit by another name"});
  }
  return rules;
}

}  // namespace mcpcell
