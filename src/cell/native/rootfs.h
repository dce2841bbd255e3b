#pragma once
// Building the cell's root filesystem, inside the child, in its own mount
// namespace: an empty tmpfs, read-only binds of what the server needs, fresh
// /proc, a minimal /dev, scratch tmpfs, secrets; then pivot_root into it and
// detach the host's root.

#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

/// Host files the cell needs, opened while the child still has the caller's
/// host identity (so root-only parents like /root are traversable); mounts are
/// later made from these fds via /proc/self/fd, after the switch to the cell user.
struct RootfsSources {
  struct Entry {
    UniqueFd fd;              ///< O_PATH for binds, O_RDONLY for secrets
    std::string link_target;  ///< non-empty: a system symlink (/bin -> usr/bin), recreated as a symlink
    bool is_dir = false;
    int idmapped_tree = -1;   ///< >= 0: the supervisor's idmapped mount tree, attached instead of a bind
  };
  std::vector<Entry> mounts;   ///< one per planned mount, same order (tmpfs entries hold no fd)
  std::vector<UniqueFd> devices;  ///< host /dev nodes, same order as kDeviceNodes
  std::vector<UniqueFd> secrets;  ///< same order as spec.secrets
};

inline constexpr const char* kDeviceNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

/// Opens every source. Runs in the child before it becomes the cell user.
/// `idmapped_trees` (one per planned mount, -1: none) replace the source where given.
Result<RootfsSources> OpenRootfsSources(const CellSpec& spec, const std::vector<MountSpec>& planned,
                                        const std::vector<int>& idmapped_trees = {});

/// Builds the root and pivots into it. Runs in the child as the cell user
/// (with full capabilities in its own user namespace). On return "/" is the
/// cell's root, read-only, and the cwd is spec.workdir (or home).
Status BuildRootfs(const CellSpec& spec, const std::vector<MountSpec>& planned, RootfsSources& sources);

}  // namespace mcpcell
