#pragma once
// Mount planning: validates the CellSpec's mounts and orders them so that a
// parent is mounted before anything beneath it (a later tmpfs at /tmp must not
// hide an earlier bind at /tmp/work). Pure: no syscalls but stat.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"

namespace mcpcell {

/// Lexically normalises an absolute path: collapses "//" and ".", refuses "..".
Result<std::string> NormalizeCellPath(const std::string& path);

/// Targets the backend owns; user mounts may not land on or under them.
bool IsReservedTarget(const std::string& target);

/// Returns the mounts to perform, parents first. Drops optional binds whose
/// source is missing; errors on a missing required source, a relative or
/// reserved target, or two mounts on the same target.
Result<std::vector<MountSpec>> PlanMounts(const std::vector<MountSpec>& mounts);

}  // namespace mcpcell
