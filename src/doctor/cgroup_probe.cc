// cgroups: which version is mounted, and what the caller may control in its
// own cgroup (that is where a cell's cgroup would be created). The layout comes
// from the cgroup module itself, so doctor reports what cells will really use.

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "cell/native/cgroup_layout.h"
#include "doctor/checks.h"
#include "doctor/host.h"
#include "doctor/parse.h"

namespace mcpcell::doctor {
namespace {

using S = Probe::Status;

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out.empty() ? "(none)" : out;
}

// Creating a child cgroup needs write access to the directory; moving a process
// into it needs write access to cgroup.procs (cgroups(7), "Delegation" in cgroup-v2.rst).
bool Writable(const std::string& dir, std::string* why) {
  for (const std::string& path : {dir, dir + "/cgroup.procs"}) {
    if (::access(path.c_str(), W_OK) != 0) {
      *why = path + ": " + ErrnoText(errno);
      return false;
    }
  }
  return true;
}

std::vector<std::string> ReadWords(const std::string& path) {
  auto text = ReadHostFile(path);
  return text ? SplitWords(*text) : std::vector<std::string>{};
}

Probe VersionProbe(const CgroupLayout& layout) {
  bool v1 = false, v2 = false;
  for (const CgroupMount& m : layout.mounts) (m.v2 ? v2 : v1) = true;
  std::string version = v1 && v2 ? "hybrid" : v2 ? "v2" : v1 ? "v1" : "none";
  struct statfs fs {};
  std::string root_fs = "not mounted";
  if (::statfs(kCgroupRoot, &fs) == 0) {
    // cgroup2 at /sys/fs/cgroup is a pure v2 host; a tmpfs there holds v1 (and maybe "unified").
    if (fs.f_type == CGROUP2_SUPER_MAGIC) root_fs = "cgroup2";
    else if (fs.f_type == TMPFS_MAGIC) root_fs = "tmpfs";
    else if (fs.f_type == CGROUP_SUPER_MAGIC) root_fs = "cgroup";
    else root_fs = "other";
  }
  std::string value = version + " (" + kCgroupRoot + " is " + root_fs;
  if (const CgroupMount* m = layout.V2Mount(); m != nullptr && version == "hybrid") {
    value += "; v2 at " + m->mount_point;
  }
  value += "); cells use " + ToString(layout.kind);
  Probe p{"cgroup version", S::kOk, value, "", ""};
  if (layout.kind == CgroupLayout::Kind::kNone) {
    p.status = S::kMissing;
    p.detail = "no cgroup filesystem is mounted: the process limit falls back to RLIMIT_NPROC; memory and cpu are not limited";
    p.fix = "mount cgroup2 on /sys/fs/cgroup (mount -t cgroup2 none /sys/fs/cgroup)";
  }
  return p;
}

// `informational`: cells use v1 here, so what v2 lacks is not a problem.
Probe V2Probe(const CgroupLayout& layout, const CgroupMount& mount, bool informational) {
  Probe p{"cgroup v2", S::kOk, "", "", ""};
  auto path = UnifiedCgroupPath(layout.self);
  auto dir = path ? CgroupDirUnder(mount, *path) : std::nullopt;
  if (!dir) {
    p.status = informational ? S::kOk : S::kWarn;
    p.value = "own cgroup not visible under " + mount.mount_point;
    p.detail = "the caller's cgroup lies outside this mount (cgroup namespace or sub-mount)";
    return p;
  }
  std::vector<std::string> controllers = ReadWords(*dir + "/cgroup.controllers");
  std::vector<std::string> subtree = ReadWords(*dir + "/cgroup.subtree_control");
  std::string why;
  bool writable = Writable(*dir, &why);
  p.value = *dir + ": " + (writable ? "writable" : "not writable") + "; controllers: " +
            Join(controllers) + "; subtree_control: " + Join(subtree);
  bool has_limits = Contains(controllers, "memory") && Contains(controllers, "pids");
  if (writable && has_limits) return p;
  if (informational) {
    // On a hybrid host the memory/pids controllers are bound to v1 (one hierarchy each).
    p.detail = "hybrid host: limits go through the v1 hierarchies";
    return p;
  }
  p.status = S::kWarn;
  if (!writable) {
    p.detail = "the caller's cgroup is not delegated (" + why +
               "): the process limit falls back to RLIMIT_NPROC; memory and cpu are not limited";
    p.fix = "run as root, or start mcpcell in a delegated cgroup: "
            "systemd-run --user --scope -p Delegate=yes mcpcell ...";
  } else {
    p.detail = "the memory and pids controllers are not offered to the caller's cgroup";
    p.fix = "enable them in the parent's cgroup.subtree_control "
            "(echo +memory +pids > .../cgroup.subtree_control)";
  }
  return p;
}

Probe V1Probe(const CgroupLayout& layout) {
  Probe p{"cgroup v1", S::kOk, "", "", ""};
  std::vector<std::string> unusable;
  for (std::string_view controller : kCellControllers) {
    const CgroupMount* mount = layout.V1Mount(controller);
    auto path = V1CgroupPath(layout.self, controller);
    std::string state;
    bool ok = false;
    if (mount == nullptr) {
      state = "not mounted";
    } else if (auto dir = path ? CgroupDirUnder(*mount, *path) : std::nullopt; !dir) {
      state = "own cgroup not visible";
    } else {
      std::string why;
      ok = Writable(*dir, &why);
      state = ok ? "writable " + *dir : "not writable (" + why + ")";
      // Cells go to <hierarchy>/mcpcell first (V1Bases): one given to the user counts.
      std::string given = mount->mount_point + "/mcpcell";
      std::string unused;
      if (!ok && Writable(given, &unused)) {
        ok = true;
        state = "writable " + given;
      }
    }
    if (!ok && controller != "cpu") unusable.emplace_back(controller);
    p.value += (p.value.empty() ? "" : "; ") + std::string(controller) + ": " + state;
  }
  if (!unusable.empty()) {
    p.status = S::kWarn;
    p.detail = "cannot limit " + Join(unusable) + " through v1: the process limit falls back to RLIMIT_NPROC; memory and cpu are not limited";
    // mcpcell makes each cell's v1 cgroup in <hierarchy>/mcpcell first
    // (cgroup_v1.cc V1Bases); a directory the user owns there is enough: the
    // kernel gives new child cgroups to their creator (cgroup_kn_set_ugid),
    // and v1 lets a uid move its own processes (cgroup1_procs_write).
    p.fix = "run as root, or have root give you the directory mcpcell uses in each hierarchy, once: "
            "mkdir -p /sys/fs/cgroup/memory/mcpcell /sys/fs/cgroup/pids/mcpcell && "
            "chown $USER /sys/fs/cgroup/memory/mcpcell /sys/fs/cgroup/pids/mcpcell";
  }
  return p;
}

}  // namespace

std::vector<Probe> ProbeCgroups() {
  auto layout = DetectCgroupLayout();
  if (!layout.ok()) return {{"cgroup version", S::kWarn, "unknown", layout.error().Message(), ""}};
  std::vector<Probe> out{VersionProbe(*layout)};
  bool any_v1 = false;
  for (const CgroupMount& m : layout->mounts) any_v1 = any_v1 || !m.v2;
  if (const CgroupMount* v2 = layout->V2Mount()) {
    out.push_back(V2Probe(*layout, *v2, layout->kind != CgroupLayout::Kind::kV2));
  }
  if (any_v1) out.push_back(V1Probe(*layout));
  return out;
}

}  // namespace mcpcell::doctor
