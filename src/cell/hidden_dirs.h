#pragma once
// mcpcell's state directory (util/state_dir.h OwnDir::hidden) holds every
// cell's record, the copies of every server's stderr and the tool pins: what
// one server wrote to its stderr, another must not read because the user
// granted it ~ or /var/lib. So no cell sees it: a grant at or below it is
// refused, and a grant above it gets an empty read-only tmpfs over it, like
// a credential directory. Writing there was refused already (a cell that
// writes the pins approves its own rug pull).

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell {

/// Masks, inside the grant of host directory `real` at `target`, each
/// hidden directory of mcpcell's below it, creating it (0700) when it does
/// not exist yet: a later run would make it, and this cell would see it.
/// One note per mask.
Status MaskHiddenDirsBeneath(CellSpec* spec, const std::string& real, const std::string& target,
                             const std::string& label, std::vector<std::string>* notes);

/// Refuses a bind of `spec` at or below a hidden directory, and a bind above
/// one that has no mask over it (fail closed: whatever added the bind
/// skipped MaskHiddenDirsBeneath). The error names the grant, the directory
/// and what to grant instead.
Status CheckHiddenDirsOutOfReach(const CellSpec& spec);

}  // namespace mcpcell
