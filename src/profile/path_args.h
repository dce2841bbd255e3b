#pragma once
// A registry entry's directory arguments, and how --read narrows them. Here,
// below both users, because the policy (policy/decide.h: does the entry ask
// for write?) and the profile merge (profile/lower.h: which profile write
// paths stay writable) must resolve a path the same way.

#include <string>
#include <vector>

namespace mcpcell {

/// A registry entry's directory argument, resolved the way the server
/// resolves it (server-filesystem: expand "~", then path.resolve against its
/// cwd) but against the caller's $HOME and cwd, because inside the cell both
/// differ: "." would otherwise name the cell's temporary home.
/// Arguments that start with '-' are the server's flags, not directories.
bool IsPathArg(const std::string& arg);
std::string ResolvePathArg(const std::string& arg);

/// True when `dir` (a resolved directory argument) is also named by one of
/// the user's --read paths: an explicit --read narrows the entry's
/// read-write default to read-only.
bool NarrowedByRead(const std::string& dir, const std::vector<std::string>& read_flags);

/// True when an entry with path_args "write" gets at least one directory
/// argument bound writable (one not narrowed by --read).
bool HasWritablePathArg(const std::vector<std::string>& args, const std::vector<std::string>& read_flags);

}  // namespace mcpcell
