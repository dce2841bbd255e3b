#include "cell/native/cgroup.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "cell/native/cgroup_files.h"
#include "cell/native/cgroup_internal.h"
#include "cell/native/cgroup_layout.h"
#include "cell/native/cgroup_parse.h"
#include "util/diag.h"

namespace mcpcell {

namespace cgroup_internal {

std::vector<ControllerNeed> NeededControllers(const Limits& limits) {
  std::vector<ControllerNeed> needs;
  if (limits.memory_bytes.value) {
    needs.push_back({"memory", "--memory", "memory limit", limits.memory_bytes.requested});
  }
  if (limits.pids.value) needs.push_back({"pids", "--pids", "pids limit", limits.pids.requested});
  if (limits.cpus.value) needs.push_back({"cpu", "--cpus", "cpu limit", limits.cpus.requested});
  return needs;
}

Status Unenforceable(const ControllerNeed& need, const std::string& headline,
                     const std::string& reason, const std::string& hint,
                     std::vector<std::string>* warnings) {
  if (need.requested) {
    return MakeError(need.flag + " " + headline, "", reason + "; " + hint);
  }
  if (warnings != nullptr) {
    warnings->push_back(fmt::format("default {} not enforced: {}", need.limit_name, reason));
  }
  return {};
}

}  // namespace cgroup_internal

std::string UnenforcedDefaultsWarning(const std::vector<std::string>& warnings, const Limits& limits) {
  if (warnings.empty()) return {};
  std::string out;
  bool memory = false;
  for (const auto& w : warnings) {
    out += (out.empty() ? "" : "; ") + w;
    memory = memory || w.find("memory limit") != std::string::npos;
  }
  std::vector<std::string> still;
  if (limits.pids.value) still.push_back(fmt::format("at most {} processes (RLIMIT_NPROC)", *limits.pids.value));
  still.push_back(fmt::format("{} open files (RLIMIT_NOFILE)", limits.nofile));
  out += ". Still enforced: " + still[0] + (still.size() > 1 ? " and " + still[1] : "");
  if (memory) out += "; memory is not capped";
  return out + ". 'mcpcell doctor' shows how to enforce them";
}

namespace cgroup_internal {

std::string DelegationHint(const ControllerNeed& need) {
  return "run as root, use a cgroup v2 systemd user session (systemd-run --user --scope -p "
         "Delegate=yes ...), or drop " + need.flag;
}

bool IsPermissionErrno(int err) { return err == EACCES || err == EPERM || err == EROFS; }

std::vector<std::string> CellParentDirs(const CgroupLayout& layout) {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  for (std::string_view c : kCellControllers) {
    const CgroupMount* m = layout.V1Mount(c);
    if (m == nullptr) continue;
    add(cgroupfs::Join(m->mount_point, kV1Group));
    if (auto path = V1CgroupPath(layout.self, c)) {
      if (auto dir = CgroupDirUnder(*m, *path)) add(cgroupfs::Join(*dir, kV1Group));
    }
  }
  if (const CgroupMount* m = layout.V2Mount()) {
    add(cgroupfs::Join(m->mount_point, kV2RootGroup));
    if (auto path = UnifiedCgroupPath(layout.self)) {
      if (auto dir = CgroupDirUnder(*m, *path); dir && *dir != m->mount_point) {
        add(cgroupfs::Join(*dir, kV2DelegatedGroup));
        add(cgroupfs::Join(dir->substr(0, dir->find_last_of('/')), kV2DelegatedGroup));
      }
    }
  }
  return out;
}

Status RemoveCellDirs(const std::vector<std::string>& dirs) {
  Status first;
  for (const auto& dir : dirs) {
    // cgroup.kill (v2, Linux 5.14+) SIGKILLs every process in the subtree at
    // once, without the fork races of reading cgroup.procs and killing pids.
    std::string kill_file = cgroupfs::Join(dir, "cgroup.kill");
    if (cgroupfs::HasProcesses(dir) && cgroupfs::Exists(kill_file)) {
      (void)cgroupfs::WriteText(kill_file, "1");
    }
    Status s = cgroupfs::RemoveCgroupDir(dir);
    if (!s && first.ok()) first = s;
  }
  return first;
}

}  // namespace cgroup_internal

std::string NewCellId() {
  std::uint32_t random = 0;
  // getrandom(2) with flags 0 blocks only before the pool is initialised at boot.
  if (::getrandom(&random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
    random = static_cast<std::uint32_t>(::getpid()) * 2654435761u ^
             static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(&random));
  }
  return FormatCellId(::getpid(), random);
}

Result<CellCgroup> CellCgroup::Create(const Limits& limits, const std::string& cell_id,
                                      std::vector<std::string>* warnings) {
  if (!SupervisorPidFromCellId(cell_id)) {
    return MakeError("create cell cgroup", cell_id,
                     "cell id must look like mcpcell-<pid>-<8 hex> (use NewCellId())");
  }
  CellCgroup cg;
  if (cgroup_internal::NeededControllers(limits).empty()) return cg;
  auto layout = DetectCgroupLayout();
  if (!layout) return layout.error();
  Result<cgroup_internal::CreatedCgroups> made = cgroup_internal::CreatedCgroups{};
  switch (layout->kind) {
    case CgroupLayout::Kind::kV1:
      made = cgroup_internal::CreateV1Cgroups(*layout, limits, cell_id, warnings);
      break;
    case CgroupLayout::Kind::kV2:
      made = cgroup_internal::CreateV2Cgroup(*layout, limits, cell_id, warnings);
      break;
    case CgroupLayout::Kind::kNone:
      for (const auto& need : cgroup_internal::NeededControllers(limits)) {
        MCPCELL_TRY(cgroup_internal::Unenforceable(
            need, "needs cgroups", "no cgroup filesystem is mounted (see /proc/self/mountinfo)",
            "mount cgroup2 at /sys/fs/cgroup or drop " + need.flag, warnings));
      }
      break;
  }
  if (!made) return made.error();
  cg.dirs_ = std::move(made->dirs);
  cg.version_ = made->version;
  cg.memory_dir_ = std::move(made->memory_dir);
  return cg;
}

CellCgroup::CellCgroup(CellCgroup&& o) noexcept
    : dirs_(std::exchange(o.dirs_, {})),
      version_(std::exchange(o.version_, "none")),
      memory_dir_(std::exchange(o.memory_dir_, {})),
      janitor_pipe_(std::move(o.janitor_pipe_)) {}

CellCgroup& CellCgroup::operator=(CellCgroup&& o) noexcept {
  if (this != &o) {
    Remove();
    dirs_ = std::exchange(o.dirs_, {});
    version_ = std::exchange(o.version_, "none");
    memory_dir_ = std::exchange(o.memory_dir_, {});
    janitor_pipe_ = std::move(o.janitor_pipe_);
  }
  return *this;
}

CellCgroup::~CellCgroup() { Remove(); }

void CellCgroup::Remove() {
  if (!dirs_.empty()) {
    Status s = cgroup_internal::RemoveCellDirs(dirs_);
    if (!s) {
      // A destructor cannot return it; the janitor (if any) or the next run's
      // ReapStaleCgroups removes what is left.
      Warn(s.error().Message());
    }
    dirs_.clear();
  }
  // After the dirs are gone: the janitor wakes on EOF and finds nothing to do.
  janitor_pipe_.reset();
}

Status CellCgroup::AddProcess(pid_t pid) const {
  for (const auto& dir : dirs_) {
    Status s = cgroupfs::WriteText(cgroupfs::Join(dir, "cgroup.procs"), std::to_string(pid));
    if (!s) {
      Error e = s.error();
      e.what = "move process into cell cgroup (" + e.what + ")";
      return e;
    }
  }
  return {};
}

// Why not AddProcess on v1: a write of another process's pid to cgroup.procs
// takes the kernel's global cgroup_threadgroup_rwsem for writing, whose first
// writer after an idle spell waits for an RCU grace period (percpu-rwsem,
// rcu_sync): 11.7 ms median on this 2-core VM, measured (bench/RESULTS.md),
// on the launch's critical path. A thread writing "0" (itself) to `tasks`
// migrates only itself and skips that lock (kernel/cgroup/cgroup.c,
// cgroup_procs_write_start: "If we migrate a single thread, we don't care
// about threadgroup stability"): 0.005 ms. The kernel checks the credentials
// the file was opened with (cgroup1_procs_write: "using the credentials from
// file open to protect against inherited fd attacks"), the supervisor's here,
// so the cell's PID 1 may do it from inside its user namespace.
Result<std::vector<UniqueFd>> CellCgroup::OpenV1TasksFiles() const {
  std::vector<UniqueFd> fds;
  if (version_ != "v1") return fds;
  for (const auto& dir : dirs_) {
    std::string path = cgroupfs::Join(dir, "tasks");
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd) return ErrnoError("open the cell cgroup's tasks file", path);
    fds.push_back(std::move(fd));
  }
  return fds;
}

int JoinCgroupsAsSelf(const std::vector<int>& tasks_fds, std::size_t* failed) {
  for (std::size_t i = 0; i < tasks_fds.size(); ++i) {
    ssize_t n = ::write(tasks_fds[i], "0", 1);
    if (n != 1) {
      *failed = i;
      return n < 0 ? errno : EIO;
    }
  }
  return 0;
}

std::optional<std::uint64_t> CellCgroup::PeakMemoryBytes() const {
  if (memory_dir_.empty()) return std::nullopt;
  const char* file = version_ == "v2" ? "memory.peak" : "memory.max_usage_in_bytes";
  auto text = cgroupfs::ReadText(cgroupfs::Join(memory_dir_, file));
  if (!text) return std::nullopt;
  try {
    return std::stoull(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace mcpcell
