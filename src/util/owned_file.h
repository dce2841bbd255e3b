#pragma once
// Files mcpcell trusts from one run to the next (tool pins, the compiled
// secret rules): whoever can write one decides what a later run does, so it
// is opened relative to a directory fd without following a symlink
// (open(2) O_NOFOLLOW: ELOOP on a planted link), and must be of the expected
// type, the effective uid's, and writable by nobody else. A file created here
// is 0600.

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// How a refusal reads, e.g. "open the pin store PATH: is owned by uid 1000,
/// not by you (uid 0): another user could rewrite your pins; remove it ...".
struct OwnedRules {
  std::string what;           ///< the step: "open the pin store"
  std::string risk;           ///< why it matters: "another user could rewrite your pins"
  std::string not_yours_fix;  ///< what to do about another owner
  std::string writable_fix = "run chmod go-w on it";
  std::uint64_t max_bytes = UINT64_MAX;  ///< a larger regular file is refused; reads stop past it
};

enum class OwnedKind { kFile, kDirectory };

/// Whether the file open at `fd` is of `kind`, the effective uid's, writable
/// by neither group nor others and (a file) at most rules.max_bytes; the
/// refusal names `path`, which check failed and the fix.
Status CheckOwned(int fd, OwnedKind kind, const std::string& path, const OwnedRules& rules);

/// openat(dir, name) of a regular file with `flags` (O_RDONLY, O_RDWR |
/// O_CREAT, ...) plus O_NOFOLLOW, O_NONBLOCK (a FIFO planted under the name
/// must not hang the open) and O_CLOEXEC, mode 0600 when it creates, then
/// CheckOwned. A failed open is an ErrnoError "<open_what> <path>" (the
/// caller decides about ENOENT).
Result<UniqueFd> OpenOwnedFileAt(int dir, const std::string& name, int flags, const std::string& open_what,
                                 const std::string& path, const OwnedRules& rules);

/// openat(dir, name) of a directory (O_DIRECTORY, O_NOFOLLOW), then CheckOwned.
Result<UniqueFd> OpenOwnedDirAt(int dir, const std::string& name, const std::string& open_what,
                                const std::string& path, const OwnedRules& rules);

/// The rest of `fd`, read whole; past rules.max_bytes it is refused.
Result<std::string> ReadOwnedFile(int fd, const std::string& read_what, const std::string& path,
                                  const OwnedRules& rules);

}  // namespace mcpcell
