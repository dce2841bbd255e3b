// cgroup v1 (and hybrid): one directory per controller hierarchy,
// <mount>/mcpcell/<cell_id>, limits written to each controller's own files.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "cell/native/cgroup_files.h"
#include "cell/native/cgroup_internal.h"

namespace mcpcell::cgroup_internal {
namespace {

// Where a cell's directory may go in one hierarchy: the hierarchy root (root
// only, in practice), then the caller's own cgroup (when someone delegated it:
// v1 has no "no internal processes" rule, so a child of our own cgroup works).
std::vector<std::string> V1Bases(const CgroupLayout& layout, const CgroupMount& mount,
                                 const std::string& controller) {
  std::vector<std::string> bases = {mount.mount_point};
  if (auto path = V1CgroupPath(layout.self, controller)) {
    if (auto dir = CgroupDirUnder(mount, *path); dir && *dir != mount.mount_point) {
      bases.push_back(*dir);
    }
  }
  return bases;
}

// Creates <base>/mcpcell/<cell_id> in the first base that lets us.
Result<std::string> MakeV1CellDir(const std::vector<std::string>& bases, const std::string& cell_id) {
  Error last = MakeError("create cgroup", "", "no candidate directory");
  for (const auto& base : bases) {
    std::string group = cgroupfs::Join(base, kV1Group);
    Status made = cgroupfs::MakeDir(group);
    if (!made) {
      last = made.error();
      if (IsPermissionErrno(last.err)) continue;
      return last;
    }
    std::string dir = cgroupfs::Join(group, cell_id);
    // EEXIST is an error here: the name belongs to another cell.
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    last = ErrnoError("create cgroup", dir);
    if (!IsPermissionErrno(last.err)) return last;
  }
  return last;
}

Status WriteV1Limit(const ControllerNeed& need, const Limits& limits, const std::string& dir) {
  using cgroupfs::Exists;
  using cgroupfs::Join;
  using cgroupfs::WriteText;
  if (need.controller == "memory") {
    std::string bytes = std::to_string(*limits.memory_bytes.value);
    MCPCELL_TRY(WriteText(Join(dir, "memory.limit_in_bytes"), bytes));
    // memory+swap: without it the cell could push pages to swap and exceed the
    // limit. Must be >= memory.limit_in_bytes, hence written second. Absent
    // when the kernel runs without swap accounting.
    std::string memsw = Join(dir, "memory.memsw.limit_in_bytes");
    if (Exists(memsw)) MCPCELL_TRY(WriteText(memsw, bytes));
    return {};
  }
  if (need.controller == "pids") {
    return WriteText(Join(dir, "pids.max"), std::to_string(*limits.pids.value));
  }
  // cpu: CFS bandwidth, quota µs per period µs (Documentation/scheduler/sched-bwc.rst).
  MCPCELL_TRY(WriteText(Join(dir, "cpu.cfs_period_us"), std::to_string(kCpuPeriodMicros)));
  return WriteText(Join(dir, "cpu.cfs_quota_us"),
                   std::to_string(CpuQuotaMicros(*limits.cpus.value)));
}

}  // namespace

Result<CreatedCgroups> CreateV1Cgroups(const CgroupLayout& layout, const Limits& limits,
                                       const std::string& cell_id,
                                       std::vector<std::string>* warnings) {
  CreatedCgroups out;
  out.version = "v1";
  auto fail = [&](Error e) -> Result<CreatedCgroups> {
    (void)RemoveCellDirs(out.dirs);
    return e;
  };
  for (const auto& need : NeededControllers(limits)) {
    const CgroupMount* mount = layout.V1Mount(need.controller);
    if (mount == nullptr) {
      Status s = Unenforceable(
          need, fmt::format("needs the cgroup {} controller", need.controller),
          fmt::format("no cgroup v1 hierarchy with the {} controller is mounted (see "
                      "/proc/self/mountinfo)", need.controller),
          "enable the controller or drop " + need.flag, warnings);
      if (!s) return fail(s.error());
      continue;
    }
    auto dir = MakeV1CellDir(V1Bases(layout, *mount, need.controller), cell_id);
    if (!dir) {
      if (!IsPermissionErrno(dir.error().err)) return fail(dir.error());
      Status s = Unenforceable(
          need, "needs a writable cgroup",
          fmt::format("cgroup v1 {} controller at {} is not delegated to uid {}", need.controller,
                      mount->mount_point, ::geteuid()),
          DelegationHint(need), warnings);
      if (!s) return fail(s.error());
      continue;
    }
    if (std::find(out.dirs.begin(), out.dirs.end(), *dir) == out.dirs.end()) out.dirs.push_back(*dir);
    Status written = WriteV1Limit(need, limits, *dir);
    if (!written) {
      Status s = Unenforceable(need, "could not be set", written.error().Message(),
                               "check the value or drop " + need.flag, warnings);
      if (!s) return fail(s.error());
      continue;
    }
    if (need.controller == "memory") out.memory_dir = *dir;
  }
  if (out.dirs.empty()) out.version = "none";
  return out;
}

}  // namespace mcpcell::cgroup_internal
