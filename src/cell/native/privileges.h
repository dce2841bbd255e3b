#pragma once
// Dropping privileges in the cell, in the order the kernel needs them dropped.

#include <sys/types.h>

#include <cstdint>

#include "util/error.h"

namespace mcpcell {

/// Sets groups to {gid} (when allowed), then gid, then uid (real, effective, saved),
/// and checks the result with getresuid/getresgid.
/// `can_setgroups` is false when setgroups was denied for the user namespace
/// (unprivileged callers must write "deny" before gid_map).
/// Capabilities held before the switch are still held (permitted and effective)
/// after it, also when leaving uid 0 (PR_SET_KEEPCAPS, as bubblewrap does): the
/// cell may still have setup to do as its user, and DropAllCapabilities needs
/// CAP_SETPCAP to empty the bounding set. Always follow with DropAllCapabilities.
Status SwitchUser(std::uint32_t uid, std::uint32_t gid, bool can_setgroups);

/// Clears the bounding, ambient, inheritable, permitted and effective capability
/// sets, then verifies they are empty. Needs CAP_SETPCAP in the permitted set
/// (root in the cell's user namespace, before or after SwitchUser).
Status DropAllCapabilities();

/// PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities cannot raise privileges.
Status SetNoNewPrivs();

}  // namespace mcpcell
