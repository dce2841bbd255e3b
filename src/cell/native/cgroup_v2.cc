// cgroup v2: one directory for the cell, <base>/mcpcell[.slice]/<cell_id>.
//
// The "no internal processes" rule (Documentation/admin-guide/cgroup-v2.rst):
// a non-root cgroup can enable controllers for its children (cgroup.subtree_control)
// only while it holds no processes itself. Our own cgroup always holds us, so
// unless we are at the root we create the cell beside it, in our parent, when
// that is writable (a systemd Delegate=yes unit or user session delegates the
// subtree above the scope to the user).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cell/native/cgroup_files.h"
#include "cell/native/cgroup_internal.h"

namespace mcpcell::cgroup_internal {
namespace {

struct V2Base {
  std::string dir;    ///< an existing cgroup we try to create our group in
  std::string group;  ///< the name of our group inside it
};

std::string Parent(const std::string& dir) {
  size_t slash = dir.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::set<std::string> Words(const std::string& text) {
  std::set<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find_first_of(" \n", i);
    if (j == std::string::npos) j = text.size();
    if (j > i) out.insert(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::vector<V2Base> V2Bases(const CgroupLayout& layout, const CgroupMount& mount) {
  std::vector<V2Base> bases;
  if (::geteuid() == 0) bases.push_back({mount.mount_point, kV2RootGroup});
  auto path = UnifiedCgroupPath(layout.self);
  auto self_dir = path ? CgroupDirUnder(mount, *path) : std::nullopt;
  if (self_dir && *self_dir != mount.mount_point) {
    if (!cgroupfs::HasProcesses(*self_dir)) bases.push_back({*self_dir, kV2DelegatedGroup});
    bases.push_back({Parent(*self_dir), kV2DelegatedGroup});
  }
  return bases;
}

// Makes sure `dir`'s children get `wanted` (those `dir` itself has); returns them.
Result<std::set<std::string>> EnableForChildren(const std::string& dir,
                                                const std::set<std::string>& wanted) {
  using cgroupfs::Join;
  auto available = cgroupfs::ReadText(Join(dir, "cgroup.controllers"));
  if (!available) return available.error();
  auto enabled = cgroupfs::ReadText(Join(dir, "cgroup.subtree_control"));
  if (!enabled) return enabled.error();
  std::set<std::string> have = Words(*available);
  std::set<std::string> on = Words(*enabled);
  std::set<std::string> result;
  for (const auto& c : wanted) {
    if (have.count(c) == 0) continue;
    if (on.count(c) == 0) MCPCELL_TRY(cgroupfs::WriteText(Join(dir, "cgroup.subtree_control"), "+" + c));
    result.insert(c);
  }
  return result;
}

// <base>/<group>/<cell_id> with the wanted controllers enabled down to it.
// Returns the cell dir and the controllers it got.
Result<std::pair<std::string, std::set<std::string>>> MakeV2CellDir(
    const V2Base& base, const std::string& cell_id, const std::set<std::string>& wanted) {
  auto at_base = EnableForChildren(base.dir, wanted);
  if (!at_base) return at_base.error();
  std::string group = cgroupfs::Join(base.dir, base.group);
  MCPCELL_TRY(cgroupfs::MakeDir(group));
  auto at_group = EnableForChildren(group, *at_base);
  if (!at_group) return at_group.error();
  std::string dir = cgroupfs::Join(group, cell_id);
  if (::mkdir(dir.c_str(), 0755) != 0) return ErrnoError("create cgroup", dir);
  return std::make_pair(dir, *at_group);
}

Status WriteV2Limit(const ControllerNeed& need, const Limits& limits, const std::string& dir) {
  using cgroupfs::Join;
  using cgroupfs::WriteText;
  if (need.controller == "memory") {
    MCPCELL_TRY(WriteText(Join(dir, "memory.max"), std::to_string(*limits.memory_bytes.value)));
    // Without swap.max = 0 the cell could swap out past memory.max; the file
    // is missing when swap accounting is off, and then swap cannot dodge anything.
    std::string swap = Join(dir, "memory.swap.max");
    if (cgroupfs::Exists(swap)) MCPCELL_TRY(WriteText(swap, "0"));
    return {};
  }
  if (need.controller == "pids") {
    return WriteText(Join(dir, "pids.max"), std::to_string(*limits.pids.value));
  }
  return WriteText(Join(dir, "cpu.max"), FormatCpuMax(*limits.cpus.value));
}

}  // namespace

Result<CreatedCgroups> CreateV2Cgroup(const CgroupLayout& layout, const Limits& limits,
                                      const std::string& cell_id,
                                      std::vector<std::string>* warnings) {
  CreatedCgroups out;
  std::vector<ControllerNeed> needs = NeededControllers(limits);
  const CgroupMount* mount = layout.V2Mount();
  if (mount == nullptr || needs.empty()) return out;
  std::set<std::string> wanted;
  for (const auto& n : needs) wanted.insert(n.controller);

  std::optional<std::pair<std::string, std::set<std::string>>> made;
  std::vector<std::string> tried;
  for (const auto& base : V2Bases(layout, *mount)) {
    auto r = MakeV2CellDir(base, cell_id, wanted);
    if (r) {
      made = *r;
      break;
    }
    // EACCES/EPERM: not ours; EBUSY: the base holds processes (internal-process rule).
    if (!IsPermissionErrno(r.error().err) && r.error().err != EBUSY) return r.error();
    tried.push_back(r.error().Message());
  }
  if (!made) {
    std::string where = tried.empty() ? mount->mount_point : fmt::format("{}", fmt::join(tried, "; "));
    for (const auto& need : needs) {
      MCPCELL_TRY(Unenforceable(
          need, "needs a writable cgroup",
          fmt::format("cgroup v2 at {} is not delegated to uid {} ({})", mount->mount_point,
                      ::geteuid(), where),
          DelegationHint(need), warnings));
    }
    return out;
  }
  out.version = "v2";
  out.dirs.push_back(made->first);
  for (const auto& need : needs) {
    Status s;
    if (made->second.count(need.controller) == 0) {
      s = Unenforceable(need, fmt::format("needs the cgroup v2 {} controller", need.controller),
                        fmt::format("it is not in cgroup.controllers above {}", made->first),
                        "ask for it to be delegated (systemd: Delegate=yes) or drop " + need.flag,
                        warnings);
    } else if (Status w = WriteV2Limit(need, limits, made->first); !w) {
      s = Unenforceable(need, "could not be set", w.error().Message(),
                        "check the value or drop " + need.flag, warnings);
    } else if (need.controller == "memory") {
      out.memory_dir = made->first;
    }
    if (!s) {
      (void)RemoveCellDirs(out.dirs);
      return s.error();
    }
  }
  return out;
}

}  // namespace mcpcell::cgroup_internal
