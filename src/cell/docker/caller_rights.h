#pragma once
// A container engine runs as root: it mounts what the spec names and runs
// the server as the uid the spec gives, whatever the caller may do. A native
// cell is held to its caller's rights by the kernel; a container cell of a
// caller that is not root (a docker-group user) is held to them here, so
// mcpcell hands out no more than the caller has (adv23): no --uid/--gid of
// another account, and no grant the caller itself could not read (or, for
// --write, write). Root may do either anyway.

#include <sys/types.h>

#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell::docker {

/// Refuses, for a caller whose effective uid is not 0: --uid other than
/// `caller_uid`, --gid not among `caller_gids`, and a grant (Origin::kGrant
/// bind) the caller cannot access as asked, checked with faccessat(2)
/// AT_EACCESS (owner, group and other bits, ACLs). Each error names the flag
/// or grant and what to do.
Status CheckWithinCallerRights(const CellSpec& spec, uid_t caller_uid, const std::vector<gid_t>& caller_gids);

/// The effective gid and the supplementary groups of this process.
std::vector<gid_t> CallerGroups();

}  // namespace mcpcell::docker
