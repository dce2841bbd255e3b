#pragma once
// `~` in mcpcell's own path options. MCP clients start servers with an argv
// array, not through a shell, so `"--audit-log", "~/audit.jsonl"` arrives
// with the tilde as it is (issue 18 item 14); mcpcell expands it itself.

#include <string>

namespace mcpcell {

/// The caller's home: $HOME, else the passwd entry of the real uid; empty if neither.
std::string CallerHome();

/// The home the account database names for the effective uid ("" if
/// none): not $HOME, which whoever starts mcpcell (a client's env block)
/// sets. getpwuid_r: a launch looks names up on another thread meanwhile.
std::string AccountHome();

/// `~` or a leading `~/` replaced by CallerHome(); anything else (`~user`,
/// a `~` later in the path) returned unchanged.
std::string ExpandHome(const std::string& path);

}  // namespace mcpcell
