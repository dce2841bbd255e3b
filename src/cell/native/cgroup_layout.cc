#include "cell/native/cgroup_layout.h"

#include <linux/magic.h>
#include <sys/statfs.h>

#include "cell/native/cgroup_files.h"

namespace mcpcell {
namespace {

constexpr std::string_view kSysFsCgroup = "/sys/fs/cgroup";

// Prefer the mount under /sys/fs/cgroup: containers and tools sometimes bind
// the same hierarchy elsewhere too.
bool Preferred(const CgroupMount& m) {
  return m.mount_point == kSysFsCgroup ||
         m.mount_point.rfind(std::string(kSysFsCgroup) + "/", 0) == 0;
}

template <typename Pred>
const CgroupMount* FindMount(const std::vector<CgroupMount>& mounts, Pred pred) {
  const CgroupMount* found = nullptr;
  for (const auto& m : mounts) {
    if (!pred(m)) continue;
    if (Preferred(m)) return &m;
    if (found == nullptr) found = &m;
  }
  return found;
}

}  // namespace

const CgroupMount* CgroupLayout::V1Mount(std::string_view controller) const {
  return FindMount(mounts, [&](const CgroupMount& m) { return !m.v2 && m.HasController(controller); });
}

const CgroupMount* CgroupLayout::V2Mount() const {
  return FindMount(mounts, [](const CgroupMount& m) { return m.v2; });
}

CgroupLayout::Kind ClassifyCgroupLayout(bool sys_fs_cgroup_is_v2,
                                        const std::vector<CgroupMount>& mounts) {
  bool has_v2 = false;
  bool v1_has_ours = false;
  for (const auto& m : mounts) {
    has_v2 = has_v2 || m.v2;
    for (std::string_view c : kCellControllers) v1_has_ours = v1_has_ours || (!m.v2 && m.HasController(c));
  }
  if (sys_fs_cgroup_is_v2 && has_v2) return CgroupLayout::Kind::kV2;
  // A controller lives in exactly one hierarchy: once v1 has memory/pids/cpu,
  // the hybrid "unified" v2 mount cannot offer them (cgroups(7)).
  if (v1_has_ours) return CgroupLayout::Kind::kV1;
  if (has_v2) return CgroupLayout::Kind::kV2;
  return CgroupLayout::Kind::kNone;
}

Result<CgroupLayout> DetectCgroupLayout() {
  CgroupLayout layout;
  struct statfs st {};
  bool is_v2 = ::statfs(std::string(kSysFsCgroup).c_str(), &st) == 0 &&
               st.f_type == CGROUP2_SUPER_MAGIC;
  auto mountinfo = cgroupfs::ReadText("/proc/self/mountinfo");
  if (!mountinfo) return mountinfo.error();
  auto self = cgroupfs::ReadText("/proc/self/cgroup");
  if (!self) return self.error();
  layout.mounts = ParseCgroupMounts(*mountinfo);
  layout.self = ParseProcCgroup(*self);
  layout.kind = ClassifyCgroupLayout(is_v2, layout.mounts);
  return layout;
}

std::string ToString(CgroupLayout::Kind kind) {
  switch (kind) {
    case CgroupLayout::Kind::kV1: return "v1";
    case CgroupLayout::Kind::kV2: return "v2";
    case CgroupLayout::Kind::kNone: break;
  }
  return "none";
}

}  // namespace mcpcell
