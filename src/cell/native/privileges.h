#pragma once
// Dropping privileges in the cell, in the order the kernel needs them dropped.

#include <sys/types.h>

#include <cstdint>

#include "util/error.h"

namespace mcpcell {

/// Sets groups to {gid} (when allowed), then gid, then uid (real, effective, saved).
/// `can_setgroups` is false when setgroups was denied for the user namespace
/// (unprivileged callers must write "deny" before gid_map).
Status SwitchUser(std::uint32_t uid, std::uint32_t gid, bool can_setgroups);

/// Clears the bounding, ambient, inheritable, permitted and effective capability sets.
Status DropAllCapabilities();

/// PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities cannot raise privileges.
Status SetNoNewPrivs();

}  // namespace mcpcell
