#pragma once
// Handing a file mcpcell created (a stdio FIFO, a secret copy, the egress
// gate) to the container's user, which is not mcpcell's own uid.
//
// Root chowns it. A normal user in the docker group may not chown(2) to
// another uid (EPERM: issue 18.3, every docker run failed), so for that caller
// the file stays its own and gains one POSIX ACL entry, user:UID:PERMS
// (acl(5)); group and other stay without access. Only the container's uid is
// let in, and every such file lives below a 0700 directory of the caller's
// (run_dirs.h), so no other host user can even reach it by path.
//
// gVisor ignores ACLs: its Sentry decides access from the owner, group and
// mode bits alone (seen: EACCES on /run/secrets/NAME for a docker-group
// caller). There the cell's access goes on the "other" bits instead; the
// 0700 directory above is then what keeps other host users out (the only
// other way in, /proc/PID/root of the cell, needs the cell's own uid or root,
// who can read an ACL'd file just the same).

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "util/error.h"

namespace mcpcell::docker {

enum class Handover {
  kChown,  ///< root: the cell's user becomes the owner (the mode's owner bits apply)
  kAcl,    ///< anyone else: an ACL entry for the cell's uid; the owner stays the caller
  kOther,  ///< anyone else, where the runtime ignores ACLs (gVisor): the "other" bits
  kNone,   ///< the caller is the cell's uid already
};

/// What this process can do for a cell running as `uid`; `acls_honoured` is
/// false for a runtime that checks mode bits only (runsc).
Handover HandoverFor(std::uint32_t uid, bool acls_honoured = true);

/// The bytes of a system.posix_acl_access value (linux/posix_acl_xattr.h,
/// version 2): the owner keeps `owner_perms`, user `uid` gets `perms`, the
/// owning group and others nothing, and the mask is `perms`. Perms are rwx
/// bits (4 read, 2 write, 1 search/execute).
std::string AccessAclXattr(unsigned owner_perms, std::uint32_t uid, unsigned perms);

/// Gives the cell's user `perms` on `path` (open as `fd`, or -1 to go by path)
/// the way `how` says; `what` names the step in errors. The owner's mode bits
/// must be final before this is called: a later chmod(2) rewrites the ACL mask.
Status HandToCellUser(Handover how, int fd, const std::string& path, std::uint32_t uid, std::uint32_t gid,
                      unsigned perms, const std::string& what);

}  // namespace mcpcell::docker
