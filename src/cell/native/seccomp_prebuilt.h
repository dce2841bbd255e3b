#pragma once
// Seccomp programs compiled when mcpcell is built (tools/seccomp_gen.cc
// writes them into a generated .cc linked into this binary), used instead of
// a compile at launch only when this run's SeccompCompileKey equals the one
// they were made with; otherwise the rules are compiled as before. Issue 15:
// the compile was ~0.6 ms of every launch. The programs live in the binary's
// read-only data, never in a file a user could write (a cache there would be
// a way to swap a cell's filter).

#include <cstdint>
#include <span>

#include "cell/native/seccomp.h"
#include "cell/native/seccomp_key.h"
#include "util/error.h"

namespace mcpcell {

/// One generated program and the key it was compiled with.
struct PrebuiltSeccomp {
  SeccompVariant variant;
  std::uint32_t arch;
  std::uint32_t version[3];
  const char* library_build_id;
  int api_level;
  std::span<const std::uint64_t> inputs;
  std::span<const sock_filter> program;
};

/// The table the build generated (empty when the build could not compile).
std::span<const PrebuiltSeccomp> PrebuiltSeccompTable();

/// The program in `table` for `variant` made with exactly `key`, or nullptr.
/// A key without a library build id never matches: the library is unknown.
const PrebuiltSeccomp* MatchPrebuiltSeccomp(std::span<const PrebuiltSeccomp> table, SeccompVariant variant,
                                            const SeccompCompileKey& key);

/// The variant's program from `table` when this run's key matches, else
/// CompileSeccomp(SeccompRules(variant)).
Result<SeccompProgram> SeccompProgramFrom(std::span<const PrebuiltSeccomp> table, SeccompVariant variant);

/// SeccompProgramFrom(PrebuiltSeccompTable(), variant).
Result<SeccompProgram> SeccompProgramFor(SeccompVariant variant);

}  // namespace mcpcell
