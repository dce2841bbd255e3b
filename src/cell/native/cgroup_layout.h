#pragma once
// Which cgroup hierarchies this machine has and where this process sits in them.

#include <string>
#include <string_view>
#include <vector>

#include "cell/native/cgroup_parse.h"
#include "util/error.h"

namespace mcpcell {

/// The cgroup layout as seen by this process (its mount namespace and cgroup namespace).
struct CgroupLayout {
  /// kV2: /sys/fs/cgroup is cgroup2, or no v1 hierarchy carries our controllers.
  /// kV1: per-controller v1 mounts (pure v1 or hybrid with an empty "unified").
  enum class Kind { kNone, kV1, kV2 };
  Kind kind = Kind::kNone;
  std::vector<CgroupMount> mounts;      ///< every cgroup/cgroup2 mount from mountinfo
  std::vector<ProcCgroupEntry> self;    ///< /proc/self/cgroup

  /// The v1 mount carrying `controller`, or nullptr.
  const CgroupMount* V1Mount(std::string_view controller) const;
  /// The cgroup2 mount (the one at /sys/fs/cgroup if several), or nullptr.
  const CgroupMount* V2Mount() const;
};

/// The controllers mcpcell limits with: memory, pids, cpu.
inline constexpr std::string_view kCellControllers[] = {"memory", "pids", "cpu"};

/// Pure: decides the kind from whether statfs("/sys/fs/cgroup") said cgroup2 and the mounts.
CgroupLayout::Kind ClassifyCgroupLayout(bool sys_fs_cgroup_is_v2,
                                        const std::vector<CgroupMount>& mounts);

/// Reads statfs("/sys/fs/cgroup"), /proc/self/mountinfo and /proc/self/cgroup.
Result<CgroupLayout> DetectCgroupLayout();

std::string ToString(CgroupLayout::Kind kind);

}  // namespace mcpcell
