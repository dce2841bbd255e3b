// cgroups: which version is mounted, and what the caller may control in its
// own cgroup (that is where a cell's cgroup would be created).

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

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

Probe VersionProbe(const CgroupMounts& mounts) {
  std::string version = mounts.Version();
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
  if (mounts.v2) value += "; v2 at " + mounts.v2->mount_point;
  value += ")";
  Probe p{"cgroup version", S::kOk, value, "", ""};
  if (version == "none") {
    p.status = S::kMissing;
    p.detail = "no cgroup filesystem is mounted: memory/pids/cpu limits fall back to rlimits";
    p.fix = "mount cgroup2 on /sys/fs/cgroup (mount -t cgroup2 none /sys/fs/cgroup)";
  }
  return p;
}

const ProcCgroup* FindSelf(const std::vector<ProcCgroup>& self, const std::string& controller) {
  for (const ProcCgroup& c : self) {
    if (controller.empty() ? c.hierarchy == 0 : Contains(c.controllers, controller)) return &c;
  }
  return nullptr;
}

std::vector<std::string> ReadWords(const std::string& path) {
  auto text = ReadHostFile(path);
  return text ? SplitWords(*text) : std::vector<std::string>{};
}

Probe V2Probe(const MountEntry& mount, const std::vector<ProcCgroup>& self, bool hybrid) {
  Probe p{"cgroup v2", S::kOk, "", "", ""};
  const ProcCgroup* own = FindSelf(self, "");
  auto dir = own ? CgroupDir(mount, own->path) : std::nullopt;
  if (!dir) {
    p.status = hybrid ? S::kOk : S::kWarn;
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
  if (hybrid) {
    // On a hybrid host the memory/pids controllers are normally bound to v1.
    p.detail = "hybrid host: limits go through the v1 hierarchies";
    return p;
  }
  p.status = S::kWarn;
  if (!writable) {
    p.detail = "the caller's cgroup is not delegated (" + why + "): memory/pids/cpu limits fall back to rlimits";
    p.fix = "run as root, or start mcpcell in a delegated cgroup: "
            "systemd-run --user --scope -p Delegate=yes mcpcell ...";
  } else {
    p.detail = "the memory and pids controllers are not offered to the caller's cgroup";
    p.fix = "enable them in the parent's cgroup.subtree_control (echo +memory +pids > .../cgroup.subtree_control)";
  }
  return p;
}

Probe V1Probe(const CgroupMounts& mounts, const std::vector<ProcCgroup>& self) {
  Probe p{"cgroup v1", S::kOk, "", "", ""};
  std::vector<std::string> unusable;
  for (const std::string controller : {"memory", "pids", "cpu"}) {
    auto mount = mounts.v1.find(controller);
    const ProcCgroup* own = FindSelf(self, controller);
    std::string state;
    if (mount == mounts.v1.end()) {
      state = "not mounted";
    } else if (auto dir = own ? CgroupDir(mount->second, own->path) : std::nullopt; !dir) {
      state = "own cgroup not visible";
    } else {
      std::string why;
      state = Writable(*dir, &why) ? "writable " + *dir : "not writable (" + why + ")";
    }
    if (state.rfind("writable", 0) != 0 && controller != "cpu") unusable.push_back(controller);
    p.value += (p.value.empty() ? "" : "; ") + controller + ": " + state;
  }
  if (!unusable.empty()) {
    p.status = S::kWarn;
    p.detail = "cannot limit " + Join(unusable) + " through v1: limits fall back to rlimits";
    p.fix = "run as root, or have root create a cgroup you own in each hierarchy "
            "(mkdir /sys/fs/cgroup/memory/$USER && chown -R $USER /sys/fs/cgroup/memory/$USER, "
            "same for pids) and start mcpcell from it";
  }
  return p;
}

}  // namespace

std::vector<Probe> ProbeCgroups() {
  auto mountinfo = ReadHostFile("/proc/self/mountinfo");
  auto proc_cgroup = ReadHostFile("/proc/self/cgroup");
  CgroupMounts mounts = FindCgroupMounts(ParseMountinfo(mountinfo.value_or("")));
  std::vector<ProcCgroup> self = ParseProcCgroup(proc_cgroup.value_or(""));
  std::vector<Probe> out{VersionProbe(mounts)};
  bool hybrid = mounts.Version() == "hybrid";
  if (mounts.v2) out.push_back(V2Probe(*mounts.v2, self, hybrid));
  if (!mounts.v1.empty()) out.push_back(V1Probe(mounts, self));
  return out;
}

}  // namespace mcpcell::doctor
