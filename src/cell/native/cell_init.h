#pragma once
// The cell's PID 1: runs in the child created by clone3 inside the new
// namespaces. It builds the root filesystem, starts the server as its only
// child, reaps zombies, forwards signals, and exits with the server's status.

#include <array>
#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "cell/native/id_map.h"
#include "cell/native/seccomp.h"

namespace mcpcell {

struct CellInitArgs {
  const CellSpec* spec = nullptr;
  const std::vector<MountSpec>* planned = nullptr;
  HostIds host;
  int sync_fd = -1;       ///< the child's end of the sync socket (O_CLOEXEC)
  bool own_netns = true;  ///< bring up lo
  const SeccompProgram* seccomp = nullptr;  ///< compiled by the supervisor; null: no filter
  /// What the cell gets as fds 0-2 instead of the inherited one (-1: keep it):
  /// a pipe where the client's fd is a terminal (cell/native/stdio_relay.h).
  std::array<int, 3> stdio{-1, -1, -1};
  /// One per planned mount: an idmapped mount tree made by the supervisor
  /// (cell/native/idmap_mount.h), inherited and attached instead of a bind; -1: bind.
  std::vector<int> idmapped_trees{};
  /// cgroup v1: the cell cgroups' `tasks` files, opened by the supervisor
  /// (CellCgroup::OpenV1TasksFiles), which PID 1 joins itself at "go", before
  /// it builds the root; `cgroup_dirs` names them in the same order, for the error.
  std::vector<int> cgroup_tasks{};
  const std::vector<std::string>* cgroup_dirs = nullptr;
};

/// Never returns. Exit status: the server's (128+N when killed by signal N), or
/// 125/126/127 after a setup or exec failure that was reported on sync_fd.
[[noreturn]] void CellInitMain(const CellInitArgs& args);

}  // namespace mcpcell
