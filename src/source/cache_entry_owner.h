#pragma once
// Whether a cached install is still what this user's mcpcell put there
// (adv11). The cache root itself is checked when it is opened
// (host_tool.h PackageCacheRoot: the caller's, go-w); an entry below it
// that another user made — while the root was shared, or moved in — holds
// code that user chose and can still change, and it would run as the
// package the policy trusts (a pinned registry entry runs with no cell
// under an `allow` rule). Only the owner of a directory can add to it, so
// a tree whose directories are the user's and writable by no one else
// can only have grown by the user's (or root's) hand: the path from the
// root to what runs is checked, each component lstat'ed, not every file
// of the install (thousands; issue 15's launch budget).

#include <string>

#include "util/error.h"

namespace mcpcell {

/// Each component of `path` below `root` (`path` itself included) must be
/// a directory or a regular file owned by the effective uid or by root,
/// without group or other write permission; a symlink, another type, or
/// another owner is refused, naming the component and `remedy`. `path`
/// must lie strictly below `root` (lexically; neither follows a link).
Status CheckOwnedBelow(const std::string& root, const std::string& path, const std::string& remedy);

}  // namespace mcpcell
