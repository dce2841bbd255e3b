#pragma once
// Everything a seccomp compile's output depends on, as data (issue 15).
// CompileSeccomp is a pure function of: the rules (each call's number, errno
// and argument checks, in order), the native architecture, libseccomp's code
// (its version and the exact library build) and the kernel features
// libseccomp finds at seccomp_init (its API level: a kernel without
// SECCOMP_RET_KILL_PROCESS or TSYNC makes the compile fail). Two compiles
// with equal keys produce the same program, so a program made at build time
// (seccomp_prebuilt.h) may stand in for a compile whose key equals its own.

#include <cstdint>
#include <string>
#include <vector>

#include "cell/native/seccomp.h"

namespace mcpcell {

/// The fixed rule sets a cell loads.
enum class SeccompVariant : std::uint8_t {
  kDeny = 0,                  ///< SeccompDenyRules(): every native cell
  kDenyAndPreallocation = 1,  ///< plus PreallocationRules(): install-script cells
};
inline constexpr SeccompVariant kSeccompVariants[] = {SeccompVariant::kDeny,
                                                      SeccompVariant::kDenyAndPreallocation};

/// The variant's rules, in the order they are compiled.
std::vector<SyscallRule> SeccompRules(SeccompVariant variant);

/// A stable name for the generated file and messages: "deny", "deny+preallocation".
const char* SeccompVariantName(SeccompVariant variant);

struct SeccompCompileKey {
  std::uint32_t arch = 0;             ///< seccomp_arch_native() (an AUDIT_ARCH_* value)
  std::uint32_t version[3] = {};      ///< seccomp_version(): major, minor, micro
  std::string library_build_id;       ///< libseccomp's NT_GNU_BUILD_ID in hex; "" when not found
  int api_level = 0;                  ///< seccomp_api_get(): the kernel features libseccomp uses
  std::vector<std::uint64_t> inputs;  ///< SeccompCompileInputs(rules)

  bool operator==(const SeccompCompileKey&) const = default;
};

/// The rules as the compile sees them, flattened: per rule its resolved
/// number (-1 when unknown: skipped), errno, number of checks, then each
/// check's arg, op, mask and value. The `why` text is not an input.
std::vector<std::uint64_t> SeccompCompileInputs(const std::vector<SyscallRule>& rules);

/// This process's key for compiling `rules` (no compile; a few probe syscalls).
SeccompCompileKey SeccompKeyFor(const std::vector<SyscallRule>& rules);

}  // namespace mcpcell
