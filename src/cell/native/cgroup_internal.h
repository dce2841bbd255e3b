#pragma once
// Shared between cgroup.cc, cgroup_v1.cc, cgroup_v2.cc and the janitor/reaper.
// Not part of the module's public contract (that is cgroup.h).

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "cell/native/cgroup_layout.h"
#include "util/error.h"

namespace mcpcell::cgroup_internal {

/// One controller a cell needs because a limit has a value.
struct ControllerNeed {
  std::string controller;  ///< "memory", "pids", "cpu"
  std::string flag;        ///< the flag a user drops to do without it: "--memory"
  std::string limit_name;  ///< "memory limit"
  bool requested = false;
};

/// The controllers `limits` needs, in a fixed order (memory, pids, cpu).
std::vector<ControllerNeed> NeededControllers(const Limits& limits);

/// A limit that cannot be enforced: an Error "<flag> <headline>: <reason>; <hint>"
/// when it was requested, otherwise a warning line in *warnings and success.
Status Unenforceable(const ControllerNeed& need, const std::string& headline,
                     const std::string& reason, const std::string& hint,
                     std::vector<std::string>* warnings);

/// The hint for "not delegated" errors.
std::string DelegationHint(const ControllerNeed& need);

/// What CreateV1/CreateV2 made.
struct CreatedCgroups {
  std::string version = "none";
  std::vector<std::string> dirs;  ///< the cell's cgroup directories (one per v1 hierarchy; one on v2)
  std::string memory_dir;         ///< where the memory controller's files are, if any
};

Result<CreatedCgroups> CreateV1Cgroups(const CgroupLayout& layout, const Limits& limits,
                                       const std::string& cell_id,
                                       std::vector<std::string>* warnings);
Result<CreatedCgroups> CreateV2Cgroup(const CgroupLayout& layout, const Limits& limits,
                                      const std::string& cell_id,
                                      std::vector<std::string>* warnings);

/// Every directory under which this process would create cell cgroups
/// ("<mount>/mcpcell", "<v2 root>/mcpcell.slice", ...), existing or not.
std::vector<std::string> CellParentDirs(const CgroupLayout& layout);

/// Removes `dirs` (after cgroup.kill on v2 when processes remain); returns the
/// first failure but tries them all.
Status RemoveCellDirs(const std::vector<std::string>& dirs);

/// True for errnos meaning "you may not create/modify here".
bool IsPermissionErrno(int err);

/// Name of the per-hierarchy directory holding all cells.
inline constexpr char kV1Group[] = "mcpcell";
inline constexpr char kV2RootGroup[] = "mcpcell.slice";
inline constexpr char kV2DelegatedGroup[] = "mcpcell";

}  // namespace mcpcell::cgroup_internal
