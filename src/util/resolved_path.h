#pragma once
// Where a path leads, when part of it may not exist yet: a state directory
// to be made below ~/.local/state -> ~/data lies in ~/data, and one below
// $H/link/../s lies where link's target's parent is, not at $H/s (adv22,
// adv24). The existing prefix is resolved as written (the kernel takes
// "link/.." as the link's target's parent); only the missing rest is
// normalized by text, which is what mkdir -p of it would make.

#include <string>

namespace mcpcell {

/// `path` (absolute) with its longest existing prefix, as written,
/// resolved through symlinks (realpath(3)) and the missing rest appended,
/// normalized; no trailing slash. `path` itself when nothing resolves.
std::string ResolvedAsFarAsExists(const std::string& path);

/// Whether `s` holds a byte below 0x20 or 0x7f: a path with a newline (or
/// other control byte) is refused where paths are kept one per line (adv24).
bool HasControlByte(const std::string& s);

}  // namespace mcpcell
