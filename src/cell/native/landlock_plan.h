#pragma once
// Which Landlock rules mirror a cell's mounts.

#include <vector>

#include "core/cell_spec.h"
#include "cell/native/landlock.h"

namespace mcpcell {

/// Rules for the cell after pivot_root: each mount target with the rights its
/// mount gives, the generated /etc files, /dev nodes, /proc read-only, and "/"
/// for directory listing only — so a mount that somehow appeared elsewhere
/// would still be unreadable.
std::vector<LandlockPath> LandlockPathsFor(const CellSpec& spec, const std::vector<MountSpec>& planned);

}  // namespace mcpcell
