// Removing cgroups that supervisors killed before their janitor ran (or before
// janitors existed) left behind.

#include <dirent.h>
#include <signal.h>

#include <memory>

#include "cell/native/cgroup.h"
#include "cell/native/cgroup_files.h"
#include "cell/native/cgroup_internal.h"
#include "cell/native/cgroup_layout.h"
#include "cell/native/cgroup_parse.h"

namespace mcpcell {
namespace {

// kill(pid, 0) probes existence without signalling; EPERM means it exists but
// is not ours. Only ESRCH says "gone". (A recycled pid makes us keep a stale
// dir a little longer, never remove a live one.)
bool SupervisorAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

int ReapIn(const std::string& parent, int* checked) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(parent.c_str()), ::closedir);
  if (!dir) return 0;
  std::vector<std::string> stale;
  while (struct dirent* e = ::readdir(dir.get())) {
    auto pid = SupervisorPidFromCellId(e->d_name);
    if (pid && checked != nullptr) ++*checked;
    if (!pid || SupervisorAlive(*pid)) continue;
    std::string path = cgroupfs::Join(parent, e->d_name);
    if (!cgroupfs::HasProcesses(path)) stale.push_back(path);
  }
  int removed = 0;
  for (const auto& path : stale) {
    // No retry: a busy dir is simply left for the next run.
    if (::rmdir(path.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace

int ReapStaleCgroups(int* checked) {
  auto layout = DetectCgroupLayout();
  if (!layout) return 0;
  int removed = 0;
  for (const auto& parent : cgroup_internal::CellParentDirs(*layout)) removed += ReapIn(parent, checked);
  return removed;
}

}  // namespace mcpcell
