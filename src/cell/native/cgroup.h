#pragma once
// Resource limits through cgroups, v2 and v1 (hybrid machines included), plus rlimits.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cell_spec.h"
#include "util/error.h"
#include "util/unique_fd.h"

namespace mcpcell {

class CellCgroup;
Status StartCgroupJanitor(const CellCgroup& cgroup, int cell_mnt_ns = -1);

/// A fresh cell id, "mcpcell-<supervisor pid>-<8 random hex digits>"; also the
/// name of the cell's cgroup directories, so ReapStaleCgroups can tell from the
/// name whether the supervisor that made them still runs.
std::string NewCellId();

/// One stderr line for every default limit Create could not enforce (its
/// `warnings`), saying what still holds: the process count is capped by
/// RLIMIT_NPROC (rlimits.cc), memory is not capped at all. "" when none.
std::string UnenforcedDefaultsWarning(const std::vector<std::string>& warnings, const Limits& limits);

/// The cgroup(s) of one cell. Created before the cell's first process runs,
/// removed on destruction (after the cell's processes are gone). On v1 one
/// directory per controller; on v2 one directory.
class CellCgroup {
 public:
  /// Creates cgroups for `limits`. A limit with requested=true that cannot be
  /// enforced (no delegation, controller missing) is an Error naming what is
  /// missing; a default one adds a line to *warnings and is skipped.
  static Result<CellCgroup> Create(const Limits& limits, const std::string& cell_id,
                                   std::vector<std::string>* warnings);

  CellCgroup(CellCgroup&&) noexcept;
  CellCgroup& operator=(CellCgroup&&) noexcept;
  CellCgroup(const CellCgroup&) = delete;
  CellCgroup& operator=(const CellCgroup&) = delete;
  ~CellCgroup();

  /// Moves `pid` into every cgroup of this cell.
  Status AddProcess(pid_t pid) const;
  /// cgroup v1: each dir's `tasks` file, opened for writing (O_CLOEXEC), in
  /// the order of dirs(), for the cell's PID 1 to join by writing "0" to each
  /// (JoinCgroupsAsSelf). Empty on v2 and without cgroups: there the cell is
  /// born in its cgroup (CLONE_INTO_CGROUP) or moved by AddProcess.
  Result<std::vector<UniqueFd>> OpenV1TasksFiles() const;
  /// Peak memory use in bytes, where the kernel reports it (v2 memory.peak,
  /// v1 memory.max_usage_in_bytes); nullopt without a memory cgroup.
  std::optional<std::uint64_t> PeakMemoryBytes() const;
  /// True when the cell is in at least one cgroup (something is enforced).
  bool active() const { return !dirs_.empty(); }
  /// "v1", "v2" or "none".
  const std::string& version() const { return version_; }
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  friend Status StartCgroupJanitor(const CellCgroup& cgroup, int cell_mnt_ns);
  CellCgroup() = default;
  void Remove();

  std::vector<std::string> dirs_;
  std::string version_ = "none";
  std::string memory_dir_;  ///< the dir holding the memory controller's files, if any
  /// Write end of the janitor's pipe (O_CLOEXEC, never passed into the cell).
  /// Closing it, by destruction or by the kernel when the supervisor dies,
  /// tells the janitor to clean up. Mutable: it is supervision state attached
  /// by StartCgroupJanitor, not part of the cgroup's value.
  mutable UniqueFd janitor_pipe_;
};

/// Moves the calling thread, the cell's single-threaded PID 1 before it has
/// children, into every cgroup whose v1 `tasks` file is open in `tasks_fds`
/// (CellCgroup::OpenV1TasksFiles). Async-signal-safe: syscalls only.
/// Returns 0, or the errno of the first write that failed and its index in *failed.
int JoinCgroupsAsSelf(const std::vector<int>& tasks_fds, std::size_t* failed);

/// Removes empty cgroups left by mcpcell supervisors that no longer run
/// (their name carries the supervisor's pid). Returns how many were removed;
/// adds the number of cell cgroups it looked at to *checked (for `mcpcell gc`).
int ReapStaleCgroups(int* checked = nullptr);

/// Sets every rlimit of the calling process (the server, before exec) from a
/// fixed table (rlimits.cc) and `limits` (RLIMIT_NOFILE, RLIMIT_CORE, and
/// RLIMIT_NPROC as a pids fallback, which Linux counts per user namespace):
/// nothing of the caller's passes in but a lower hard limit.
Status ApplyRlimits(const Limits& limits);

/// Undoes what a privileged caller's scheduling would lend the server:
/// a real-time policy becomes SCHED_OTHER, a negative nice 0, the real-time
/// I/O class "none". Lower settings (nice 10, SCHED_IDLE, CPU affinity) stay.
Status ResetScheduling();

}  // namespace mcpcell

namespace mcpcell {

/// Forks a small detached janitor that outlives a supervisor killed with -9:
/// it waits until the supervisor is gone (pipe EOF) and the cell's cgroups are
/// empty, removes them, and exits. Call after Create, before the cell starts.
/// `cell_mnt_ns` (-1: none), an fd of the cell's mount namespace, is kept open
/// by the janitor until it exits: the last reference to the namespace is then
/// the janitor's, so the namespace's teardown (every mount unmounted, then an
/// RCU grace period the kernel waits out: 0.7-2.8 ms measured) runs at the
/// janitor's exit, after the supervisor's, and not in PID 1's exit, which the
/// supervisor and so mcpcell's caller wait for. No process of the cell outlives
/// PID 1 either way (the PID namespace's end kills them); only the mounts do.
Status StartCgroupJanitor(const CellCgroup& cgroup, int cell_mnt_ns);

}  // namespace mcpcell
