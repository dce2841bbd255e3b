#pragma once
// Pure parsers for the kernel's cgroup text files (/proc/self/cgroup,
// /proc/self/mountinfo) and the small formatting rules of the limit files.
// No I/O here, so every rule can be unit-tested with literal text.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcpcell {

/// One line of /proc/<pid>/cgroup: "hierarchy-ID:controller-list:cgroup-path"
/// (cgroups(7)). The v2 line is "0::/path" (id 0, no controllers).
struct ProcCgroupEntry {
  int hierarchy_id = -1;
  std::vector<std::string> controllers;  ///< e.g. {"cpu","cpuacct"}, {"name=systemd"}, {} for v2
  std::string path;                      ///< relative to the hierarchy's (namespace) root
};

/// Parses the whole of /proc/<pid>/cgroup; malformed lines are skipped.
std::vector<ProcCgroupEntry> ParseProcCgroup(std::string_view text);
/// The v2 path ("0::/path"), if the process is in a v2 hierarchy.
std::optional<std::string> UnifiedCgroupPath(const std::vector<ProcCgroupEntry>& entries);
/// The path in the v1 hierarchy that carries `controller`.
std::optional<std::string> V1CgroupPath(const std::vector<ProcCgroupEntry>& entries,
                                        std::string_view controller);

/// A cgroup filesystem mount, from one /proc/self/mountinfo line (proc(5)).
struct CgroupMount {
  std::string mount_point;               ///< unescaped ("\040" → " ")
  std::string root = "/";                ///< the subtree of the hierarchy mounted there
  bool v2 = false;                       ///< fstype cgroup2
  std::vector<std::string> controllers;  ///< v1: super options such as "memory"; v2: empty
  bool HasController(std::string_view name) const;
};

/// Parses one mountinfo line; nullopt unless its fstype is cgroup or cgroup2.
std::optional<CgroupMount> ParseCgroupMountLine(std::string_view line);
/// All cgroup and cgroup2 mounts in a mountinfo text, in order.
std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);

/// Directory of cgroup `path` (as in /proc/self/cgroup) under `mount`, or
/// nullopt when the path lies outside the subtree mounted there.
std::optional<std::string> CgroupDirUnder(const CgroupMount& mount, const std::string& path);

/// Period used for every CPU limit (the kernel's default CFS period, 100 ms).
inline constexpr std::uint64_t kCpuPeriodMicros = 100000;
/// CFS quota in µs for `cpus` cores per `period_us`, at least 1000 µs (the
/// kernel refuses quotas under 1 ms).
std::uint64_t CpuQuotaMicros(double cpus, std::uint64_t period_us = kCpuPeriodMicros);
/// Text for v2 cpu.max: "<quota> <period>", e.g. 1.5 cores → "150000 100000".
std::string FormatCpuMax(double cpus, std::uint64_t period_us = kCpuPeriodMicros);

/// Supervisor pid in a cell id "mcpcell-<pid>-<8 hex>"; nullopt if `name` is not one.
std::optional<pid_t> SupervisorPidFromCellId(std::string_view name);
/// Builds "mcpcell-<pid>-<hex>" with `random` printed as 8 lowercase hex digits.
std::string FormatCellId(pid_t supervisor, std::uint32_t random);

}  // namespace mcpcell
